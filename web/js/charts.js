// Draws figure specs from plots.js into graph divs with Plotly. The div itself becomes the
// Plotly graph div, so `div.data` holds the traces. `data-state` on the div says 'loading',
// 'ready' or 'error'.
//
// Plotly (1.5 MB) is loaded on first use, not by index.html: a page without plots (the
// studies list, workers) never parses it, and a study page fetches its data while Plotly
// downloads. Its URL, content-hashed by the server, is in <meta name="layerlab-plotly">. The
// offline report inlines Plotly before these modules, so there window.Plotly is already set.

import { h } from './dom.js';
import { PLOT_CONFIG } from './plots.js';

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
// (uirevision) until the figure's kind changes (e.g. from the empty state to data).
export async function renderFigure(div, fig, { revision = 'keep' } = {}) {
  const layout = { ...fig.layout };
  const kind = fig.data.length ? 'data' : 'empty';
  layout.uirevision = `${revision}:${kind}`;
  if (layout.height) {
    div.style.height = `${layout.height}px`;
  } else if (div.style.height) {
    div.style.height = '';
  }
  layout.autosize = true;
  const Plotly = await loadPlotly();
  await Plotly.react(div, fig.data, layout, CONFIG);
  div.dataset.state = 'ready';
  div.dataset.traces = String(fig.data.length);
  div.closest('.card')?.classList.remove('is-loading');
}

// A card holding one plot: title, subtitle, optional controls (in the head) and extra
// content (above the plot). `div` is the graph div, `id` its id.
export function plotCard({ id, title, subtitle, controls, wide, extra }) {
  const titleEl = h('h2', { class: 'card-title' }, title);
  const subEl = h('div', { class: 'card-sub' }, subtitle || '');
  const div = h('div', { id, class: 'plot', dataset: { state: 'loading' } });
  const card = h('section', { class: `card plot-card is-loading${wide ? ' wide' : ''}` },
    h('div', { class: 'card-head' }, h('div', null, titleEl, subEl), controls || null),
    extra || null,
    h('div', { class: 'plot-wrap' }, div, h('div', { class: 'plot-loading' }, h('span', { class: 'spinner' }), 'loading…')));
  return { card, div, titleEl, subEl };
}

export function markLoading(div) {
  if (!div.dataset.state) div.dataset.state = 'loading';
  div.closest('.card')?.classList.add('is-loading');
}

export function markError(div) {
  div.dataset.state = 'error';
  div.closest('.card')?.classList.remove('is-loading');
}

export function purge(div) {
  try {
    if (window.Plotly) window.Plotly.purge(div);
  } catch {
    /* already gone */
  }
}
