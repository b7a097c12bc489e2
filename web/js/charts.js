// Draws figure specs from plots.js into graph divs. Figures of scatter traces (every plot of
// the study page) are drawn on a canvas 2D by components/figure.js; others (the workers
// page's bars and time axes) by Plotly. Either way `div.data` holds the traces and
// `data-state` on the div says 'loading', 'ready' or 'error'; `data-traces` counts the traces.
// A canvas figure also has `div.pointPosition(trace, k)` (where a point is drawn, for tests)
// and dispatches `plotclick` on the div (detail {traceIndex, pointIndex, trace, customdata}).
//
// Plotly (1.5 MB) is loaded on first use, not by index.html: a page without Plotly figures
// (the studies list, the study page) never parses it. Its URL, content-hashed by the server,
// is in <meta name="layerlab-plotly">. The offline report inlines Plotly before these
// modules, so there window.Plotly is already set.

import { h } from './dom.js';
import { PLOT_CONFIG } from './plots.js';
import { canDraw } from './figure.js';
import { FigureView } from './components/figure.js';

// WebGL traces (scattergl; the report's parcoords) at the screen's pixel ratio, not Plotly's default 2:
// four times fewer pixels to fill on ordinary screens and in software rendering.
const CONFIG = { ...PLOT_CONFIG, plotGlPixelRatio: Math.min(2, Math.max(1, window.devicePixelRatio || 1)) };

let loading = null;

// Resolves to window.Plotly, adding its script to the page the first time.
export function loadPlotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!loading) {
    const src = document.querySelector('meta[name="layerlab-plotly"]')?.content || '/vendor/plotly-gl2d.min.js';
    loading = new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = src;
      s.async = true;
      s.onload = () => (window.Plotly ? resolve(window.Plotly) : reject(new Error(`Plotly did not load (${src})`)));
      s.onerror = () => reject(new Error(`Plotly did not load (${src})`));
      document.head.append(s);
    });
    loading.catch(() => { loading = null; }); // a later plot tries again
  }
  return loading;
}

// Renders (or updates in place) a figure. User zoom and legend clicks survive live updates
// (uirevision; on the canvas: the legend's hidden groups) until the figure's kind changes
// (e.g. from the empty state to data).
export async function renderFigure(div, fig, { revision = 'keep' } = {}) {
  const kind = fig.data.length ? 'data' : 'empty';
  if (fig.layout.height) {
    div.style.height = `${fig.layout.height}px`;
  } else if (div.style.height) {
    div.style.height = '';
  }
  if (canDraw(fig)) {
    if (div._fullLayout) purgePlotly(div);
    const view = div.figureView || new FigureView(div);
    view.set(fig, `${revision}:${kind}`);
  } else {
    if (div.figureView) {
      div.figureView.destroy();
      div.classList.remove('figure-host');
      div.replaceChildren();
      delete div.data;
      delete div.layout;
    }
    const layout = { ...fig.layout, uirevision: `${revision}:${kind}`, autosize: true };
    const Plotly = await loadPlotly();
    await Plotly.react(div, fig.data, layout, CONFIG);
  }
  div.dataset.state = 'ready';
  div.dataset.traces = String(fig.data.length);
  div.closest('.card')?.classList.remove('is-loading');
}

// A card holding one plot: title, subtitle, optional controls (in the head) and extra
// content (above the plot). `div` is the graph div, `id` its id.
export function plotCard({ id, title, subtitle, controls, wide, extra }) {
  const titleEl = h('h2', { class: 'card-title' }, title);
  const subEl = h('div', { class: 'card-sub' }, subtitle || '');
  // What the plot counts (analysed trials, and those left out), filled in with its data.
  const countEl = h('div', { class: 'card-sub plot-count', dataset: { role: 'count' } }, '');
  const div = h('div', { id, class: 'plot', dataset: { state: 'loading' } });
  const card = h('section', { class: `card plot-card is-loading${wide ? ' wide' : ''}` },
    h('div', { class: 'card-head' }, h('div', null, titleEl, subEl, countEl), controls || null),
    extra || null,
    h('div', { class: 'plot-wrap' }, div, h('div', { class: 'plot-loading' }, h('span', { class: 'spinner' }), 'loading…')));
  return { card, div, titleEl, subEl, countEl };
}

export function markLoading(div) {
  if (!div.dataset.state) div.dataset.state = 'loading';
  div.closest('.card')?.classList.add('is-loading');
}

export function markError(div) {
  div.dataset.state = 'error';
  div.closest('.card')?.classList.remove('is-loading');
}

function purgePlotly(div) {
  try {
    if (window.Plotly) window.Plotly.purge(div);
  } catch {
    /* already gone */
  }
  div.replaceChildren();
}

export function purge(div) {
  if (div.figureView) div.figureView.destroy();
  if (div._fullLayout) purgePlotly(div);
}
