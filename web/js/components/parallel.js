// Parallel coordinates on a canvas 2D (no WebGL): one vertical axis per searched parameter
// and one for the value, one line per trial coloured by its value (best: yellow, by the
// study's goal), a colour bar. Drag along an axis to brush a range (brushes on several axes
// combine with AND), click an axis to clear its brush; lines outside the selection turn
// grey; hovering a line shows its values. The layout math is in web/js/parallel.js
// (unit-tested in Node).
//
// The lines are not canvas paths (about 1.5 µs a segment in software rendering, 0.5 s or
// more for 50,000 lines): web/js/parallel.js rasterises them, worst colour bucket first,
// into one image put on the canvas; the axes, ticks and labels are drawn over it.
//
// The div gets data-state="ready" once drawn, and for tests: data-rows (trials in the data),
// data-drawn (lines on the canvas at the last draw), data-selected (lines the brushes
// take), data-axes (the axis names, comma-separated), data-brushes (how many), data-axis-x
// and data-plot-y (the axes' x and their top and bottom y, CSS pixels in the canvas).

import { h, fill } from '../dom.js';
import { fmtInt } from '../format.js';
import { FONT } from '../plots.js';
import {
  BUCKETS, axisPos, axisText, axisXs, brushMask, bucketColour, bucketOrder, colourBucket, composeRaster, makeBrush,
  nearestRow, rasterBuffers, rasterLines, thinTicks,
} from '../parallel.js';

const MARGIN = { top: 44, bottom: 12, left: 70, right: 96 };
const GREY = '#c5cdd8';
const INK = '#1f2933';
const MUTED = '#6b7685';
const GRAB = 14; // px either side of an axis that start a brush
const COLOURS = Array.from({ length: BUCKETS }, (_, b) => bucketColour(b));

export class ParallelCoords {
  // div: the element to draw into (its size is the view's size).
  constructor(div, { title = 'Parallel coordinates' } = {}) {
    this.div = div;
    this.title = title;
    this.model = { rows: 0, axes: [], message: '' };
    this.brushes = new Map(); // axis name -> {lo, hi[, categories]}
    this.mask = new Uint8Array(0);
    this.selected = 0;
    this.frame = 0;
    this.drag = null;
    this.size = { w: 0, h: 0, dpr: 0 };
    this.canvas = h('canvas', { class: 'parallel-canvas', role: 'img', 'aria-label': title });
    this.tip = h('div', { class: 'parallel-tip', hidden: true });
    this.area = h('div', { class: 'parallel-area' }, this.canvas, this.tip);
    this.countEl = h('span', { class: 'parallel-count', 'aria-live': 'polite' });
    this.clearEl = h('button', { type: 'button', class: 'link small', hidden: true, onclick: () => this.clearBrushes() },
      'clear selection');
    this.hintEl = h('span', { class: 'muted' }, 'drag along an axis to select a range; click the axis to clear it');
    fill(div, h('div', { class: 'parallel' }, this.area, h('div', { class: 'parallel-foot small' }, this.countEl, this.clearEl, this.hintEl)));
    div.classList.add('parallel-host');
    this.canvas.addEventListener('pointerdown', (e) => this.onDown(e));
    this.canvas.addEventListener('pointermove', (e) => this.onMove(e));
    this.canvas.addEventListener('pointerup', (e) => this.onUp(e));
    this.canvas.addEventListener('pointercancel', () => { this.drag = null; });
    this.canvas.addEventListener('pointerleave', () => { this.tip.hidden = true; });
    // redraw when the card changes size (not on the observer's first call, at the size drawn)
    this.resizer = typeof ResizeObserver === 'function' ? new ResizeObserver(() => {
      if (this.area.clientWidth !== this.size.w || this.area.clientHeight !== this.size.h) this.schedule();
    }) : null;
    this.resizer?.observe(this.area);
  }

  // Shows a model from parallelModel (web/js/parallel.js) and draws it at once. Brushes on
  // axes the new model still has are kept.
  set(model) {
    this.model = model;
    const rows = model.rows || 0;
    for (const name of [...this.brushes.keys()]) if (!model.axes.some((a) => a.name === name)) this.brushes.delete(name);
    this.pos = model.axes.map((a) => Float32Array.from(a.values, (v) => axisPos(a, v)));
    this.groups = rows ? bucketOrder(model.bucket) : null;
    this.lines = 0; // rows with at least one segment (a value on two neighbouring axes) at the last draw
    this.mask = new Uint8Array(rows);
    this.refilter();
    this.draw();
  }

  // A message in place of the lines (no data, or the data could not be loaded).
  message(text) {
    this.set({ rows: 0, axes: [], message: text });
  }

  clearBrushes() {
    this.brushes.clear();
    this.refilter();
    this.schedule();
  }

  destroy() {
    this.resizer?.disconnect();
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
  }

  refilter() {
    const m = this.model;
    this.selected = m.rows ? brushMask(m, this.brushes, this.mask) : 0;
    const d = this.div.dataset;
    d.rows = String(m.rows || 0);
    d.selected = String(this.selected);
    d.brushes = String(this.brushes.size);
    d.axes = m.axes.map((a) => a.name).join(',');
    if (!m.rows) {
      this.countEl.textContent = '';
    } else {
      const sample = m.returned < m.total ? `, an even sample of ${fmtInt(m.total)} finished` : '';
      this.countEl.textContent = `${fmtInt(this.selected)} of ${fmtInt(m.rows)} trials shown${sample}`;
    }
    this.clearEl.hidden = this.brushes.size === 0;
    this.hintEl.hidden = !m.rows || this.brushes.size > 0;
  }

  schedule() {
    if (!this.frame) {
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.draw();
      });
    }
  }

  // The plot area in CSS pixels.
  frameBox() {
    const { w, h: ht } = this.size;
    return { left: MARGIN.left, right: w - MARGIN.right, top: MARGIN.top, bottom: ht - MARGIN.bottom };
  }

  draw() {
    const w = this.area.clientWidth;
    const ht = this.area.clientHeight;
    if (!w || !ht) return; // not laid out (hidden): the resize observer draws it later
    const dpr = Math.min(3, Math.max(1, window.devicePixelRatio || 1));
    if (w !== this.size.w || ht !== this.size.h || dpr !== this.size.dpr) {
      this.canvas.width = Math.round(w * dpr);
      this.canvas.height = Math.round(ht * dpr);
      this.size = { w, h: ht, dpr };
    }
    const ctx = this.canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, ht);
    const m = this.model;
    const d = this.div.dataset;
    if (!m.rows) {
      ctx.font = `14px ${FONT}`;
      ctx.fillStyle = MUTED;
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      ctx.fillText(m.message || 'no data', w / 2, ht / 2);
      this.canvas.setAttribute('aria-label', `${this.title}: ${m.message || 'no data'}`);
      d.drawn = '0';
      d.state = 'ready';
      return;
    }
    const box = this.frameBox();
    const xs = axisXs(m.axes.length, box.left, box.right);
    this.xs = xs;
    this.lines = this.drawLines(ctx, xs, box);
    this.drawAxes(ctx, xs, box);
    this.drawColourBar(ctx, box);
    this.canvas.setAttribute('aria-label', `${this.title}: ${fmtInt(m.rows)} trials over ${m.axes.map((a) => a.label).join(', ')}; ` +
      `colour: ${m.metric}, ${m.minimize ? 'lowest' : 'highest'} is best; ${fmtInt(this.selected)} selected`);
    d.drawn = String(this.lines);
    d.axisX = xs.map((x) => Math.round(x)).join(','); // for tests: where to drag
    d.plotY = `${box.top},${box.bottom}`;
    d.state = 'ready';
  }

  // The lines, rasterised in web/js/parallel.js and put as one image (in device pixels).
  drawLines(ctx, xs, box) {
    const { dpr } = this.size;
    const w = this.canvas.width;
    const ht = this.canvas.height;
    if (!this.raster || this.raster.w !== w || this.raster.h !== ht) {
      this.raster = rasterBuffers(w, ht);
      this.image = ctx.createImageData(w, ht);
    }
    const brushed = this.brushes.size > 0;
    const drawn = rasterLines(this.raster, {
      xs: xs.map((x) => x * dpr), pos: this.pos, top: box.top * dpr, bottom: box.bottom * dpr,
      groups: this.groups, mask: brushed ? this.mask : null, discrete: this.model.axes.map((a) => a.scale === 'category'),
    });
    composeRaster(this.raster, this.image.data, { colours: COLOURS, grey: GREY });
    ctx.putImageData(this.image, 0, 0);
    return drawn;
  }

  drawAxes(ctx, xs, box) {
    const m = this.model;
    const span = box.bottom - box.top;
    const dpr = this.size.dpr;
    const crisp = (x) => (Math.round(x * dpr) + 0.5) / dpr;
    const gap = m.axes.length > 1 ? xs[1] - xs[0] : box.right - box.left;
    ctx.lineJoin = 'round';
    m.axes.forEach((axis, k) => {
      const x = crisp(xs[k]);
      const yOf = (v) => box.bottom - axisPos(axis, v) * span;
      // the brush
      const brush = this.brushes.get(axis.name);
      if (brush) {
        const [lo, hi] = this.brushSpan(axis, brush);
        const y0 = yOf(hi);
        const y1 = yOf(lo);
        ctx.fillStyle = 'rgba(31, 41, 51, 0.14)';
        ctx.fillRect(x - 7, y0 - 2, 14, y1 - y0 + 4);
        ctx.strokeStyle = INK;
        ctx.lineWidth = 1;
        ctx.strokeRect(x - 7, y0 - 2, 14, y1 - y0 + 4);
      }
      // the axis and its ticks
      ctx.strokeStyle = INK;
      ctx.globalAlpha = 0.75;
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(x, box.top);
      ctx.lineTo(x, box.bottom);
      const ticks = thinTicks(axis.ticks.filter((t) => t.v >= axis.lo - 1e-9 && t.v <= axis.hi + 1e-9), yOf, 13);
      for (const t of ticks) {
        const y = crisp(yOf(t.v));
        ctx.moveTo(x - 4, y);
        ctx.lineTo(x, y);
      }
      ctx.stroke();
      ctx.globalAlpha = 1;
      ctx.font = `11px ${FONT}`;
      ctx.textAlign = 'right';
      ctx.textBaseline = 'middle';
      ctx.lineWidth = 3;
      ctx.strokeStyle = 'rgba(255, 255, 255, 0.85)';
      ctx.fillStyle = INK;
      const room = Math.max(24, Math.min(MARGIN.left - 8, gap - 16));
      for (const t of ticks) {
        const text = fit(ctx, t.text, room);
        const y = yOf(t.v);
        ctx.strokeText(text, x - 6, y);
        ctx.fillText(text, x - 6, y);
      }
      // the label, above
      ctx.font = `600 12px ${FONT}`;
      ctx.textAlign = 'center';
      ctx.textBaseline = 'alphabetic';
      const label = fit(ctx, axis.label, Math.max(40, gap - 8));
      const half = ctx.measureText(label).width / 2;
      const cx = Math.min(this.size.w - half - 2, Math.max(half + 2, x));
      ctx.fillText(label, cx, box.top - 16);
    });
  }

  // A brush's extent in the axis's unit (a category brush: its first to last category).
  brushSpan(axis, brush) {
    if (axis.scale === 'category' && brush.categories) {
      const idx = brush.categories.map((c) => axis.categories.indexOf(c)).filter((i) => i >= 0);
      if (idx.length) return [Math.min(...idx) - 0.15, Math.max(...idx) + 0.15];
    }
    return [brush.lo, brush.hi];
  }

  // The colour bar: the value's range, coloured as the lines, best end marked.
  drawColourBar(ctx, box) {
    const m = this.model;
    const x = this.size.w - MARGIN.right + 36;
    const span = box.bottom - box.top;
    const steps = 64;
    for (let s = 0; s < steps; s += 1) {
      const v = m.lo + ((s + 0.5) / steps) * (m.hi - m.lo);
      ctx.fillStyle = bucketColour(Math.max(0, colourBucket(v, m.lo, m.hi, m.minimize)));
      const y0 = box.bottom - ((s + 1) / steps) * span;
      ctx.fillRect(x, y0, 10, span / steps + 0.5);
    }
    ctx.strokeStyle = '#c5cdd8';
    ctx.lineWidth = 1;
    ctx.strokeRect(x, box.top, 10, span);
    ctx.font = `11px ${FONT}`;
    ctx.fillStyle = MUTED;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'alphabetic';
    const bestTop = !m.minimize;
    ctx.fillText('best', x - 4, bestTop ? box.top - 4 : box.bottom + 11);
    ctx.save();
    ctx.translate(x + 22, (box.top + box.bottom) / 2);
    ctx.rotate(Math.PI / 2);
    ctx.textAlign = 'center';
    ctx.fillStyle = INK;
    ctx.fillText(fit(ctx, `colour: ${m.metric}`, span), 0, 0);
    ctx.restore();
  }

  // ---- brushing ------------------------------------------------------------------------
  local(e) {
    const r = this.canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }

  axisAt(p) {
    if (!this.model.rows || !this.xs) return -1;
    const box = this.frameBox();
    if (p.y < box.top - 10 || p.y > box.bottom + 10) return -1;
    let best = -1;
    let dist = GRAB + 1;
    this.xs.forEach((x, k) => {
      const dx = Math.abs(p.x - x);
      if (dx < dist) {
        dist = dx;
        best = k;
      }
    });
    return dist <= GRAB ? best : -1;
  }

  tAt(y) {
    const box = this.frameBox();
    return (box.bottom - y) / (box.bottom - box.top);
  }

  onDown(e) {
    const p = this.local(e);
    const k = this.axisAt(p);
    if (k < 0 || e.button !== 0) return;
    this.drag = { k, y0: p.y, moved: false };
    this.canvas.setPointerCapture?.(e.pointerId);
    e.preventDefault();
  }

  onMove(e) {
    const p = this.local(e);
    if (!this.drag) {
      const onAxis = this.axisAt(p) >= 0;
      this.canvas.style.cursor = onAxis ? 'ns-resize' : '';
      this.hover(onAxis ? null : p);
      return;
    }
    this.tip.hidden = true;
    if (!this.drag.moved && Math.abs(p.y - this.drag.y0) < 3) return;
    this.drag.moved = true;
    const axis = this.model.axes[this.drag.k];
    this.brushes.set(axis.name, makeBrush(axis, this.tAt(this.drag.y0), this.tAt(p.y)));
    this.refilter();
    this.schedule();
  }

  // The values of the line under the pointer (p null: none), in a tooltip.
  hover(p) {
    const m = this.model;
    const box = this.frameBox();
    const i = p && m.rows && this.xs
      ? nearestRow(this.pos, this.xs, box.top, box.bottom, p.x, p.y, { mask: this.brushes.size ? this.mask : null })
      : -1;
    if (i < 0) {
      this.tip.hidden = true;
      return;
    }
    fill(this.tip, m.axes.map((a) => h('div', null, h('span', { class: 'muted' }, `${a.label.replace(/ \(log\)$/, '')}: `), axisText(a, i))));
    this.tip.hidden = false;
    const left = p.x + 14 + this.tip.offsetWidth > this.size.w ? p.x - 14 - this.tip.offsetWidth : p.x + 14;
    this.tip.style.left = `${Math.max(0, left)}px`;
    this.tip.style.top = `${Math.max(0, Math.min(this.size.h - this.tip.offsetHeight, p.y - 10))}px`;
  }

  onUp(e) {
    const drag = this.drag;
    this.drag = null;
    if (!drag) return;
    this.canvas.releasePointerCapture?.(e.pointerId);
    if (!drag.moved) {
      // a click on an axis clears its brush
      const axis = this.model.axes[drag.k];
      if (axis && this.brushes.delete(axis.name)) {
        this.refilter();
        this.schedule();
      }
    }
  }
}

// text cut with an ellipsis to fit maxWidth px in the context's font.
function fit(ctx, text, maxWidth) {
  const s = String(text);
  if (ctx.measureText(s).width <= maxWidth) return s;
  let lo = 0;
  let hi = s.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (ctx.measureText(`${s.slice(0, mid)}\u2026`).width <= maxWidth) lo = mid;
    else hi = mid - 1;
  }
  return `${s.slice(0, lo)}\u2026`;
}
