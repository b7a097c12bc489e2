// Parallel coordinates without WebGL: the pure half (no DOM). From /columns JSON to axes
// (scales, ticks), colour buckets and the brushing filter; web/js/components/parallel.js
// draws them on a canvas 2D. Plotly's parcoords is WebGL only and takes about 2 s to draw
// in software WebGL whatever the number of lines; a canvas draws 50,000 lines in a
// fraction of that (bench/web/plot_cost.mjs).
//
// Values on an axis are in the axis's plotted unit, as in parcoordsDimensions: log10 of the
// value on a log axis, the category's index on a categorical one. pos() maps them to
// [0, 1] (0 = bottom of the axis, 1 = top).

import { fmtValue, isNum } from './format.js';
import { parcoordsDimensions } from './plots.js';

// Plotly's Viridis, so that the dashboard and the report (which keeps Plotly's parcoords)
// colour alike: dark purple at the worst value, yellow at the best.
export const VIRIDIS = ['#440154', '#48186a', '#472d7b', '#424086', '#3b528b', '#33638d', '#2c728e',
  '#26828e', '#21918c', '#1fa088', '#28ae80', '#3fbc73', '#5ec962', '#84d44b', '#addc30', '#d8e219', '#fde725'];

// Lines share a colour per bucket: one canvas path (one stroke) per bucket.
export const BUCKETS = 32;

function hexRgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

// The colour at t in [0, 1] along a scale of evenly spaced hex stops, as 'rgb(r,g,b)'.
export function scaleColour(t, stops = VIRIDIS) {
  const x = Math.min(1, Math.max(0, isNum(t) ? t : 0)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const f = x - i;
  const a = hexRgb(stops[i]);
  const b = hexRgb(stops[i + 1]);
  const c = a.map((v, k) => Math.round(v + (b[k] - v) * f));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

// The colour bucket of a value: 0 for the worst end of [lo, hi], buckets - 1 for the best
// (the highest value when maximizing, the lowest when minimizing). -1 without a value.
export function colourBucket(v, lo, hi, minimize = false, buckets = BUCKETS) {
  if (!isNum(v)) return -1;
  let t = hi > lo ? (v - lo) / (hi - lo) : 1;
  t = Math.min(1, Math.max(0, t));
  if (minimize) t = 1 - t;
  return Math.min(buckets - 1, Math.floor(t * buckets));
}

// The colour of bucket b (its middle on the scale).
export function bucketColour(b, buckets = BUCKETS) {
  return scaleColour((b + 0.5) / buckets);
}

// 'Nice' ticks (steps of 1, 2 or 5 times a power of ten) inside [lo, hi], about `count`.
export function niceTicks(lo, hi, count = 5) {
  if (!isNum(lo) || !isNum(hi)) return [];
  if (hi < lo) [lo, hi] = [hi, lo];
  if (hi === lo) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  let step = mag;
  for (const s of [1, 2, 5, 10].map((k) => k * mag)) {
    if (Math.abs((hi - lo) / s - count) < Math.abs((hi - lo) / step - count)) step = s;
  }
  const out = [];
  const eps = step * 1e-9;
  for (let k = Math.ceil((lo - eps) / step); k * step <= hi + eps; k += 1) {
    out.push(Number((k * step).toPrecision(12)));
  }
  return out;
}

// A power of ten as a label: 0.001 ... 1000 written out, 1e-4 and 1e4 beyond.
export function powerLabel(e) {
  return e >= -3 && e <= 3 ? String(Number((10 ** e).toPrecision(3))) : `1e${e}`;
}

// Ticks of a log axis whose range [lo, hi] is in log10 units: the powers of ten inside it;
// where fewer than two fall inside, 1, 2 and 5 times them; then the ends.
export function logTicks(lo, hi) {
  if (!isNum(lo) || !isNum(hi)) return [];
  const eps = 1e-9;
  const out = [];
  for (let e = Math.ceil(lo - eps); e <= hi + eps; e += 1) out.push({ v: e, text: powerLabel(e) });
  if (out.length >= 2) return out;
  const more = [];
  for (let e = Math.floor(lo) - 1; e <= Math.ceil(hi); e += 1) {
    for (const m of [1, 2, 5]) {
      const v = Math.log10(m) + e;
      if (v >= lo - eps && v <= hi + eps) more.push({ v, text: fmtValue(m * 10 ** e, 3) });
    }
  }
  if (more.length >= 2) return more;
  return [lo, hi].map((v) => ({ v, text: fmtValue(10 ** v, 3) }));
}

function finiteRange(values) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (!isNum(v)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return lo <= hi ? [lo, hi] : [0, 1];
}

// One axis from a parcoords dimension (plots.js): {name, label, scale ('linear', 'log',
// 'category'), lo, hi, ticks: [{v, text}], values: Float64Array (NaN where missing),
// categories (category axes: the names, by index)}.
export function axisFromDimension(dim) {
  const scale = (dim.meta && dim.meta.scale) || (dim.ticktext ? 'category' : 'linear');
  const values = Float64Array.from(dim.values, (v) => (isNum(v) ? v : NaN));
  let [lo, hi] = dim.range || finiteRange(values);
  if (!(hi > lo)) [lo, hi] = [lo - 1, hi + 1];
  let ticks;
  if (scale === 'category') {
    ticks = dim.tickvals.map((v, i) => ({ v, text: String(dim.ticktext[i]) }));
  } else if (scale === 'log') {
    ticks = logTicks(lo, hi);
  } else {
    ticks = niceTicks(lo, hi, 5).map((v) => ({ v, text: fmtValue(v) }));
  }
  const axis = { name: (dim.meta && dim.meta.name) || dim.label, label: dim.label, scale, lo, hi, ticks, values };
  if (scale === 'category') axis.categories = dim.ticktext.map(String);
  return axis;
}

// Where v lies on an axis: 0 at the bottom (lo), 1 at the top (hi); NaN when missing.
export function axisPos(axis, v) {
  return (v - axis.lo) / (axis.hi - axis.lo);
}

// The inverse of axisPos.
export function axisValue(axis, t) {
  return axis.lo + t * (axis.hi - axis.lo);
}

// The model the canvas draws: the axes (parameters, then the value) and each row's colour
// bucket. columns: GET /columns; parameters and opts as for parcoordsFigure.
// {rows, total, returned, axes, metric, minimize, lo, hi (the value's range), bucket:
// Int16Array}, or {rows: 0, message} without data.
export function parallelModel(columns, parameters, opts = {}) {
  const dims = parcoordsDimensions(columns, parameters, opts);
  if (!dims) return { rows: 0, axes: [], message: 'no finished trials with a value yet' };
  const axes = dims.map(axisFromDimension);
  const valueAxis = axes[axes.length - 1];
  const minimize = opts.goal === 'minimize';
  const [lo, hi] = finiteRange(valueAxis.values);
  const rows = valueAxis.values.length;
  const bucket = new Int16Array(rows);
  for (let i = 0; i < rows; i += 1) bucket[i] = colourBucket(valueAxis.values[i], lo, hi, minimize);
  return {
    rows,
    total: isNum(columns.total) ? columns.total : rows,
    returned: isNum(columns.returned) ? columns.returned : rows,
    axes,
    metric: valueAxis.label,
    minimize,
    lo,
    hi,
    bucket,
  };
}

// A brush from a drag between positions t0 and t1 (0..1 along the axis): {lo, hi} in the
// axis's unit; on a category axis also the names it covers (so that it still means the
// same categories when an update adds one).
export function makeBrush(axis, t0, t1) {
  const a = Math.min(1, Math.max(0, Math.min(t0, t1)));
  const b = Math.min(1, Math.max(0, Math.max(t0, t1)));
  const brush = { lo: axisValue(axis, a), hi: axisValue(axis, b) };
  if (axis.scale === 'category') {
    brush.categories = axis.categories.filter((_, i) => i >= brush.lo - 1e-9 && i <= brush.hi + 1e-9);
  }
  return brush;
}

// Does a brush take value v of axis? Missing values never are.
function brushTest(axis, brush) {
  if (axis.scale === 'category' && brush.categories) {
    const ok = new Uint8Array(axis.categories.length);
    const want = new Set(brush.categories);
    axis.categories.forEach((c, i) => { ok[i] = want.has(c) ? 1 : 0; });
    return (v) => v >= 0 && v < ok.length && ok[v] === 1;
  }
  return (v) => v >= brush.lo && v <= brush.hi;
}

// The rows every brush takes (brushes on several axes combine with AND): writes 1 or 0 per
// row into out (a Uint8Array of model.rows) and returns how many are selected. brushes:
// Map (or object) of axis name -> brush; brushes on axes the model lacks are ignored.
export function brushMask(model, brushes, out = new Uint8Array(model.rows)) {
  out.fill(1);
  const entries = brushes instanceof Map ? [...brushes] : Object.entries(brushes || {});
  for (const [name, brush] of entries) {
    const axis = model.axes.find((a) => a.name === name);
    if (!axis || !brush) continue;
    const takes = brushTest(axis, brush);
    const vs = axis.values;
    for (let i = 0; i < model.rows; i += 1) if (out[i] && !takes(vs[i])) out[i] = 0;
  }
  let n = 0;
  for (let i = 0; i < model.rows; i += 1) n += out[i];
  return n;
}

// Rows in drawing order, grouped by colour bucket from the worst to the best (so that the
// best lines are drawn last, on top): {order: Uint32Array of row indices, start:
// Uint32Array(buckets + 1) with bucket b at order[start[b]] .. order[start[b + 1] - 1]}.
// Rows without a value are left out.
export function bucketOrder(bucket, buckets = BUCKETS) {
  const start = new Uint32Array(buckets + 1);
  for (const b of bucket) if (b >= 0) start[b + 1] += 1;
  for (let b = 0; b < buckets; b += 1) start[b + 1] += start[b];
  const order = new Uint32Array(start[buckets]);
  const at = start.slice(0, buckets);
  for (let i = 0; i < bucket.length; i += 1) if (bucket[i] >= 0) order[at[bucket[i]]++] = i;
  return { order, start };
}

// x positions of n axes across [left, right], evenly spaced (one axis: the middle).
export function axisXs(n, left, right) {
  if (n <= 1) return [Math.round((left + right) / 2)];
  return Array.from({ length: n }, (_, i) => left + ((right - left) * i) / (n - 1));
}

// The ticks that fit along an axis without overlapping: greedily, each tick at least
// minGap px from the last one kept. px(v): the tick's position in pixels.
export function thinTicks(ticks, px, minGap = 13) {
  const out = [];
  let last = -Infinity;
  for (const t of ticks) {
    const p = px(t.v);
    if (Math.abs(p - last) >= minGap) {
      out.push(t);
      last = p;
    }
  }
  return out;
}

// ---- lines as pixels ------------------------------------------------------------------
// Canvas paths cost about 1.5 µs per segment plus the pixels in software rendering (50,000
// lines over 5 axes: 0.5-0.7 s here), so the lines are rasterised here instead, into one
// 16-bit buffer (colour index << 8 | coverage) that composes into one ImageData. Lines are
// anti-aliased (Xiaolin Wu's: two pixels per column, weighted by distance) and drawn in
// order, worst colour bucket first, so that a pixel shows the last (best) line through it.
// The inner loop only writes: 50,000 lines are about 56 million pixel steps, and reading
// the buffer back (to blend, or to count lines for a density) made it several times slower
// on this machine's caches. A later line's faint edge can overwrite an earlier line's
// pixel next to it: a thin gap that sets lines apart, as a halo would.

// The colour index of brushed-out lines (bucket b is b + 1; 0 is no line).
export const GREY_INDEX = 255;

// The buffer for a w x h device-pixel image: per pixel, colour index << 8 | coverage.
export function rasterBuffers(w, h) {
  return { w, h, pix: new Uint16Array(w * h) };
}

// Adds the segment (x0, y0)-(x1, y1) (device pixels, pixel centres at i + 0.5) in colour c.
export function rasterSegment(buf, x0, y0, x1, y1, c) {
  const dx = x1 - x0;
  const dy = y1 - y0;
  if (Math.abs(dx) >= Math.abs(dy)) {
    if (dx > 0) walk(buf.pix, x0, x1, y0, dy / dx, 1, buf.w, buf.w, buf.h, c);
    else if (dx < 0) walk(buf.pix, x1, x0, y1, dy / dx, 1, buf.w, buf.w, buf.h, c);
  } else if (dy > 0) {
    walk(buf.pix, y0, y1, x0, dx / dy, buf.w, 1, buf.h, buf.w, c);
  } else {
    walk(buf.pix, y1, y0, x1, dx / dy, buf.w, 1, buf.h, buf.w, c);
  }
}

// One segment along its major axis u (from u0 to u1 > u0) with the minor coordinate v
// starting at v0 and changing by k per pixel: du and dv are the index steps along and
// across, uLen and vLen the image's size in pixels along and across. v in 16.16 fixed point.
function walk(pix, u0, u1, v0, k, du, dv, uLen, vLen, c) {
  const ua = Math.max(0, Math.ceil(u0 - 0.5));
  const ub = Math.min(uLen - 1, Math.floor(u1 - 0.5));
  let vv = Math.round((v0 + (ua + 0.5 - u0) * k - 0.5) * 65536);
  const step = Math.round(k * 65536);
  const vMax = vLen - 1;
  const hi = c << 8;
  for (let u = ua; u <= ub; u += 1, vv += step) {
    const vi = vv >> 16;
    if (vi < -1 || vi > vMax) continue;
    const f = (vv & 0xffff) >> 8; // 0..255: how far towards the next pixel across
    const p = u * du + vi * dv;
    // twice Wu's weights, capped: the nearer pixel solid, the other one the edge (lines
    // read about 1.3 px wide, no paler where a later line's edge cuts them)
    if (vi >= 0) pix[p] = hi | Math.min(255, 510 - 2 * f);
    if (vi < vMax) pix[p + dv] = hi | Math.min(255, 2 * f);
  }
}

// Rasterises the model's lines into buf (cleared first). xs: the axes' x in device pixels;
// pos: per axis, each row's position 0..1 (NaN: missing, the pen lifts); top and bottom:
// the ends of the axes in device pixels; groups: bucketOrder(model.bucket); mask: the rows
// the brushes take (null: all), the others go first, in grey; discrete: per axis, true for
// one with few positions (categories): a segment between two of them is drawn once per
// colour, however many lines share it (a grid of 5,000 trials has a few dozen such
// segments). Returns the number of rows with a segment drawn.
export function rasterLines(buf, { xs, pos, top, bottom, groups, mask = null, discrete = [] }) {
  buf.pix.fill(0);
  const { order, start } = groups;
  const n = pos.length;
  const span = bottom - top;
  const shared = pos.map((_, k) => k > 0 && Boolean(discrete[k - 1] && discrete[k]));
  const done = new Set(); // shared segments drawn: (colour, pair, both ends) as one number
  let drawn = 0;
  const line = (i, c) => {
    let any = false;
    for (let k = 1; k < n; k += 1) {
      const t0 = pos[k - 1][i];
      const t1 = pos[k][i];
      if (t0 !== t0 || t1 !== t1) continue; // NaN: a missing value
      any = true;
      const y0 = bottom - t0 * span;
      const y1 = bottom - t1 * span;
      if (shared[k]) {
        const key = ((c * 64 + k) * 65536 + Math.round(y0 * 8)) * 65536 + Math.round(y1 * 8);
        if (done.has(key)) continue;
        done.add(key);
      }
      rasterSegment(buf, xs[k - 1], y0, xs[k], y1, c);
    }
    if (any) drawn += 1;
  };
  if (mask) for (let j = 0; j < order.length; j += 1) if (mask[order[j]] !== 1) line(order[j], GREY_INDEX);
  for (let b = 0; b < start.length - 1; b += 1) {
    for (let j = start[b]; j < start[b + 1]; j += 1) if (!mask || mask[order[j]] === 1) line(order[j], b + 1);
  }
  return drawn;
}

// Composes the buffer into RGBA pixels (an ImageData's data): colours: 'rgb(r,g,b)' per
// bucket at opacity alpha; grey: the colour of brushed-out lines, at greyAlpha.
export function composeRaster(buf, rgba, { colours, grey = '#c5cdd8', alpha = 0.9, greyAlpha = 0.45 }) {
  const lut = new Uint8Array(256 * 4);
  colours.forEach((c, b) => lut.set([...c.match(/\d+/g).map(Number), Math.round(alpha * 255)], (b + 1) * 4));
  lut.set([...hexRgb(grey), Math.round(greyAlpha * 255)], GREY_INDEX * 4);
  const { pix } = buf;
  for (let p = 0, o = 0; p < pix.length; p += 1, o += 4) {
    const v = pix[p];
    const c = (v >> 8) * 4;
    rgba[o] = lut[c];
    rgba[o + 1] = lut[c + 1];
    rgba[o + 2] = lut[c + 2];
    rgba[o + 3] = (lut[c + 3] * (v & 255)) / 255;
  }
}

// ---- hover ----------------------------------------------------------------------------
// The row whose line passes nearest to (x, y) (CSS pixels, as the axes' xs, top and bottom),
// within maxDist pixels vertically; -1 if none. pos: per axis, each row's position 0..1;
// mask: the rows to consider (null: all).
export function nearestRow(pos, xs, top, bottom, x, y, { mask = null, maxDist = 6 } = {}) {
  if (pos.length < 2 || x < xs[0] || x > xs[xs.length - 1]) return -1;
  let k = 1;
  while (k < xs.length - 1 && x > xs[k]) k += 1;
  const f = (x - xs[k - 1]) / (xs[k] - xs[k - 1] || 1);
  const span = bottom - top;
  const a = pos[k - 1];
  const b = pos[k];
  let best = -1;
  let dist = maxDist;
  for (let i = 0; i < a.length; i += 1) {
    if (mask && mask[i] !== 1) continue;
    const t = a[i] + (b[i] - a[i]) * f;
    const d = Math.abs(bottom - t * span - y);
    if (d <= dist) { // NaN compares false: rows without a value there are skipped
      dist = d;
      best = i;
    }
  }
  return best;
}

// An axis's value of row i as text: the category's name, the value on a log axis (not its
// log10), a dash when missing.
export function axisText(axis, i) {
  const v = axis.values[i];
  if (!isNum(v)) return '\u2014';
  if (axis.scale === 'category') return axis.categories[v] ?? String(v);
  if (axis.scale === 'log') return fmtValue(10 ** v);
  return fmtValue(v);
}
