// layerlab report: draws the report's figures. Runs in one function scope after
// web/js/format.js and web/js/plots.js (inlined by the report, see src/report/js_bundle.h),
// so the dashboard's figure builders are used as they are; Plotly is inlined before it.
// The numbers come from <script id="report-data" type="application/json">: {findings, page}
// (findings: `layerlab report --format json`; page: the study page's API responses).
// Each plot container (.plot[data-figure]) ends with data-state "ready" (and data-traces)
// or "error"; <body data-plots="done"> once every plot has settled.

const REPORT = JSON.parse(document.getElementById('report-data').textContent);
const FINDINGS = REPORT.findings;
const PAGE = REPORT.page;
const METRIC = FINDINGS.study.metric;
const GOAL = FINDINGS.study.goal;

// The depth curves in the shape of GET /summary, with the standard error as the spread.
function depthSummary(depth) {
  return {
    x: depth.parameter,
    y: 'value',
    group: depth.split_by.join(' \u00b7 '),
    series: depth.curves.map((c) => ({
      dataset: c.dataset,
      group: c.label,
      points: c.points.map((p) => ({ x: p.depth, mean: p.mean, std: p.se ?? 0, n: p.n, min: p.min, max: p.max })),
    })),
  };
}

// Metric against depth (mean ± standard error) with each curve's plateau marked: a star at
// the plateau depth, or a triangle at the deepest depth when no plateau is observed.
function depthFigure(depth) {
  const fig = metricFigure(depthSummary(depth), { metric: METRIC, goal: GOAL });
  const legend = new Set();
  for (const c of depth.curves) {
    const p = c.plateau;
    if (p.one_depth) continue;
    const line = fig.data.find((t) => t.meta && t.meta.role === 'series' && t.meta.dataset === c.dataset && t.meta.group === c.label);
    const at = c.points.find((q) => q.depth === p.plateau_depth);
    if (!line || !at) continue;
    const name = p.observed ? 'plateau depth' : 'no plateau (best is deepest)';
    fig.data.push({
      type: 'scatter',
      mode: 'markers',
      name,
      legendgroup: name,
      showlegend: !legend.has(name),
      xaxis: line.xaxis,
      yaxis: line.yaxis,
      x: [p.plateau_depth],
      y: [at.mean],
      marker: { symbol: p.observed ? 'star' : 'triangle-up', size: 16, color: line.line.color, line: { color: '#1f2933', width: 1 } },
      meta: { role: 'plateau', dataset: c.dataset, group: c.label, observed: p.observed },
      hovertemplate: `<b>${c.dataset}</b> \u00b7 ${c.label}<br>${p.verdict}<extra></extra>`,
    });
    legend.add(name);
  }
  return fig;
}

// Training time against depth with the least-squares line, in the shape of GET /summary.
function timeFitFigure(time) {
  return timeFigure({
    x: FINDINGS.depth.parameter,
    y: 'seconds',
    group: '',
    series: time.map((t) => ({
      dataset: t.dataset,
      group: null,
      points: t.points.map((p) => ({ x: p.depth, mean: p.mean, std: p.sd ?? 0, n: p.n })),
      fit: t.fit,
    })),
  });
}

// Importance: one horizontal bar per parameter and dataset with its bootstrap interval,
// parameters by mean share; datasets without shares (too few trials, noise) are left out
// (the table says why).
function importanceFigure(importance) {
  const shown = importance.filter((d) => d.verdict === 'shares');
  const mean = new Map();
  for (const d of shown) {
    for (const r of d.ranked) mean.set(r.parameter, (mean.get(r.parameter) || 0) + r.share / shown.length);
  }
  const params = [...mean.keys()].sort((a, b) => mean.get(b) - mean.get(a));
  if (!params.length) return emptyFigure('no dataset has shares to show (see the table)');
  const data = shown.map((d, k) => {
    const byName = new Map(d.ranked.map((r) => [r.parameter, r]));
    const at = (p, f) => (byName.get(p) ? f(byName.get(p)) : 0);
    return {
      type: 'bar',
      orientation: 'h',
      name: `${d.dataset} (n = ${d.n})`,
      y: params.map(label),
      x: params.map((p) => at(p, (r) => r.share)),
      error_x: {
        type: 'data',
        symmetric: false,
        array: params.map((p) => at(p, (r) => r.high - r.share)),
        arrayminus: params.map((p) => at(p, (r) => r.share - r.low)),
      },
      marker: { color: PALETTE[k % PALETTE.length] },
      meta: { role: 'importance', dataset: d.dataset },
      hovertemplate: `<b>${d.dataset}</b> (n = ${d.n})<br>%{y}: %{x:.1%} of the variance<extra></extra>`,
    };
  });
  const base = baseLayout();
  const layout = baseLayout({
    barmode: 'group',
    showlegend: shown.length > 1,
    xaxis: { ...base.xaxis, title: { text: 'share of the metric\u2019s variance explained alone (fANOVA)' }, tickformat: '.0%', rangemode: 'tozero' },
    yaxis: { ...base.yaxis, autorange: 'reversed' },
    height: Math.max(260, 90 + params.length * Math.max(1, shown.length) * 22),
  });
  return { data, layout };
}

const FIGURES = {
  depth: () => depthFigure(FINDINGS.depth),
  'time-fit': () => timeFitFigure(FINDINGS.time),
  importance: () => importanceFigure(FINDINGS.importance),
  'study-metric': () => metricFigure(PAGE.metric_summary, { metric: METRIC, goal: GOAL }),
  'study-time': () => timeFigure(PAGE.time_summary),
  'study-history': () => historyFigure(PAGE.history, { goal: GOAL, metric: METRIC }),
  'study-parcoords': () => parcoordsFigure(PAGE.parcoords, PAGE.parameters,
    { goal: GOAL, metric: METRIC, logParams: PAGE.log_params, choiceParams: PAGE.choice_params }),
  'study-curves': () => curvesFigure(PAGE.curves),
  'pareto-parameters': () => paretoFigure(PAGE.pareto, { cost: 'parameter_count', parameters: PAGE.parameters }),
  'pareto-seconds': () => paretoFigure(PAGE.pareto, { cost: 'seconds', parameters: PAGE.parameters }),
};

async function draw(div) {
  try {
    const build = FIGURES[div.dataset.figure];
    if (!build) throw new Error(`no figure '${div.dataset.figure}'`);
    const fig = build();
    if (fig.layout.height) div.style.height = `${fig.layout.height}px`;
    await window.Plotly.newPlot(div, fig.data, { ...fig.layout, autosize: true }, PLOT_CONFIG);
    div.dataset.traces = String(fig.data.length);
    div.dataset.state = 'ready';
  } catch (err) {
    div.dataset.state = 'error';
    console.error(`layerlab report: plot ${div.id}: ${err && err.stack ? err.stack : err}`);
  }
}

Promise.all([...document.querySelectorAll('.plot[data-figure]')].map(draw))
  .then(() => { document.body.dataset.plots = 'done'; });
