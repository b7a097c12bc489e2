// Figures on a canvas 2D: the pure half (no DOM). web/js/components/figure.js draws with it
// the figure specs that web/js/plots.js builds (Plotly-shaped {data, layout}), so that the
// study page needs no Plotly (1.5 MB to parse, 0.2-0.4 s a plot in software rendering).
//
// The subset drawn is what the study page's figures use: traces of type scatter and
// scattergl with mode markers, lines or lines+markers (line colour, width, dash, shape 'hv';
// marker colour, size, opacity, symbol circle or diamond), error_y arrays; linear, log and
// category axes (tickmode 'array', ticksuffix, exponentformat, rangemode 'tozero'); subplots
// by xaxisN/yaxisN domains; axis titles; annotations in paper coordinates; a legend
// (click to hide a legend group); hover text from `hovertemplate` (%{x}, %{y:.4g},
// %{customdata[1]:.2s}, %{text}) and the pseudo-HTML Plotly reads in it (<b>, <br>,
// entities), never parsed as HTML. canDraw says whether a figure is in that subset; others
// (bars, date axes, parcoords: the workers page, the report) stay with Plotly.
//
// Coordinates: an axis has a unit (the value on a linear axis, log10 of it on a log axis,
// the category's index on a category axis); a scale maps units to pixels.

import { fmtValue, isNum } from './format.js';
import { logTicks, niceTicks, thinTicks } from './parallel.js';

export const HOVER_DISTANCE = 20; // px, as Plotly's hoverdistance

// 'x' -> 'xaxis', 'y3' -> 'yaxis3'.
export function axisKey(ref) {
  const m = /^([xy])(\d*)$/.exec(ref || '');
  return m ? `${m[1]}axis${m[2] === '1' ? '' : m[2]}` : null;
}

// Can the canvas draw this figure? Scatter traces only, no date axes.
export function canDraw(fig) {
  if (!fig || !Array.isArray(fig.data)) return false;
  if (!fig.data.every((t) => (t.type || 'scatter') === 'scatter' || t.type === 'scattergl')) return false;
  const layout = fig.layout || {};
  return Object.keys(layout).every((k) => !/^[xy]axis\d*$/.test(k) || (layout[k] || {}).type !== 'date');
}

// The subplots: one per x axis of the layout (with the y axis it is anchored to), and any
// pair the traces name besides. [{x: 'x2', y: 'y2', xa, ya, traces: [trace indices]}].
// Axes with visible: false are not subplots (the empty figure).
export function subplots(fig) {
  const layout = fig.layout || {};
  const data = fig.data || [];
  const out = [];
  const find = (x, y) => out.find((s) => s.x === x && s.y === y);
  const add = (x, y) => {
    let s = find(x, y);
    if (!s) {
      s = { x, y, xa: layout[axisKey(x)] || {}, ya: layout[axisKey(y)] || {}, traces: [] };
      out.push(s);
    }
    return s;
  };
  const keys = Object.keys(layout).filter((k) => /^xaxis\d*$/.test(k))
    .sort((a, b) => Number(a.slice(5) || 1) - Number(b.slice(5) || 1));
  for (const k of keys) {
    const xa = layout[k] || {};
    if (xa.visible === false) continue;
    const x = `x${k.slice(5)}`;
    const y = xa.anchor && /^y\d*$/.test(xa.anchor) ? xa.anchor : `y${k.slice(5)}`;
    if ((layout[axisKey(y)] || {}).visible === false) continue;
    add(x, y);
  }
  data.forEach((t, i) => add(t.xaxis || 'x', t.yaxis || 'y').traces.push(i));
  return out;
}

// The pixel box of each subplot: the plot area [left, right] x [top, bottom] cut by the
// axes' domains (fractions of it; y from the bottom). Returns {left, right, top, bottom}.
export function subplotBox(area, xa, ya) {
  const dx = (xa && xa.domain) || [0, 1];
  const dy = (ya && ya.domain) || [0, 1];
  const w = area.right - area.left;
  const ht = area.bottom - area.top;
  return {
    left: area.left + dx[0] * w,
    right: area.left + dx[1] * w,
    top: area.top + (1 - dy[1]) * ht,
    bottom: area.top + (1 - dy[0]) * ht,
  };
}

// Paper coordinates (0..1 across the plot area, y up) to pixels.
export function paperToPixel(area, x, y) {
  return { x: area.left + x * (area.right - area.left), y: area.bottom - y * (area.bottom - area.top) };
}

// The type of an axis: as the layout says, else category when the values are strings.
export function axisType(axis, values) {
  if (axis && axis.type && axis.type !== '-') return axis.type;
  for (const v of values || []) {
    if (v === null || v === undefined) continue;
    return typeof v === 'string' ? 'category' : 'linear';
  }
  return 'linear';
}

// The categories of a category axis: its categoryarray, then other values in first-seen order.
export function categories(axis, arrays) {
  const out = (axis && Array.isArray(axis.categoryarray) ? axis.categoryarray : []).map(String);
  const seen = new Set(out);
  for (const a of arrays) {
    for (const v of a || []) {
      if (v === null || v === undefined) continue;
      const s = String(v);
      if (!seen.has(s)) {
        seen.add(s);
        out.push(s);
      }
    }
  }
  return out;
}

// A function from a data value to the axis's unit (NaN where it has none: a missing value,
// a non-positive value on a log axis, an unknown category).
export function toUnit(type, cats) {
  if (type === 'log') return (v) => (typeof v === 'number' && v > 0 ? Math.log10(v) : NaN);
  if (type === 'category') {
    const index = new Map((cats || []).map((c, i) => [c, i]));
    return (v) => (v === null || v === undefined ? NaN : index.get(String(v)) ?? NaN);
  }
  return (v) => (isNum(v) ? v : NaN);
}

// The range of an axis in its unit: the layout's range when given, else the data's with
// padding (5% each side; none along x for lines only, as Plotly pads for markers), 0
// included with rangemode 'tozero'. values: arrays of units; markers: whether any trace on
// the axis draws markers. A single value gets +-1 (+-0.5 decades on a log axis).
export function axisRange(axis, type, values, { markers = true, pad = 0.05 } = {}) {
  if (axis && Array.isArray(axis.range) && axis.range.length === 2 && axis.range.every(isNum)) return [...axis.range];
  let lo = Infinity;
  let hi = -Infinity;
  for (const a of values) {
    for (let i = 0; i < a.length; i += 1) {
      const v = a[i];
      if (v < lo) lo = v; // NaN compares false
      if (v > hi) hi = v;
    }
  }
  const tozero = axis && axis.rangemode === 'tozero' && type === 'linear';
  if (tozero) {
    lo = Math.min(lo, 0);
    hi = Math.max(hi, 0);
  }
  if (!(lo <= hi)) return type === 'log' ? [0, 1] : type === 'category' ? [-0.5, 0.5] : [-1, 1];
  if (type === 'category') {
    const p = Math.max(0.5, (hi - lo) * pad);
    return [lo - p, hi + p];
  }
  if (hi === lo) {
    const d = type === 'log' ? 0.5 : lo === 0 ? 1 : Math.abs(lo) * 0.5;
    return tozero && lo === 0 ? [0, d] : [lo - d, hi + d];
  }
  const p = markers ? (hi - lo) * pad : 0;
  const r = [lo - p, hi + p];
  if (tozero) {
    if (lo >= 0) r[0] = Math.max(0, r[0]);
    if (hi <= 0) r[1] = Math.min(0, r[1]);
  }
  return r;
}

// A scale from an axis's unit range [lo, hi] to pixels [p0, p1] (p1 < p0 for a y axis).
export function makeScale(lo, hi, p0, p1) {
  const k = (p1 - p0) / (hi - lo || 1);
  const px = (u) => p0 + (u - lo) * k;
  px.lo = lo;
  px.hi = hi;
  px.unit = (p) => lo + (p - p0) / k;
  return px;
}

const SI = { '-24': 'y', '-21': 'z', '-18': 'a', '-15': 'f', '-12': 'p', '-9': 'n', '-6': '\u00b5', '-3': 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P' };

// v with an SI prefix, as much precision as `step` needs: siText(2500, 500) = '2.5k'.
export function siText(v, step = 0, exp = null) {
  if (v === 0) return '0';
  const e = exp ?? Math.max(-24, Math.min(15, 3 * Math.floor(Math.log10(Math.abs(v)) / 3)));
  const m = v / 10 ** e;
  const digits = step > 0 ? Math.max(0, Math.min(6, Math.ceil(-Math.log10(step / 10 ** e) - 1e-9))) : 3;
  return `${trimNumber(m.toFixed(digits))}${SI[e] ?? `e${e}`}`;
}

function trimNumber(s) {
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

// The ticks of an axis as [{u (unit), text}]: the layout's tickvals, every category, the
// powers of ten on a log axis, else about `count` 'nice' values.
export function axisTicks(axis, type, range, { count = 5, cats = [] } = {}) {
  axis = axis || {};
  const [lo, hi] = range[0] <= range[1] ? range : [range[1], range[0]];
  const inside = (t) => t.u >= lo - 1e-9 * (hi - lo) && t.u <= hi + 1e-9 * (hi - lo);
  const unit = toUnit(type, cats);
  const suffix = axis.ticksuffix || '';
  const si = axis.exponentformat === 'SI';
  if (axis.tickmode === 'array' && Array.isArray(axis.tickvals)) {
    return axis.tickvals.map((v, i) => ({ u: unit(v), text: String((axis.ticktext || [])[i] ?? v) + suffix }))
      .filter((t) => isNum(t.u) && inside(t));
  }
  if (type === 'category') return cats.map((c, i) => ({ u: i, text: c })).filter(inside);
  if (type === 'log') {
    return logTicks(lo, hi).map((t) => {
      const v = 10 ** t.v;
      return { u: t.v, text: `${si || Math.abs(t.v) >= 4 ? siText(Number(v.toPrecision(6))) : t.text}${suffix}` };
    });
  }
  const vals = niceTicks(lo, hi, count);
  const step = vals.length > 1 ? vals[1] - vals[0] : Math.abs(vals[0] || 1);
  const big = Math.max(...vals.map(Math.abs));
  const exp = big > 0 ? Math.max(-24, Math.min(15, 3 * Math.floor(Math.log10(big) / 3))) : 0;
  const useSi = (si && exp !== 0) || big >= 1e4;
  const digits = Math.max(0, Math.min(8, Math.ceil(-Math.log10(step) - 1e-9)));
  return vals.map((v) => ({ u: v, text: `${useSi ? siText(v, step, exp) : trimNumber(v.toFixed(digits))}${suffix}` }));
}

// The ticks that fit along an axis of `length` px (each at least minGap px from the last).
export function fitTicks(ticks, scale, minGap) {
  return thinTicks(ticks.map((t) => ({ ...t, v: t.u })), scale, minGap);
}

// The ranges a drag from (x0, y0) to (x1, y1) (px) zooms a subplot to, as Plotly's zoom:
// a box when it spans minPx or more both ways, only x (or only y) when it spans less the
// other way, nothing when it is a click. xScale, yScale: the subplot's scales (makeScale).
// Returns {x?: [lo, hi], y?: [lo, hi]} in the axes' units, or null.
export function dragZoom(xScale, yScale, x0, y0, x1, y1, minPx = 6) {
  const wide = Math.abs(x1 - x0) >= minPx;
  const tall = Math.abs(y1 - y0) >= minPx;
  if (!wide && !tall) return null;
  const out = {};
  if (wide) out.x = [xScale.unit(Math.min(x0, x1)), xScale.unit(Math.max(x0, x1))];
  if (tall) out.y = [yScale.unit(Math.max(y0, y1)), yScale.unit(Math.min(y0, y1))];
  return out;
}

// ---- hover text ----------------------------------------------------------------------------
// d3-format's subset that the templates use: '.4g', '.2s', '.3~g', '.2f', '' ; non-numbers
// as text, missing values as a dash.
export function formatValue(v, spec = '') {
  if (v === null || v === undefined) return '\u2014';
  if (typeof v !== 'number') return String(v);
  if (!Number.isFinite(v)) return String(v);
  const m = /^\.(\d+)(~)?([gsfe])$/.exec(spec || '');
  if (!m) return spec ? fmtValue(v) : String(Number(v.toPrecision(12)));
  const p = Number(m[1]);
  const trim = Boolean(m[2]);
  let s;
  if (m[3] === 'f') s = v.toFixed(p);
  else if (m[3] === 'e') s = v.toExponential(p);
  else if (m[3] === 'g') s = v.toPrecision(Math.max(1, p));
  else {
    if (v === 0) return '0';
    const e = Math.max(-24, Math.min(15, 3 * Math.floor(Math.log10(Math.abs(Number(v.toPrecision(Math.max(1, p))))) / 3)));
    s = (v / 10 ** e).toPrecision(Math.max(1, p));
    if (trim) s = trimNumber(s);
    return `${s}${SI[e] ?? `e${e}`}`;
  }
  if (/e/.test(s) && m[3] === 'g') s = s.replace('e+', 'e');
  return trim ? trimNumber(s) : s;
}

// A value of trace point i named as in a template: x, y, text, customdata[1], name.
function lookup(trace, i, path) {
  const m = /^([A-Za-z_]+)((?:\[\d+\])*)$/.exec(path.trim());
  if (!m) return undefined;
  let v;
  if (m[1] === 'name') v = trace.name;
  else {
    const col = trace[m[1]];
    v = Array.isArray(col) || ArrayBuffer.isView(col) ? col[i] : col;
  }
  for (const [, k] of m[2].matchAll(/\[(\d+)\]/g)) v = v === null || v === undefined ? v : v[Number(k)];
  return v;
}

// A template with point i's values in place of %{...}; '<extra>...</extra>' dropped.
export function fillTemplate(template, trace, i) {
  return String(template).replace(/<extra>[\s\S]*?<\/extra>/g, '')
    .replace(/%\{([^}:|]+)(?::([^}]*))?\}/g, (_, path, spec) => formatValue(lookup(trace, i, path), spec || ''));
}

const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'", nbsp: '\u00a0' };

// Plotly's pseudo-HTML as lines of text runs: [[{text, bold}], ...]. Only <br> and <b>...</b>
// mean something and entities are decoded; anything else (any other tag) stays text. The
// component puts the runs in text nodes: nothing here is ever parsed as HTML.
export function parseMarkup(s) {
  const lines = [[]];
  let bold = 0;
  for (const part of String(s).split(/(<br\s*\/?>|<\/?b>)/i)) {
    if (!part) continue;
    const tag = part.toLowerCase().replace(/\s+/g, '');
    if (tag === '<br>' || tag === '<br/>') lines.push([]);
    else if (tag === '<b>') bold += 1;
    else if (tag === '</b>') bold = Math.max(0, bold - 1);
    else {
      const text = part.replace(/&(amp|lt|gt|quot|#39|#x27|nbsp);/g, (_, e) => ENTITIES[e]);
      lines[lines.length - 1].push({ text, bold: bold > 0 });
    }
  }
  return lines;
}

// Plain text of markup (legend names, annotations' accessible text).
export function markupText(s) {
  return parseMarkup(s).map((l) => l.map((r) => r.text).join('')).join('\n');
}

// The hover text of point i of a trace, as parseMarkup's lines: its hovertemplate, else
// its text, else '(x, y)'; the trace's name first when there is no template.
export function hoverLines(trace, i) {
  let s;
  if (trace.hovertemplate) s = fillTemplate(trace.hovertemplate, trace, i);
  else {
    const text = Array.isArray(trace.text) ? trace.text[i] : trace.text;
    s = `${trace.name ? `${trace.name}<br>` : ''}${text ?? `(${formatValue(trace.x[i])}, ${formatValue(trace.y[i])})`}`;
  }
  return parseMarkup(s);
}

// ---- points under the pointer ----------------------------------------------------------
// The point nearest (x, y) within maxDist px: points is [{trace (its index), px, py}] with
// each point's pixel position (NaN: not drawn), in drawing order; a later trace wins a tie
// (it is drawn on top). Returns {trace, index, dist} or null.
export function nearestPoint(points, x, y, maxDist = HOVER_DISTANCE) {
  let best = null;
  let bestD2 = maxDist * maxDist;
  for (let t = points.length - 1; t >= 0; t -= 1) {
    const { px, py } = points[t];
    for (let i = 0; i < px.length; i += 1) {
      const dx = px[i] - x;
      const dy = py[i] - y;
      const d2 = dx * dx + dy * dy;
      if (d2 < bestD2 || (best === null && d2 <= bestD2)) { // NaN compares false
        bestD2 = d2;
        best = { trace: points[t].trace, index: i };
      }
    }
  }
  if (best) best.dist = Math.sqrt(bestD2);
  return best;
}

// ---- the legend -------------------------------------------------------------------------
// Traces with one legend key hide and show together: their legendgroup, else their name.
export function legendKey(trace) {
  return trace.legendgroup ? `group:${trace.legendgroup}` : `name:${trace.name ?? ''}`;
}

// The legend's entries: one per trace shown in it (showlegend not false; the layout's
// showlegend, by default when there are two traces or more), {key, name, trace (index),
// colour, dash, mode, symbol}.
export function legendItems(fig) {
  const data = fig.data || [];
  const layout = fig.layout || {};
  const show = layout.showlegend ?? data.length > 1;
  if (!show) return [];
  const out = [];
  data.forEach((t, i) => {
    if (t.showlegend === false || t.visible === false) return;
    const marker = t.marker || {};
    const line = t.line || {};
    out.push({
      key: legendKey(t), name: t.name ?? `trace ${i}`, trace: i, mode: t.mode || 'markers',
      colour: line.color || marker.color || '#444', dash: line.dash || 'solid', symbol: marker.symbol || 'circle',
    });
  });
  return out;
}

// The indices of the traces to draw: not visible: false, not hidden through the legend.
export function visibleTraces(data, hidden) {
  const out = [];
  (data || []).forEach((t, i) => {
    if (t.visible === false || t.visible === 'legendonly') return;
    if (hidden && hidden.has(legendKey(t))) return;
    out.push(i);
  });
  return out;
}

// A line dash in px as Plotly draws it for a line of `width` px.
export function dashPattern(dash, width = 2) {
  const d = Math.max(width, 3);
  if (dash === 'dot') return [d, d];
  if (dash === 'dash') return [3 * d, 3 * d];
  if (dash === 'longdash') return [5 * d, 5 * d];
  if (dash === 'dashdot') return [3 * d, d, d, d];
  return [];
}

// ---- markers as pixels ---------------------------------------------------------------------
// Canvas paths and drawImage cost 6-8 µs a marker in Chromium's software rendering (50,000
// circles: 0.3-0.4 s); markers of large traces are blended into an RGBA buffer here instead.

// The coverage of a filled circle of radius r (device px) centred on a pixel grid cell
// offset (fx, fy) in [0, 1): a square of size x size weights (0..1), 4x4 samples a pixel.
export function discMask(r) {
  const size = Math.ceil(2 * r) + 2;
  const c = size / 2;
  const cov = new Float32Array(size * size);
  for (let j = 0; j < size; j += 1) {
    for (let i = 0; i < size; i += 1) {
      let n = 0;
      for (let sj = 0; sj < 4; sj += 1) {
        for (let si = 0; si < 4; si += 1) {
          const dx = i + (si + 0.5) / 4 - c;
          const dy = j + (sj + 0.5) / 4 - c;
          if (dx * dx + dy * dy <= r * r) n += 1;
        }
      }
      cov[j * size + i] = n / 16;
    }
  }
  return { size, cov };
}

// Blends markers into RGBA pixels (non-premultiplied, as an ImageData's) of a w x h image,
// source-over: one disc (mask) at each (px[i], py[i]) (device px; NaN skipped) in colour rgb
// at opacity alpha. Discs snap to whole pixels.
export function blendMarkers(rgba, w, h, px, py, mask, rgb, alpha) {
  const { size, cov } = mask;
  const half = size / 2;
  const [r, g, b] = rgb;
  for (let k = 0; k < px.length; k += 1) {
    const x0 = Math.round(px[k] - half);
    const y0 = Math.round(py[k] - half);
    if (!(x0 > -size && x0 < w && y0 > -size && y0 < h)) continue; // NaN too
    for (let j = 0; j < size; j += 1) {
      const y = y0 + j;
      if (y < 0 || y >= h) continue;
      for (let i = 0; i < size; i += 1) {
        const x = x0 + i;
        const c = cov[j * size + i];
        if (c === 0 || x < 0 || x >= w) continue;
        const a = c * alpha;
        const o = (y * w + x) * 4;
        const da = rgba[o + 3] / 255;
        const oa = a + da * (1 - a);
        const keep = (da * (1 - a)) / oa;
        const put = a / oa;
        rgba[o] = r * put + rgba[o] * keep;
        rgba[o + 1] = g * put + rgba[o + 1] * keep;
        rgba[o + 2] = b * put + rgba[o + 2] * keep;
        rgba[o + 3] = oa * 255;
      }
    }
  }
}

// '#9aa5b1' or 'rgb(1,2,3)' -> [r, g, b].
export function parseColour(c) {
  const s = String(c || '#444').trim();
  if (s[0] === '#') {
    const hex = s.length === 4 ? s.slice(1).split('').map((d) => d + d).join('') : s.slice(1, 7);
    const n = parseInt(hex, 16);
    return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  }
  const m = s.match(/[\d.]+/g);
  return m ? m.slice(0, 3).map(Number) : [68, 68, 68];
}
