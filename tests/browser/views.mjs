// The study page's views, and how a test brings them into sight: the page draws a view
// only once it comes near the viewport (web/js/pages/study.js), so a check of every view
// scrolls through the page as a reader would.

export const VIEW_IDS = ['plot-metric', 'plot-time', 'plot-history', 'plot-pareto', 'plot-parcoords', 'plot-curves'];

// Runs in the page: is the plot div `id` drawn (with at least one trace when `traces`)? A
// figure (web/js/components/figure.js) keeps its traces in `div.data`, as a Plotly graph div
// does. The parallel coordinates (web/js/components/parallel.js) have no traces: drawn when
// they say so, holding data when they drew lines (data-drawn).
export function viewFilled({ id, traces }) {
  const el = document.getElementById(id);
  if (el && el.dataset.rows !== undefined) {
    return el.dataset.state === 'ready' && el.dataset.drawn !== undefined && (!traces || Number(el.dataset.drawn) > 0);
  }
  return Boolean(el && el.dataset.state === 'ready' && Array.isArray(el.data) && (!traces || el.data.length > 0));
}

// Scrolls each view into sight in page order, waiting until it is drawn before the next,
// then the trials table. Throws naming the view that did not draw within timeoutMs.
export async function showEveryView(page, { timeoutMs = 40_000, traces = false } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (const id of VIEW_IDS) {
    await page.evaluate((i) => document.getElementById(i)?.closest('.card')?.scrollIntoView({ block: 'nearest' }), id);
    try {
      await page.waitForFunction(viewFilled, { id, traces }, { timeout: Math.max(1, deadline - Date.now()), polling: 'raf' });
    } catch {
      const state = await page.evaluate((i) => `${document.getElementById(i)?.dataset.state ?? 'missing'}`, id).catch(() => '?');
      throw new Error(`#${id} was not drawn within ${timeoutMs / 1000} s of being scrolled into sight (state ${state})`);
    }
  }
  await page.evaluate(() => document.getElementById('trials-table')?.scrollIntoView({ block: 'nearest' }));
}
