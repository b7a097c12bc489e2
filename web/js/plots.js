// Pure functions turning API JSON into Plotly figure specs {data, layout}.
//
// No DOM, no fetch, no globals: the same functions can build the figures of a
// self-contained HTML report. Every trace carries `meta.role` ('series', 'fit', 'points',
// 'best', 'parcoords', 'curve', 'front') so that tests and callers can tell traces apart.

import { fmtParam, fmtSeconds, fmtValue, grouped, isNum } from './format.js';

export const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#b07aa1',
  '#edc948', '#ff9da7', '#9c755f', '#79706e'];

export const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';

// Plotly config shared by all dashboard plots.
export const PLOT_CONFIG = {
  displaylogo: false,
  responsive: true,
  modeBarButtonsToRemove: ['select2d', 'lasso2d', 'autoScale2d', 'toggleSpikelines'],
  toImageButtonOptions: { format: 'png', scale: 2 },
};

const AXIS = {
  gridcolor: '#e8ecf1',
  zerolinecolor: '#d5dbe3',
  linecolor: '#c5cdd8',
  ticks: 'outside',
  tickcolor: '#c5cdd8',
  automargin: true,
};

export function baseLayout(extra = {}) {
  return {
    font: { family: FONT, size: 12, color: '#1f2933' },
    paper_bgcolor: '#ffffff',
    plot_bgcolor: '#ffffff',
    margin: { l: 60, r: 20, t: 30, b: 50 },
    hovermode: 'closest',
    hoverlabel: { font: { family: FONT, size: 12 } },
    legend: { orientation: 'h', x: 0, y: -0.22, yanchor: 'top', font: { size: 11 } },
    xaxis: { ...AXIS },
    yaxis: { ...AXIS },
    ...extra,
  };
}

// A figure that shows only a message where the plot would be (no empty axes).
export function emptyFigure(message) {
  return {
    data: [],
    layout: baseLayout({
      xaxis: { visible: false },
      yaxis: { visible: false },
      showlegend: false,
      annotations: [{
        text: message, showarrow: false, xref: 'paper', yref: 'paper', x: 0.5, y: 0.5,
        font: { size: 14, color: '#6b7685' },
      }],
    }),
  };
}

// "hidden_layers" -> "hidden layers"; "params.units" -> "units".
export function label(name) {
  return String(name || '').replace(/^(params|metrics)\./, '').replace(/_/g, ' ');
}

// What the y of a summary measures, for axis titles.
export function yLabel(y, metric) {
  if (!y || y === 'value') return label(metric || 'value');
  if (y === 'seconds') return 'training time (s)';
  if (y === 'epochs_run') return 'epochs run';
  return label(y);
}

function groupLabel(g) {
  if (g === null || g === undefined || g === '') return 'all';
  return fmtParam(g);
}

// The distinct values in first-seen order: the string '1' and the number 1 differ; objects
// (lists) are told apart by their text. Sets of the values themselves, not of text keys:
// 50,000 numbers take a few milliseconds.
function distinct(values) {
  const strings = new Set();
  const others = new Set(); // numbers (NaN once), null, undefined, booleans
  const objects = new Set();
  const out = [];
  for (const v of values) {
    let seen = others;
    let k = v;
    if (typeof v === 'string') seen = strings;
    else if (v !== null && typeof v === 'object') {
      seen = objects;
      k = String(v);
    }
    if (!seen.has(k)) {
      seen.add(k);
      out.push(v);
    }
  }
  return out;
}

function compareMixed(a, b) {
  if (isNum(a) && isNum(b)) return a - b;
  return String(a).localeCompare(String(b));
}

// The x axis for a set of x values: category for strings, log for positive numbers that
// span a factor of 16 or more (1, 2, 4 ... 64 hidden layers), linear otherwise.
export function xAxisFor(xs, { allowLog = true } = {}) {
  const vals = distinct(xs.filter((v) => v !== null && v !== undefined)).sort(compareMixed);
  if (!vals.length) return { type: 'linear' };
  if (!vals.every(isNum)) {
    return { type: 'category', categoryorder: 'array', categoryarray: vals.map(String) };
  }
  const min = vals[0];
  const max = vals[vals.length - 1];
  const axis = { type: allowLog && min > 0 && max / min >= 16 ? 'log' : 'linear' };
  // label every value when they are few and do not crowd each other
  let minGap = Infinity;
  for (let i = 1; i < vals.length; i += 1) minGap = Math.min(minGap, vals[i] - vals[i - 1]);
  const spaced = axis.type === 'log' || vals.length < 2 || minGap >= (max - min) / 14;
  if (vals.length <= 12 && vals.every(Number.isInteger) && spaced) {
    axis.tickmode = 'array';
    axis.tickvals = vals;
    axis.ticktext = vals.map(String);
  }
  return axis;
}

function xValue(x) {
  return isNum(x) ? x : String(x);
}

function orderedKeys(series, key) {
  return distinct(series.map((s) => (s[key] === null || s[key] === undefined ? '' : s[key])));
}

// Domains of a rows x cols grid of subplots, row-major from the top left.
function gridDomains(n, cols, { xgap = 0.07, ygap = 0.16 } = {}) {
  const rows = Math.ceil(n / cols);
  const out = [];
  for (let i = 0; i < n; i += 1) {
    const r = Math.floor(i / cols);
    const c = i % cols;
    const w = 1 / cols;
    const hgt = 1 / rows;
    out.push({
      x: [c * w + (c > 0 ? xgap / 2 : 0), (c + 1) * w - (c < cols - 1 ? xgap / 2 : 0)],
      y: [1 - (r + 1) * hgt + (r < rows - 1 ? ygap / 2 : 0), 1 - r * hgt - (r > 0 ? ygap / 2 : 0)],
    });
  }
  return { rows, domains: out };
}

// One subplot per dataset on a grid of up to 3 columns: sets layout's xaxisN/yaxisN (axes of
// dataset i have the suffix '' for the first, then '2', '3'...) and a title per dataset.
function datasetSubplots(layout, datasets, { xaxis, xTitle, yTitle }) {
  const cols = Math.min(datasets.length, 3);
  const { rows, domains } = gridDomains(datasets.length, cols);
  if (rows > 1) layout.height = 300 * rows + 40;
  delete layout.xaxis;
  delete layout.yaxis;
  layout.annotations = layout.annotations || [];
  datasets.forEach((ds, i) => {
    const sfx = i === 0 ? '' : String(i + 1);
    const d = domains[i];
    layout[`xaxis${sfx}`] = {
      ...AXIS, ...xaxis, domain: d.x, anchor: `y${sfx}`,
      title: { text: xTitle, standoff: 6 },
    };
    layout[`yaxis${sfx}`] = {
      ...AXIS, domain: d.y, anchor: `x${sfx}`,
      title: { text: i % cols === 0 ? yTitle : '' },
    };
    layout.annotations.push({
      text: `<b>${ds}</b>`, showarrow: false, xref: 'paper', yref: 'paper',
      x: (d.x[0] + d.x[1]) / 2, y: d.y[1], xanchor: 'center', yanchor: 'bottom',
      font: { size: 13 },
    });
  });
}

// (a) A metric against a parameter, one subplot per dataset, one line with error bars
// (mean ± std over the trials at each x, e.g. over seeds) per group.
// summary: GET /studies/{id}/summary. opts: {metric, goal, height}.
export function metricFigure(summary, opts = {}) {
  const series = (summary && summary.series) || [];
  if (!series.length) return emptyFigure('no finished trials with a value yet');
  const datasets = orderedKeys(series, 'dataset');
  const groups = orderedKeys(series, 'group');
  const allX = series.flatMap((s) => s.points.map((p) => p.x));
  const ylab = yLabel(summary.y, opts.metric);
  const groupName = summary.group ? label(summary.group) : '';

  const layout = baseLayout({
    margin: { l: 60, r: 20, t: 34, b: 50 },
    legend: { ...baseLayout().legend, title: { text: groupName ? `${groupName} ` : '' } },
    showlegend: groups.length > 1 || groups[0] !== '',
  });
  datasetSubplots(layout, datasets, { xaxis: xAxisFor(allX), xTitle: label(summary.x), yTitle: ylab });

  const seen = new Set();
  const data = [];
  for (const s of series) {
    const i = datasets.indexOf(s.dataset ?? '');
    const g = s.group ?? '';
    const gi = groups.indexOf(g);
    const sfx = i === 0 ? '' : String(i + 1);
    const color = PALETTE[gi % PALETTE.length];
    const pts = s.points || [];
    data.push({
      type: 'scatter',
      mode: 'lines+markers',
      name: groupLabel(g),
      legendgroup: `g${gi}`,
      showlegend: !seen.has(g),
      xaxis: `x${sfx}`,
      yaxis: `y${sfx}`,
      x: pts.map((p) => xValue(p.x)),
      y: pts.map((p) => p.mean),
      error_y: { type: 'data', array: pts.map((p) => p.std || 0), visible: true, thickness: 1.2, width: 4, color },
      // A binned point (a continuous x: docs/api.md) shows the range of x it covers.
      customdata: pts.map((p) => [p.n, p.std, p.min, p.max,
        'x_min' in p ? ` (${fmtValue(p.x_min)} to ${fmtValue(p.x_max)})` : '']),
      line: { color, width: 2 },
      marker: { color, size: 7 },
      meta: { role: 'series', dataset: s.dataset, group: g },
      hovertemplate: `<b>${s.dataset}</b> · ${groupLabel(g)}<br>${label(summary.x)} = %{x}%{customdata[4]}<br>` +
        `${ylab}: %{y:.4g} ± %{customdata[1]:.2g}<br>min %{customdata[2]:.4g}, max %{customdata[3]:.4g}` +
        '<br>n = %{customdata[0]}<extra></extra>',
    });
    seen.add(g);
  }
  return { data, layout };
}

// (b) Training time against a parameter with the server's least-squares fit as a dashed
// line, its slope and R² in the legend. summary: GET /summary?y=seconds.
export function timeFigure(summary, opts = {}) {
  const series = (summary && summary.series) || [];
  if (!series.length) return emptyFigure('no finished trials yet');
  const xlab = label(summary.x);
  const multiDataset = orderedKeys(series, 'dataset').length > 1;
  const allX = series.flatMap((s) => s.points.map((p) => p.x));
  const xaxis = xAxisFor(allX, { allowLog: false });
  const data = [];
  series.forEach((s, k) => {
    const color = PALETTE[k % PALETTE.length];
    const g = s.group ?? '';
    const name = [multiDataset || g === '' ? s.dataset : '', g === '' ? '' : groupLabel(g)]
      .filter(Boolean).join(' · ');
    const pts = s.points || [];
    data.push({
      type: 'scatter',
      mode: 'markers',
      name,
      legendgroup: `s${k}`,
      x: pts.map((p) => xValue(p.x)),
      y: pts.map((p) => p.mean),
      error_y: { type: 'data', array: pts.map((p) => p.std || 0), visible: true, thickness: 1, width: 3, color },
      customdata: pts.map((p) => [p.n, p.std]),
      marker: { color, size: 8 },
      meta: { role: 'series', dataset: s.dataset, group: g },
      hovertemplate: `<b>${name}</b><br>${xlab} = %{x}<br>time %{y:.3s}s ± %{customdata[1]:.2s}s` +
        '<br>n = %{customdata[0]}<extra></extra>',
    });
    const f = s.fit;
    const xs = pts.map((p) => p.x).filter(isNum);
    if (f && isNum(f.slope) && isNum(f.intercept) && xs.length) {
      const x0 = Math.min(...xs);
      const x1 = Math.max(...xs);
      const r2 = isNum(f.r2) ? f.r2.toFixed(3) : '—';
      data.push({
        type: 'scatter',
        mode: 'lines',
        name: `fit: ${fmtSeconds(f.slope)} per ${xlab.replace(/s$/, '')}, R² ${r2}`,
        legendgroup: `s${k}`,
        x: [x0, x1],
        y: [f.intercept + f.slope * x0, f.intercept + f.slope * x1],
        line: { color, width: 2, dash: 'dash' },
        meta: { role: 'fit', dataset: s.dataset, group: g, slope: f.slope, r2: f.r2 },
        hovertemplate: `${name} fit<br>${xlab} = %{x}<br>%{y:.3s}s<br>slope ${fmtSeconds(f.slope)}, ` +
          `intercept ${fmtSeconds(f.intercept)}, R² ${r2}, n = ${f.n}<extra></extra>`,
      });
    }
  });
  const layout = baseLayout({
    xaxis: { ...AXIS, ...xaxis, title: { text: xlab, standoff: 6 } },
    yaxis: { ...AXIS, title: { text: 'training time' }, ticksuffix: 's', exponentformat: 'SI', rangemode: 'tozero' },
    showlegend: true,
  });
  if (opts.height) layout.height = opts.height;
  return { data, layout };
}

// The running best of a value sequence (nulls keep the previous best).
export function runningBest(values, goal = 'maximize') {
  const out = [];
  let best = null;
  const better = goal === 'minimize' ? (a, b) => a < b : (a, b) => a > b;
  for (const v of values) {
    if (isNum(v) && (best === null || better(v, best))) best = v;
    out.push(best);
  }
  return out;
}

// What an aggregate counted (GET /summary's `trials`, /columns' `total`, and their
// `left_out`): "n = 812 analysed (completed or early-stopped with a value); left out: 40
// pruned". '' when the response says nothing of it.
export function countText(json) {
  const n = json && (isNum(json.trials) ? json.trials : json.total);
  if (!isNum(n)) return '';
  const left = (json && json.left_out) || {};
  const parts = [];
  if (left.pruned) parts.push(`${grouped(left.pruned)} pruned`);
  if (left.no_value) parts.push(`${grouped(left.no_value)} without a value`);
  return `n = ${grouped(n)} analysed (completed or early-stopped with a value)` +
    (parts.length ? `; left out: ${parts.join(', ')}` : '');
}

// (c) Optimisation history: every finished trial's value against its number (scattergl),
// and the running best (by the study goal) as a step line; one colour per dataset.
// columns: GET /columns?fields=number,value[,dataset].
export function historyFigure(columns, opts = {}) {
  const cols = (columns && columns.columns) || {};
  const number = cols.number || [];
  const value = cols.value || [];
  if (!number.length) return emptyFigure('no finished trials with a value yet');
  const goal = opts.goal || 'maximize';
  const ds = cols.dataset || number.map(() => '');
  const names = distinct(ds);
  const data = [];
  names.forEach((name, k) => {
    const xs = [];
    const ys = [];
    for (let i = 0; i < number.length; i += 1) {
      if (ds[i] === name) {
        xs.push(number[i]);
        ys.push(value[i]);
      }
    }
    const color = PALETTE[k % PALETTE.length];
    const who = name === '' ? 'trials' : name;
    data.push({
      type: 'scattergl',
      mode: 'markers',
      name: who,
      legendgroup: `d${k}`,
      x: xs,
      y: ys,
      marker: { color, size: 5, opacity: 0.55 },
      meta: { role: 'points', dataset: name },
      hovertemplate: `${who}<br>trial #%{x}<br>${label(opts.metric || 'value')} %{y:.4g}<extra></extra>`,
    });
    data.push({
      type: 'scatter',
      mode: 'lines',
      name: `best${name === '' ? '' : ` (${name})`}`,
      legendgroup: `d${k}`,
      x: xs,
      y: runningBest(ys, goal),
      line: { color, width: 2, shape: 'hv' },
      meta: { role: 'best', dataset: name },
      hovertemplate: `best so far %{y:.4g}<br>at trial #%{x}<extra></extra>`,
    });
  });
  const layout = baseLayout({
    xaxis: { ...AXIS, title: { text: 'trial number', standoff: 6 } },
    yaxis: { ...AXIS, title: { text: label(opts.metric || 'value') } },
    showlegend: true,
    annotations: [],
  });
  const total = columns.total;
  if (isNum(total) && isNum(columns.returned) && columns.returned < total) {
    layout.annotations.push({
      text: `showing ${grouped(columns.returned)} of ${grouped(total)} trials, evenly spaced`,
      showarrow: false, xref: 'paper', yref: 'paper', x: 1, y: 1.02, xanchor: 'right', yanchor: 'bottom',
      font: { size: 11, color: '#6b7685' },
    });
  }
  return { data, layout };
}

function niceNumber(v) {
  return Number(v.toPrecision(3));
}

// One parallel-coordinates dimension from a column of values. log: the parameter is
// searched on a log scale (plotted as log10, labelled with powers of ten).
// choices: the parameter is a list of choices (ticks evenly spaced, in value order);
// by default only up to 12 distinct integers are treated so.
export function dimension(name, values, labelText, { log = false, choices } = {}) {
  const present = values.filter((v) => v !== null && v !== undefined);
  if (present.length && present.every(isNum)) {
    const uniq = distinct(present).sort((a, b) => a - b);
    const asChoices = choices ?? (uniq.length <= 12 && uniq.every(Number.isInteger));
    if (asChoices && uniq.length > 1 && uniq.length <= 40) {
      // few values (a grid): evenly spaced ticks in value order, labelled with the values
      const index = new Map(uniq.map((v, i) => [v, i]));
      return {
        label: labelText,
        values: values.map((v) => (isNum(v) ? index.get(v) : NaN)),
        tickvals: uniq.map((_, i) => i),
        ticktext: uniq.map((v) => fmtParam(v)),
        range: [0, uniq.length - 1],
        meta: { name, distinct: uniq.length, scale: 'category' },
      };
    }
    const min = uniq[0];
    const max = uniq[uniq.length - 1];
    if (log && min > 0) {
      // log scale: parcoords has none, so plot log10 and label the powers of ten.
      const lo = Math.floor(Math.log10(min));
      const hi = Math.ceil(Math.log10(max));
      const tickvals = [];
      for (let e = lo; e <= hi; e += 1) tickvals.push(e);
      return {
        label: `${labelText} (log)`,
        values: values.map((v) => (isNum(v) ? Math.log10(v) : NaN)),
        tickvals,
        ticktext: tickvals.map((e) => (e >= -3 && e <= 3 ? String(niceNumber(10 ** e)) : `1e${e}`)),
        range: [Math.log10(min), Math.log10(max)],
        tickformat: '.3~g',
        meta: { name, distinct: uniq.length, scale: 'log' },
      };
    }
    const dim = {
      label: labelText, values: values.map((v) => (isNum(v) ? v : NaN)), tickformat: '.4~g',
      meta: { name, distinct: uniq.length, scale: 'linear' },
    };
    if (min === max) dim.range = [min - 1, max + 1];
    return dim;
  }
  // strings (or mixed): integer ticks labelled with the values, sorted
  const cats = distinct(values.map((v) => fmtParam(v, 6))).sort(compareMixed);
  const index = new Map(cats.map((c, i) => [c, i]));
  return {
    label: labelText,
    values: values.map((v) => index.get(fmtParam(v, 6))),
    tickvals: cats.map((_, i) => i),
    ticktext: cats,
    range: cats.length > 1 ? [0, cats.length - 1] : [-1, 1],
    meta: { name, distinct: cats.length, scale: 'category' },
  };
}

// The /columns fields the parallel coordinates need.
export function parcoordsFields(parameters, withDataset = true) {
  return ['number', 'value', ...(withDataset ? ['dataset'] : []), ...parameters.map((p) => `params.${p}`)];
}

// The axes of the parallel coordinates, in order: the dataset (when there are several),
// each searched parameter with more than one value, then the value. null without values.
// Shared by parcoordsFigure (Plotly, the report) and the dashboard's canvas view
// (web/js/parallel.js), so that both show the same fields in the same order.
export function parcoordsDimensions(columns, parameters, opts = {}) {
  const cols = (columns && columns.columns) || {};
  const value = cols.value || [];
  if (!value.length) return null;
  const dims = [];
  if (cols.dataset && distinct(cols.dataset).length > 1) dims.push(dimension('dataset', cols.dataset, 'dataset'));
  for (const p of parameters || []) {
    const col = cols[`params.${p}`];
    if (!col) continue;
    const dim = dimension(`params.${p}`, col, label(p), {
      log: (opts.logParams || []).includes(p),
      choices: opts.choiceParams ? opts.choiceParams.includes(p) : undefined,
    });
    if (dim.meta.distinct > 1) dims.push(dim);
  }
  dims.push({
    label: label(opts.metric || 'value'), values: value.map((v) => (isNum(v) ? v : NaN)), tickformat: '.4~g',
    meta: { name: 'value', scale: 'linear' },
  });
  return dims;
}

// (d) Parallel coordinates over the searched parameters and the value. Parameters with a
// single value are left out; strings and numeric choices become evenly spaced ticks
// labelled with the values. opts: {metric, goal, logParams, choiceParams}: the names of
// the parameters searched on a log scale, and of those given as a list of values.
export function parcoordsFigure(columns, parameters, opts = {}) {
  const dims = parcoordsDimensions(columns, parameters, opts);
  if (!dims) return emptyFigure('no finished trials with a value yet');
  const value = columns.columns.value;
  const metric = label(opts.metric || 'value');
  const minimize = opts.goal === 'minimize';
  const data = [{
    type: 'parcoords',
    dimensions: dims,
    line: {
      color: value.map((v) => (isNum(v) ? v : NaN)),
      colorscale: 'Viridis',
      reversescale: minimize,
      showscale: true,
      colorbar: { thickness: 10, title: { text: metric, side: 'right' }, len: 0.9 },
    },
    labelfont: { size: 12 },
    tickfont: { size: 11 },
    meta: { role: 'parcoords', rows: value.length },
  }];
  const sampled = isNum(columns.total) && isNum(columns.returned) && columns.returned < columns.total;
  const layout = baseLayout({ margin: { l: 70, r: 70, t: 50, b: sampled ? 46 : 24 } });
  delete layout.xaxis;
  delete layout.yaxis;
  if (sampled) {
    layout.annotations = [{
      text: `showing ${grouped(columns.returned)} of ${grouped(columns.total)} trials, evenly spaced`,
      showarrow: false, xref: 'paper', yref: 'paper', x: 0.5, y: -0.1, xanchor: 'center', yanchor: 'top',
      font: { size: 11, color: '#6b7685' },
    }];
  }
  return { data, layout };
}

// What a Pareto front trades the metric against: GET /pareto's keys and their words.
export const PARETO_COSTS = { parameter_count: 'parameter count', seconds: 'training time' };

function hoverSafe(text) {
  const s = String(text);
  return /[&<>]/.test(s) ? s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;') : s;
}

function costText(cost, v) {
  if (!isNum(v)) return '\u2014';
  return cost === 'seconds' ? fmtSeconds(v) : `${grouped(v)} parameters`;
}

// (f) Accuracy against cost: one subplot per dataset with every ranked trial (grey) and the
// Pareto front highlighted (markers joined by a staircase: what the best value is at each
// cost); hovering a point shows the trial's configuration. pareto: GET /studies/{id}/pareto.
// opts: {cost: 'parameter_count' | 'seconds', parameters: the names the hover lists
// (default: every parameter of the points)}. Front traces carry meta.trials (numbers).
export function paretoFigure(pareto, opts = {}) {
  const cost = opts.cost || 'parameter_count';
  const all = ((pareto && pareto.datasets) || []).filter((d) => (d.points && d.points.total) > 0);
  if (!all.length) return emptyFigure('no completed trials with a value yet');
  const costWords = PARETO_COSTS[cost] || label(cost);
  // Each dataset's points that have the cost (results stored before layerlab recorded a
  // parameter count have none); datasets without any are left out.
  const datasets = [];
  for (const d of all) {
    const p = d.points;
    const rows = [];
    for (let k = 0; k < p.number.length; k += 1) {
      if (!isNum(p[cost][k]) || !isNum(p.value[k])) continue;
      const params = {};
      for (const [name, col] of Object.entries(p.params || {})) params[name] = col[k];
      rows.push({ id: p.id[k], number: p.number[k], value: p.value[k], parameter_count: p.parameter_count[k], seconds: p.seconds[k], params });
    }
    if (rows.length) datasets.push({ ...d, rows });
  }
  if (!datasets.length) return emptyFigure(`no trial with a value records its ${costWords}`);
  const metric = label(pareto.metric || 'value');
  const safeMetric = hoverSafe(metric);
  // the hover text of every point (10,000 and more): the parameters' names and the string
  // values, escaped once each
  const once = (f) => {
    const seen = new Map();
    return (k) => {
      if (!seen.has(k)) seen.set(k, f(k));
      return seen.get(k);
    };
  };
  const safeName = once((p) => hoverSafe(label(p)));
  const safeString = once((v) => hoverSafe(fmtParam(v)));
  const safeValue = (v) => (typeof v === 'string' ? safeString(v) : hoverSafe(fmtParam(v)));
  const hover = (d, t, onFront) => {
    const keys = opts.parameters || Object.keys(t.params || {});
    const config = keys.filter((p) => t.params && p in t.params && t.params[p] !== null)
      .map((p) => `${safeName(p)} = ${safeValue(t.params[p])}`);
    return [`<b>${hoverSafe(d.dataset)}</b> \u00b7 trial #${t.number}${onFront ? ' \u00b7 <b>on the front</b>' : ''}`,
      `${safeMetric}: ${fmtValue(t.value)}`,
      `${costText('parameter_count', t.parameter_count)} \u00b7 ${fmtSeconds(t.seconds)}`,
      ...config].join('<br>');
  };
  let lo = Infinity;
  let hi = 0;
  for (const d of datasets) {
    for (const r of d.rows) {
      if (r[cost] > 0) {
        lo = Math.min(lo, r[cost]);
        hi = Math.max(hi, r[cost]);
      }
    }
  }
  const logX = hi > 0 && hi / lo >= 16;
  const layout = baseLayout({ margin: { l: 60, r: 20, t: 34, b: 50 }, showlegend: true });
  datasetSubplots(layout, datasets.map((d) => d.dataset), {
    xaxis: { type: logX ? 'log' : 'linear', exponentformat: 'SI', ticksuffix: cost === 'seconds' ? 's' : '' },
    xTitle: cost === 'seconds' ? 'training time' : 'parameters (weights and biases)',
    yTitle: metric,
  });
  const data = [];
  datasets.forEach((d, i) => {
    const sfx = i === 0 ? '' : String(i + 1);
    const { rows } = d;
    const color = PALETTE[i % PALETTE.length];
    // A trace of trials (rows of points, or front trials) on the dataset's subplot.
    const trace = (trials, onFront, extra) => ({
      showlegend: i === 0,
      xaxis: `x${sfx}`,
      yaxis: `y${sfx}`,
      x: trials.map((t) => t[cost]),
      y: trials.map((t) => t.value),
      customdata: trials.map((t) => [t.id, t.number]),
      text: trials.map((t) => hover(d, t, onFront)),
      hovertemplate: '%{text}<extra></extra>',
      ...extra,
    });
    data.push(trace(rows, false, {
      type: 'scattergl',
      mode: 'markers',
      name: 'trials',
      legendgroup: 'trials',
      marker: { color: '#9aa5b1', size: 6, opacity: 0.6 },
      meta: { role: 'points', dataset: d.dataset, cost },
    }));
    const front = ((d.fronts || {})[cost] || { trials: [] }).trials;
    data.push(trace(front, true, {
      type: 'scatter',
      mode: 'lines+markers',
      name: `Pareto front (${costWords})`,
      legendgroup: 'front',
      line: { color, width: 2, shape: 'hv' },
      marker: { color, size: 10, symbol: 'diamond', line: { color: '#1f2933', width: 1 } },
      meta: { role: 'front', dataset: d.dataset, cost, trials: front.map((t) => t.number) },
    }));
  });
  const thinned = datasets.filter((d) => d.points.returned < d.points.total);
  if (thinned.length) {
    layout.annotations.push({
      text: `showing ${thinned.map((d) => `${grouped(d.points.returned)} of ${grouped(d.points.total)} ${d.dataset} trials`).join(', ')}, the front in full`,
      showarrow: false, xref: 'paper', yref: 'paper', x: 1, y: 1.06, xanchor: 'right', yanchor: 'bottom',
      font: { size: 11, color: '#6b7685' },
    });
  }
  return { data, layout };
}

// (e) Learning curves of selected trials: train loss (dashed) and validation loss (solid)
// against epoch, one colour per trial. curves: [{trial: TRIAL_SUMMARY, curve: [{epoch,
// train_loss, val_loss, ...}], color?}].
export function curvesFigure(curves, opts = {}) {
  if (!curves || !curves.length) {
    return emptyFigure(opts.emptyText || 'click rows of the trials table to compare their learning curves');
  }
  const data = [];
  curves.forEach((c, k) => {
    const t = c.trial || {};
    const color = c.color || PALETTE[k % PALETTE.length];
    const pts = c.curve || [];
    const x = pts.map((p) => p.epoch);
    const tag = `#${t.number}${t.dataset ? ` ${t.dataset}` : ''}`;
    for (const kind of ['train', 'val']) {
      const key = `${kind}_loss`;
      data.push({
        type: 'scatter',
        mode: pts.length > 40 ? 'lines' : 'lines+markers',
        name: `${tag} ${kind === 'train' ? 'train' : 'validation'}`,
        legendgroup: `t${t.id}`,
        x,
        y: pts.map((p) => (isNum(p[key]) ? p[key] : null)),
        line: { color, width: 2, dash: kind === 'train' ? 'dash' : 'solid' },
        marker: { color, size: 4 },
        meta: { role: 'curve', trial_id: t.id, kind },
        hovertemplate: `${tag} ${kind} loss<br>epoch %{x}: %{y:.4g}<extra></extra>`,
      });
    }
  });
  // losses spanning orders of magnitude read better on a log axis
  const ys = data.flatMap((t) => t.y).filter(isNum);
  const positive = ys.length > 0 && ys.every((v) => v > 0);
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of ys) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  const logY = positive && hi / lo >= 100;
  const layout = baseLayout({
    xaxis: { ...AXIS, title: { text: 'epoch', standoff: 6 }, rangemode: 'tozero' },
    yaxis: { ...AXIS, title: { text: logY ? 'loss (log scale)' : 'loss' }, type: logY ? 'log' : 'linear', exponentformat: 'power' },
    showlegend: true,
  });
  return { data, layout };
}

// (g) Throughput: trials finished per time bucket, stacked by worker. tp: GET /throughput.
// One bar trace per worker series (meta.role 'throughput', meta.worker; y = done + failed
// in each bucket, the hover adds lost), and one for the workers summed as other_workers
// (meta.worker null). Worker ids are text from outside: escaped, never part of a template.
export function throughputFigure(tp, opts = {}) {
  const buckets = (tp && tp.buckets) || [];
  const series = ((tp && tp.workers) || []).map((w) => ({ ...w, name: w.worker }));
  const other = tp && tp.other_workers;
  if (other) series.push({ ...other, worker: null, name: `${other.count} other worker${other.count === 1 ? '' : 's'}` });
  const perBucket = isNum(tp && tp.bucket_seconds) ? tp.bucket_seconds : 60;
  const unit = perBucket === 60 ? 'minute' : perBucket % 60 === 0 ? `${perBucket / 60} min` : `${perBucket} s`;
  const finished = series.reduce((n, s) => n + (isNum(s.finished) ? s.finished : 0), 0);
  if (!buckets.length || finished === 0) {
    return emptyFigure(opts.emptyText || 'no trial finished in this window');
  }
  const data = series.map((s, k) => {
    const done = s.done || [];
    const failed = s.failed || [];
    const lost = s.lost || [];
    const name = hoverSafe(s.name);
    return {
      type: 'bar',
      name,
      x: buckets,
      y: buckets.map((_, i) => (done[i] || 0) + (failed[i] || 0)),
      text: buckets.map((_, i) => `<b>${name}</b><br>${done[i] || 0} done, ${failed[i] || 0} failed`
        + `${lost[i] ? `, ${lost[i]} lost` : ''}`),
      textposition: 'none',
      hovertemplate: '%{text}<br>%{x|%H:%M}<extra></extra>',
      marker: { color: s.worker === null ? '#9aa5b1' : PALETTE[k % PALETTE.length] },
      meta: { role: 'throughput', worker: s.worker },
    };
  });
  const layout = baseLayout({
    barmode: 'stack',
    bargap: 0.1,
    hovermode: 'closest',
    showlegend: true,
    xaxis: { ...AXIS, type: 'date', title: { text: 'time', standoff: 6 } },
    yaxis: { ...AXIS, title: { text: `trials finished per ${unit}` }, rangemode: 'tozero' },
  });
  return { data, layout };
}

// (h) The queue over time: depth (trials waiting) and in flight (claimed), as the server
// sampled them in the buckets of GET /throughput (queue.depth, queue.in_flight; null where
// no sample was taken: a gap, not a zero). meta.role 'queue', meta.series.
export function queueFigure(tp, opts = {}) {
  const buckets = (tp && tp.buckets) || [];
  const q = (tp && tp.queue) || {};
  const depth = q.depth || [];
  const inFlight = q.in_flight || [];
  if (!buckets.length || !depth.some(isNum)) {
    return emptyFigure(opts.emptyText || 'no sample of the queue yet in this window');
  }
  const trace = (ys, name, series, color, dash) => ({
    type: 'scatter',
    mode: 'lines+markers',
    name,
    x: buckets,
    y: buckets.map((_, i) => (isNum(ys[i]) ? ys[i] : null)),
    connectgaps: false,
    line: { color, width: 2, shape: 'hv', dash },
    marker: { color, size: 4 },
    hovertemplate: `${name} %{y}<br>%{x|%H:%M:%S}<extra></extra>`,
    meta: { role: 'queue', series },
  });
  const layout = baseLayout({
    showlegend: true,
    hovermode: 'x unified',
    xaxis: { ...AXIS, type: 'date', title: { text: 'time', standoff: 6 } },
    yaxis: { ...AXIS, title: { text: 'trials' }, rangemode: 'tozero' },
  });
  return {
    data: [trace(depth, 'queued', 'depth', PALETTE[0]), trace(inFlight, 'in flight', 'in_flight', PALETTE[1], 'dot')],
    layout,
  };
}

// Counts the points of a figure's traces with a given meta.role (all traces without one).
export function countPoints(data, role) {
  let n = 0;
  for (const t of data || []) {
    if (role && !(t.meta && t.meta.role === role)) continue;
    n += (t.x || []).length;
  }
  return n;
}

