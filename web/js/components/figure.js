// A figure spec of web/js/plots.js drawn on a canvas 2D (no Plotly): the study page's metric,
// training time, optimisation history, accuracy against cost and learning curves. The pure
// half (subplots, ranges, ticks, hover text, nearest point, markers as pixels) is
// web/js/figure.js, unit-tested in Node; this file holds the DOM: the canvas, the HTML
// legend (a click hides or shows a legend group; kept across live updates of the same
// revision), the hover label (text nodes only), the click on a point, and zoom (drag a box,
// or along one axis, in a subplot; a double click or 'reset zoom' undoes it; kept across
// live updates of the same revision, as Plotly's uirevision keeps it).
//
// The host div keeps what tests and callers read of a Plotly graph div: `div.data` (the
// figure's traces) and `div.layout`. A click on a point dispatches a `plotclick` event on
// the div, detail {traceIndex, pointIndex, trace, customdata}. For tests, the documented way
// from data to pixels: `div.pointPosition(traceIndex, pointIndex)` gives {x, y}, the point's
// centre in CSS pixels from the div's top left corner (null when it is not drawn).

import { h, fill } from '../dom.js';
import { FONT } from '../plots.js';
import {
  HOVER_DISTANCE, axisRange, dragZoom, axisTicks, axisType, blendMarkers, categories, dashPattern, discMask, fitTicks, hoverLines,
  legendItems, makeScale, nearestPoint, paperToPixel, parseColour, parseMarkup, markupText, subplotBox, subplots,
  toUnit, visibleTraces,
} from '../figure.js';

const INK = '#1f2933';
const GRID = '#e8ecf1';
const ZERO = '#d5dbe3';
const TICK = '#c5cdd8';
const TICK_LEN = 5;
const RASTER_MIN = 300; // markers-only traces with more points are blended as pixels

export class FigureView {
  constructor(div) {
    this.div = div;
    this.fig = { data: [], layout: {} };
    this.hidden = new Set(); // legend keys hidden by a click
    this.zoom = new Map(); // subplot ('x2 y2') -> {x?: [lo, hi], y?: [lo, hi]} in axis units
    this.revision = null;
    this.points = []; // per drawn trace: {trace, px, py} in CSS px, for hover and click
    this.size = { w: 0, h: 0, dpr: 0 };
    this.frame = 0;
    this.canvas = h('canvas', { class: 'figure-canvas', role: 'img' });
    this.tip = h('div', { class: 'figure-tip', hidden: true });
    this.ring = h('div', { class: 'figure-ring', hidden: true });
    this.band = h('div', { class: 'figure-zoom-band', hidden: true });
    this.area = h('div', { class: 'figure-area' }, this.canvas, this.band, this.ring, this.tip);
    this.legend = h('div', { class: 'figure-legend' });
    fill(div, this.area, this.legend);
    div.classList.add('figure-host');
    div.figureView = this;
    div.pointPosition = (t, k) => this.pointPosition(t, k);
    this.canvas.addEventListener('pointermove', (e) => this.onMove(e));
    this.canvas.addEventListener('pointerleave', () => this.hideHover());
    this.canvas.addEventListener('pointerdown', (e) => this.onDown(e));
    this.canvas.addEventListener('pointerup', (e) => this.onUp(e));
    this.canvas.addEventListener('pointercancel', () => { this.down = null; this.band.hidden = true; });
    this.canvas.addEventListener('dblclick', () => this.resetZoom());
    this.resizer = typeof ResizeObserver === 'function' ? new ResizeObserver(() => {
      if (this.area.clientWidth !== this.size.w || this.area.clientHeight !== this.size.h) this.schedule();
    }) : null;
    this.resizer?.observe(this.area);
  }

  // Shows a figure and draws it at once. Legend clicks are kept while `revision` stays the
  // same (plots.js's figures: the same kind of figure, live data).
  set(fig, revision = 'keep') {
    if (revision !== this.revision) {
      this.hidden.clear();
      this.zoom.clear();
    }
    this.revision = revision;
    this.fig = fig;
    this.div.data = fig.data;
    this.div.layout = fig.layout;
    this.renderLegend();
    this.draw();
    if (this.hit && this.pointer) this.hover(this.pointer); // the label follows the new data
  }

  resetZoom() {
    if (!this.zoom.size) return;
    this.zoom.clear();
    this.renderLegend();
    this.hideHover();
    this.draw();
  }

  destroy() {
    this.resizer?.disconnect();
    this.dprQuery?.removeEventListener('change', this.onDpr);
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
    if (this.div.figureView === this) {
      delete this.div.figureView;
      delete this.div.pointPosition;
    }
  }

  schedule() {
    if (!this.frame) {
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.draw();
      });
    }
  }

  // ---- the legend -------------------------------------------------------------------------
  renderLegend() {
    const items = legendItems(this.fig);
    const title = (this.fig.layout.legend || {}).title;
    const titleText = title && (typeof title === 'string' ? title : title.text);
    fill(this.legend,
      items.length && titleText ? h('span', { class: 'figure-legend-title' }, markupText(titleText)) : null,
      items.map((it) => h('button', {
        type: 'button',
        class: `figure-legend-item${this.hidden.has(it.key) ? ' off' : ''}`,
        'aria-pressed': String(!this.hidden.has(it.key)),
        title: 'click to hide or show',
        dataset: { key: it.key },
        onclick: () => this.toggle(it.key),
      }, swatch(it), markupText(it.name))),
      this.zoom.size ? h('button', { type: 'button', class: 'link small figure-reset', onclick: () => this.resetZoom() }, 'reset zoom') : null);
    this.legend.hidden = items.length === 0 && this.zoom.size === 0;
  }

  toggle(key) {
    if (this.hidden.has(key)) this.hidden.delete(key);
    else this.hidden.add(key);
    this.renderLegend();
    this.hideHover();
    this.draw();
  }

  // ---- drawing ------------------------------------------------------------------------------
  draw() {
    const w = this.area.clientWidth;
    const ht = this.area.clientHeight;
    const fig = this.fig;
    const d = this.div.dataset;
    if (!w || !ht) return; // not laid out: the resize observer draws it later
    const dpr = Math.min(3, Math.max(1, window.devicePixelRatio || 1));
    if (w !== this.size.w || ht !== this.size.h || dpr !== this.size.dpr) {
      this.canvas.width = Math.round(w * dpr);
      this.canvas.height = Math.round(ht * dpr);
      if (dpr !== this.size.dpr && typeof matchMedia === 'function') {
        // redraw when the pixel ratio changes (zoom, another screen); no resize says so
        this.dprQuery?.removeEventListener('change', this.onDpr);
        this.onDpr ??= () => this.schedule();
        this.dprQuery = matchMedia(`(resolution: ${dpr}dppx)`);
        this.dprQuery.addEventListener('change', this.onDpr);
      }
      this.size = { w, h: ht, dpr };
    }
    const ctx = this.canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const layout = fig.layout || {};
    ctx.fillStyle = layout.paper_bgcolor || '#ffffff';
    ctx.fillRect(0, 0, w, ht);
    const font = layout.font || {};
    const fontSize = font.size || 12;
    const margin = { l: 60, r: 20, t: 30, b: 50, ...(layout.margin || {}) };
    const data = fig.data || [];
    const shown = new Set(visibleTraces(data, this.hidden));
    const subs = subplots(fig);

    // each subplot's axes: type, categories, range, from the traces on them
    const axes = subs.map((s) => {
      const ts = s.traces.filter((i) => shown.has(i));
      const use = ts.length ? ts : s.traces;
      const xType = axisType(s.xa, use.flatMap((i) => (data[i].x || []).slice(0, 1)));
      const yType = axisType(s.ya, use.flatMap((i) => (data[i].y || []).slice(0, 1)));
      const xCats = xType === 'category' ? categories(s.xa, s.traces.map((i) => data[i].x)) : [];
      const yCats = yType === 'category' ? categories(s.ya, s.traces.map((i) => data[i].y)) : [];
      const xu = toUnit(xType, xCats);
      const yu = toUnit(yType, yCats);
      const units = use.map((i) => {
        const t = data[i];
        const xs = Float64Array.from(t.x || [], xu);
        const ys = Float64Array.from(t.y || [], yu);
        const err = t.error_y && t.error_y.visible !== false && t.error_y.array;
        let lo = ys;
        let hi = ys;
        if (err && yType === 'linear') {
          lo = ys.map((v, k) => v - (isFinite(err[k]) ? err[k] : 0));
          hi = ys.map((v, k) => v + (isFinite(err[k]) ? err[k] : 0));
        }
        return { xs, lo, hi, markers: (t.mode || 'markers').includes('markers') };
      });
      const markers = units.some((u) => u.markers);
      const zoom = this.zoom.get(`${s.x} ${s.y}`) || {};
      return {
        xType, yType, xCats, yCats, xu, yu,
        xRange: zoom.x || axisRange(s.xa, xType, units.map((u) => u.xs), { markers }),
        yRange: zoom.y || axisRange(s.ya, yType, units.flatMap((u) => [u.lo, u.hi]), { markers: true }),
      };
    });

    // the margins: room on the left for the first column's tick labels and title
    ctx.font = `${fontSize}px ${FONT}`;
    const area0 = { left: margin.l, right: w - margin.r, top: margin.t, bottom: ht - margin.b };
    const prepared = subs.map((s, k) => {
      const a = axes[k];
      const box = subplotBox(area0, s.xa, s.ya);
      const yScale = makeScale(a.yRange[0], a.yRange[1], box.bottom, box.top);
      const yTicks = fitTicks(axisTicks(s.ya, a.yType, a.yRange, { count: Math.max(2, Math.round((box.bottom - box.top) / 40)), cats: a.yCats }), yScale, fontSize + 4);
      const labelW = Math.max(0, ...yTicks.map((t) => ctx.measureText(t.text).width));
      return { yTicks, labelW };
    });
    let left = margin.l;
    subs.forEach((s, k) => {
      const d0 = (s.xa.domain || [0, 1])[0];
      if (d0 === 0) left = Math.max(left, prepared[k].labelW + TICK_LEN + 6 + (axisTitle(s.ya) ? fontSize + 10 : 0));
    });
    const area = { left, right: w - margin.r, top: margin.t, bottom: ht - margin.b };

    this.points = [];
    this.scales = [];
    subs.forEach((s, k) => {
      const a = axes[k];
      const box = subplotBox(area, s.xa, s.ya);
      const xScale = makeScale(a.xRange[0], a.xRange[1], box.left, box.right);
      const yScale = makeScale(a.yRange[0], a.yRange[1], box.bottom, box.top);
      this.scales[k] = { key: `${s.x} ${s.y}`, box, xScale, yScale, ...a };
      this.drawAxes(ctx, s, this.scales[k], fontSize);
      ctx.save();
      ctx.beginPath();
      ctx.rect(box.left - 1, box.top - 1, box.right - box.left + 2, box.bottom - box.top + 2);
      ctx.clip();
      for (const i of s.traces) {
        if (!shown.has(i)) continue;
        this.drawTrace(ctx, data[i], i, this.scales[k]);
      }
      ctx.restore();
    });
    this.points.sort((p, q) => p.trace - q.trace);

    // annotations (paper coordinates): subplot titles, notes, the empty state's message
    for (const an of layout.annotations || []) this.drawAnnotation(ctx, an, area, fontSize);

    this.canvas.setAttribute('aria-label', describe(fig, shown));
    d.state = 'ready';
    d.traces = String(data.length);
    d.drawnTraces = String(shown.size);
  }

  drawAxes(ctx, s, sc, fontSize) {
    const { box, xScale, yScale } = sc;
    const xTicks = fitTicks(axisTicks(s.xa, sc.xType, sc.xRange, { count: Math.max(2, Math.round((box.right - box.left) / 90)), cats: sc.xCats }), xScale, 0);
    const yTicks = fitTicks(axisTicks(s.ya, sc.yType, sc.yRange, { count: Math.max(2, Math.round((box.bottom - box.top) / 40)), cats: sc.yCats }), yScale, fontSize + 4);
    // x tick labels may not overlap: keep those at least their width apart
    ctx.font = `${fontSize}px ${FONT}`;
    const xKept = [];
    let lastRight = -Infinity;
    for (const t of xTicks) {
      const x = xScale(t.u);
      const half = ctx.measureText(t.text).width / 2;
      if (x - half >= lastRight + 6) {
        xKept.push(t);
        lastRight = x + half;
      }
    }
    const crisp = (v) => Math.round(v * this.size.dpr) / this.size.dpr + 0.5 / this.size.dpr;
    // a vertical line at data x, a horizontal one at data y (pixel-aligned), on the path
    const vline = (u, top, bottom) => {
      const x = crisp(xScale(u));
      ctx.moveTo(x, top);
      ctx.lineTo(x, bottom);
    };
    const hline = (u, left, right) => {
      const y = crisp(yScale(u));
      ctx.moveTo(left, y);
      ctx.lineTo(right, y);
    };
    // grid
    ctx.lineWidth = 1;
    ctx.strokeStyle = s.xa.gridcolor || GRID;
    ctx.beginPath();
    for (const t of xKept) vline(t.u, box.top, box.bottom);
    ctx.stroke();
    ctx.strokeStyle = s.ya.gridcolor || GRID;
    ctx.beginPath();
    for (const t of yTicks) hline(t.u, box.left, box.right);
    ctx.stroke();
    // zero lines (linear axes whose range holds 0)
    ctx.strokeStyle = s.ya.zerolinecolor || ZERO;
    ctx.beginPath();
    if (sc.yType === 'linear' && yScale.lo < 0 && yScale.hi > 0) hline(0, box.left, box.right);
    if (sc.xType === 'linear' && xScale.lo < 0 && xScale.hi > 0) vline(0, box.top, box.bottom);
    ctx.stroke();
    // ticks (outside) and their labels
    ctx.strokeStyle = s.xa.tickcolor || TICK;
    ctx.beginPath();
    for (const t of xKept) vline(t.u, box.bottom, box.bottom + TICK_LEN);
    for (const t of yTicks) hline(t.u, box.left, box.left - TICK_LEN);
    ctx.stroke();
    ctx.fillStyle = INK;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    for (const t of xKept) ctx.fillText(t.text, xScale(t.u), box.bottom + TICK_LEN + 3);
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    let labelW = 0;
    for (const t of yTicks) {
      ctx.fillText(t.text, box.left - TICK_LEN - 3, yScale(t.u));
      labelW = Math.max(labelW, ctx.measureText(t.text).width);
    }
    // titles
    const titleSize = Math.round(fontSize * 14 / 12);
    const xt = axisTitle(s.xa);
    if (xt) {
      drawRuns(ctx, parseMarkup(xt)[0] || [], (box.left + box.right) / 2, box.bottom + TICK_LEN + 3 + fontSize + 6 + ((s.xa.title || {}).standoff ?? 6) - 4,
        { size: titleSize, align: 'center', baseline: 'top' });
    }
    const yt = axisTitle(s.ya);
    if (yt) {
      ctx.save();
      ctx.translate(box.left - TICK_LEN - 6 - labelW - 6, (box.top + box.bottom) / 2);
      ctx.rotate(-Math.PI / 2);
      drawRuns(ctx, parseMarkup(yt)[0] || [], 0, 0, { size: titleSize, align: 'center', baseline: 'bottom' });
      ctx.restore();
    }
  }

  // One trace: error bars, the line, the markers; records where its points are.
  drawTrace(ctx, t, index, sc) {
    const { xScale, yScale, xu, yu } = sc;
    const n = Math.min((t.x || []).length, (t.y || []).length);
    const px = new Float32Array(n);
    const py = new Float32Array(n);
    for (let i = 0; i < n; i += 1) {
      px[i] = xScale(xu(t.x[i]));
      py[i] = yScale(yu(t.y[i]));
    }
    // for hover, click and pointPosition: only the points inside the subplot (zoom clips)
    const { box } = sc;
    const hx = px.slice();
    const hy = py.slice();
    for (let i = 0; i < n; i += 1) {
      if (!(px[i] >= box.left - 1 && px[i] <= box.right + 1 && py[i] >= box.top - 1 && py[i] <= box.bottom + 1)) {
        hx[i] = NaN;
        hy[i] = NaN;
      }
    }
    this.points.push({ trace: index, px: hx, py: hy });
    const mode = t.mode || 'markers';
    const marker = t.marker || {};
    const line = t.line || {};
    const colour = line.color || marker.color || '#444';
    // error bars
    const err = t.error_y;
    if (err && err.visible !== false && Array.isArray(err.array) && sc.yType === 'linear') {
      ctx.strokeStyle = err.color || colour;
      ctx.lineWidth = err.thickness ?? 2;
      const cap = err.width ?? 4;
      ctx.beginPath();
      for (let i = 0; i < n; i += 1) {
        const e = err.array[i];
        if (!(e > 0) || px[i] !== px[i] || py[i] !== py[i]) continue;
        const y0 = yScale(yu(t.y[i]) - e);
        const y1 = yScale(yu(t.y[i]) + e);
        ctx.moveTo(px[i], y0);
        ctx.lineTo(px[i], y1);
        if (cap > 0) {
          ctx.moveTo(px[i] - cap, y0);
          ctx.lineTo(px[i] + cap, y0);
          ctx.moveTo(px[i] - cap, y1);
          ctx.lineTo(px[i] + cap, y1);
        }
      }
      ctx.stroke();
    }
    // the line (a missing value lifts the pen)
    if (mode.includes('lines') && n > 1) {
      ctx.strokeStyle = colour;
      ctx.lineWidth = line.width ?? 2;
      ctx.lineJoin = 'round';
      ctx.setLineDash(dashPattern(line.dash, line.width ?? 2));
      ctx.beginPath();
      let pen = false;
      let lastY = 0;
      for (let i = 0; i < n; i += 1) {
        if (px[i] !== px[i] || py[i] !== py[i]) {
          pen = false;
          continue;
        }
        if (!pen) ctx.moveTo(px[i], py[i]);
        else if (line.shape === 'hv') {
          ctx.lineTo(px[i], lastY);
          ctx.lineTo(px[i], py[i]);
        } else ctx.lineTo(px[i], py[i]);
        pen = true;
        lastY = py[i];
      }
      ctx.stroke();
      ctx.setLineDash([]);
    }
    if (!mode.includes('markers')) return;
    const size = marker.size ?? 6;
    const alpha = marker.opacity ?? 1;
    const fillColour = marker.color || colour;
    const outline = marker.line && marker.line.width > 0 ? marker.line : null;
    if (n > RASTER_MIN && (marker.symbol || 'circle') === 'circle' && !outline) {
      this.rasterMarkers(ctx, px, py, size, fillColour, alpha, sc.box);
      return;
    }
    ctx.globalAlpha = alpha;
    ctx.fillStyle = fillColour;
    ctx.beginPath();
    const r = size / 2;
    for (let i = 0; i < n; i += 1) {
      if (px[i] !== px[i] || py[i] !== py[i]) continue;
      if (marker.symbol === 'diamond') {
        const q = r * 1.3;
        ctx.moveTo(px[i], py[i] - q);
        ctx.lineTo(px[i] + q, py[i]);
        ctx.lineTo(px[i], py[i] + q);
        ctx.lineTo(px[i] - q, py[i]);
        ctx.closePath();
      } else {
        ctx.moveTo(px[i] + r, py[i]);
        ctx.arc(px[i], py[i], r, 0, 2 * Math.PI);
      }
    }
    ctx.fill();
    if (outline) {
      ctx.strokeStyle = outline.color || INK;
      ctx.lineWidth = outline.width;
      ctx.stroke();
    }
    ctx.globalAlpha = 1;
  }

  // Many markers: blended into pixels (web/js/figure.js) over the subplot's box only, and
  // drawn as one image.
  rasterMarkers(ctx, px, py, size, colour, alpha, box) {
    const { dpr } = this.size;
    const pad = size / 2 + 1;
    const x0 = Math.max(0, Math.floor((box.left - pad) * dpr));
    const y0 = Math.max(0, Math.floor((box.top - pad) * dpr));
    const x1 = Math.min(this.canvas.width, Math.ceil((box.right + pad) * dpr));
    const y1 = Math.min(this.canvas.height, Math.ceil((box.bottom + pad) * dpr));
    const w = x1 - x0;
    const ht = y1 - y0;
    if (w <= 0 || ht <= 0) return;
    if (!this.layer) this.layer = document.createElement('canvas');
    if (this.layer.width < w || this.layer.height < ht) {
      this.layer.width = Math.max(w, this.layer.width);
      this.layer.height = Math.max(ht, this.layer.height);
    }
    const lctx = this.layer.getContext('2d');
    const image = lctx.createImageData(w, ht);
    const dx = px.map((v) => v * dpr - x0);
    const dy = py.map((v) => v * dpr - y0);
    const key = size * dpr;
    if (!this.masks) this.masks = new Map();
    if (!this.masks.has(key)) this.masks.set(key, discMask(key / 2));
    blendMarkers(image.data, w, ht, dx, dy, this.masks.get(key), parseColour(colour), alpha);
    lctx.putImageData(image, 0, 0);
    ctx.save();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(this.layer, 0, 0, w, ht, x0, y0, w, ht);
    ctx.restore();
  }

  drawAnnotation(ctx, an, area, fontSize) {
    if (an.xref !== 'paper' || an.yref !== 'paper' || an.text === undefined) return;
    const at = paperToPixel(area, an.x ?? 0.5, an.y ?? 0.5);
    const font = an.font || {};
    const size = font.size || fontSize;
    const lines = parseMarkup(an.text);
    const lineH = size * 1.25;
    const align = an.xanchor === 'left' ? 'left' : an.xanchor === 'right' ? 'right' : 'center';
    const total = lines.length * lineH;
    let y = an.yanchor === 'bottom' ? at.y - total : an.yanchor === 'top' ? at.y : at.y - total / 2;
    for (const runs of lines) {
      drawRuns(ctx, runs, at.x, y + lineH / 2, { size, colour: font.color || INK, align, baseline: 'middle' });
      y += lineH;
    }
  }

  // ---- hover and click ------------------------------------------------------------------------
  local(e) {
    const r = this.canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }

  onMove(e) {
    this.pointer = this.local(e);
    if (this.down && this.down.k >= 0) {
      this.onDrag(this.pointer);
      return;
    }
    if (this.hoverFrame) return;
    this.hoverFrame = requestAnimationFrame(() => {
      this.hoverFrame = 0;
      this.hover(this.pointer);
    });
  }

  hover(p) {
    const hit = p ? nearestPoint(this.points, p.x, p.y, HOVER_DISTANCE) : null;
    if (!hit) {
      this.hideHover();
      return;
    }
    const t = this.fig.data[hit.trace];
    const pts = this.points.find((q) => q.trace === hit.trace);
    const x = pts.px[hit.index];
    const y = pts.py[hit.index];
    const colour = (t.marker && t.marker.color) || (t.line && t.line.color) || INK;
    fill(this.tip, hoverLines(t, hit.index).map((runs) => h('div', null,
      runs.map((r) => (r.bold ? h('b', null, r.text) : r.text)))));
    this.tip.style.borderColor = colour;
    this.tip.hidden = false;
    this.ring.hidden = false;
    this.ring.style.left = `${x}px`;
    this.ring.style.top = `${y}px`;
    this.ring.style.borderColor = colour;
    const tw = this.tip.offsetWidth;
    const th = this.tip.offsetHeight;
    const left = x + 12 + tw > this.size.w ? x - 12 - tw : x + 12;
    this.tip.style.left = `${Math.max(0, left)}px`;
    this.tip.style.top = `${Math.max(0, Math.min(this.size.h - th, y - th / 2))}px`;
    this.canvas.style.cursor = this.div.dataset.clickable ? 'pointer' : '';
    this.hit = hit;
  }

  hideHover() {
    this.tip.hidden = true;
    this.ring.hidden = true;
    this.canvas.style.cursor = '';
    this.hit = null;
  }

  // The subplot under a point (CSS px), or -1.
  subplotAt(p) {
    return (this.scales || []).findIndex((sc) => p.x >= sc.box.left && p.x <= sc.box.right && p.y >= sc.box.top && p.y <= sc.box.bottom);
  }

  onDown(e) {
    if (e.button !== 0) return;
    const p = this.local(e);
    this.down = { ...p, k: this.subplotAt(p) };
    this.canvas.setPointerCapture?.(e.pointerId);
  }

  // A drag in a subplot: the band it would zoom to.
  onDrag(p) {
    const d = this.down;
    const sc = this.scales[d.k];
    const box = sc.box;
    const x = Math.min(box.right, Math.max(box.left, p.x));
    const y = Math.min(box.bottom, Math.max(box.top, p.y));
    const z = dragZoom(sc.xScale, sc.yScale, d.x, d.y, x, y);
    if (!z) {
      this.band.hidden = true;
      return;
    }
    this.hideHover();
    const l = z.x ? Math.min(d.x, x) : box.left;
    const r = z.x ? Math.max(d.x, x) : box.right;
    const t = z.y ? Math.min(d.y, y) : box.top;
    const b = z.y ? Math.max(d.y, y) : box.bottom;
    Object.assign(this.band.style, { left: `${l}px`, top: `${t}px`, width: `${r - l}px`, height: `${b - t}px` });
    this.band.hidden = false;
  }

  onUp(e) {
    const down = this.down;
    this.down = null;
    this.band.hidden = true;
    if (!down || e.button !== 0) return;
    this.canvas.releasePointerCapture?.(e.pointerId);
    const p = this.local(e);
    if (Math.abs(p.x - down.x) > 4 || Math.abs(p.y - down.y) > 4) {
      // a drag: zoom the subplot it started in
      const sc = this.scales[down.k];
      if (!sc) return;
      const x = Math.min(sc.box.right, Math.max(sc.box.left, p.x));
      const y = Math.min(sc.box.bottom, Math.max(sc.box.top, p.y));
      const z = dragZoom(sc.xScale, sc.yScale, down.x, down.y, x, y);
      if (!z) return;
      this.zoom.set(sc.key, { ...this.zoom.get(sc.key), ...z });
      this.renderLegend();
      this.draw();
      return;
    }
    const hit = nearestPoint(this.points, p.x, p.y, HOVER_DISTANCE);
    if (!hit) return;
    const trace = this.fig.data[hit.trace];
    this.div.dispatchEvent(new CustomEvent('plotclick', {
      detail: { traceIndex: hit.trace, pointIndex: hit.index, trace, customdata: (trace.customdata || [])[hit.index] },
    }));
  }

  // Where point k of trace t is drawn: CSS px from the div's top left; null if not drawn.
  pointPosition(t, k) {
    const pts = this.points.find((q) => q.trace === t);
    if (!pts || !(k >= 0 && k < pts.px.length) || !Number.isFinite(pts.px[k]) || !Number.isFinite(pts.py[k])) return null;
    const d = this.div.getBoundingClientRect();
    const c = this.canvas.getBoundingClientRect();
    return { x: c.left - d.left + pts.px[k], y: c.top - d.top + pts.py[k] };
  }
}

function axisTitle(axis) {
  const t = axis && axis.title;
  if (!t) return '';
  return typeof t === 'string' ? t : t.text || '';
}

// Text runs ({text, bold}) side by side at (x, y).
function drawRuns(ctx, runs, x, y, { size = 12, colour = INK, align = 'left', baseline = 'alphabetic' } = {}) {
  const fonts = runs.map((r) => `${r.bold ? '600 ' : ''}${size}px ${FONT}`);
  const widths = runs.map((r, i) => {
    ctx.font = fonts[i];
    return ctx.measureText(r.text).width;
  });
  const total = widths.reduce((a, b) => a + b, 0);
  let at = align === 'center' ? x - total / 2 : align === 'right' ? x - total : x;
  ctx.fillStyle = colour;
  ctx.textAlign = 'left';
  ctx.textBaseline = baseline;
  runs.forEach((r, i) => {
    ctx.font = fonts[i];
    ctx.fillText(r.text, at, y);
    at += widths[i];
  });
}

// A legend entry's sample: the line (dashed or not) and/or the marker, in CSS.
function swatch(it) {
  const lines = it.mode.includes('lines');
  const markers = it.mode.includes('markers');
  return h('span', { class: 'figure-swatch', 'aria-hidden': 'true' },
    lines ? h('i', { class: `line${it.dash && it.dash !== 'solid' ? ' dashed' : ''}`, style: { borderTopColor: it.colour } }) : null,
    markers ? h('b', { class: `dot${it.symbol === 'diamond' ? ' diamond' : ''}`, style: { background: it.colour } }) : null);
}

// The canvas's accessible text: the traces drawn and their points.
function describe(fig, shown) {
  const data = fig.data || [];
  if (!data.length) {
    const an = ((fig.layout || {}).annotations || [])[0];
    return an ? markupText(an.text) : 'no data';
  }
  return data.filter((_, i) => shown.has(i)).map((t) => `${markupText(t.name ?? '')}: ${(t.x || []).length} points`).join('; ');
}
