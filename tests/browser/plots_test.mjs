// Unit tests of web/js/plots.js, the pure API-JSON -> Plotly-figure functions, in plain
// Node (which also checks that they need no DOM): node --test tests/browser/plots_test.mjs

import test from 'node:test';
import assert from 'node:assert/strict';
import {
  countPoints, countText, curvesFigure, dimension, historyFigure, metricFigure, paretoFigure, parcoordsFigure, queueFigure, runningBest,
  throughputFigure, timeFigure,
} from '../../web/js/plots.js';

const summary = {
  x: 'hidden_layers', y: 'value', group: 'activation', trials: 11,
  series: [
    { dataset: 'digits', group: 'relu', points: [{ x: 1, mean: 0.9, std: 0.01, n: 3, min: 0.89, max: 0.91 }, { x: 2, mean: 0.92, std: 0.02, n: 3, min: 0.9, max: 0.94 }], fit: { slope: 0.02, intercept: 0.88, r2: 0.9, n: 6 } },
    { dataset: 'digits', group: 'tanh', points: [{ x: 1, mean: 0.8, std: 0, n: 1, min: 0.8, max: 0.8 }], fit: null },
    { dataset: 'wine', group: 'relu', points: [{ x: 1, mean: 0.95, std: 0.01, n: 2, min: 0.94, max: 0.96 }, { x: 4, mean: 0.9, std: 0.01, n: 2, min: 0.89, max: 0.91 }], fit: null },
  ],
};

test('metricFigure: one trace per series, one subplot per dataset, n in customdata', () => {
  const fig = metricFigure(summary, { metric: 'val_accuracy' });
  assert.equal(fig.data.length, 3);
  assert.equal(countPoints(fig.data), 5);
  const n = fig.data.flatMap((t) => t.customdata.map((c) => c[0])).reduce((a, b) => a + b, 0);
  assert.equal(n, summary.trials);
  assert.deepEqual(fig.data.map((t) => t.xaxis), ['x', 'x', 'x2']);
  assert.ok(fig.layout.xaxis2 && fig.layout.yaxis2);
  assert.deepEqual(fig.data.map((t) => t.showlegend), [true, true, false]); // relu once
  assert.equal(fig.data[0].error_y.array[1], 0.02);
});

test('empty summaries give a message, not empty axes', () => {
  for (const fig of [metricFigure({ series: [] }), timeFigure({ series: [] }), historyFigure({ columns: {} }),
    parcoordsFigure({ columns: {} }, []), curvesFigure([])]) {
    assert.equal(fig.data.length, 0);
    assert.equal(fig.layout.xaxis.visible, false);
    assert.ok(fig.layout.annotations[0].text.length > 0);
  }
});

test('timeFigure draws the fit dashed, slope and R² in the legend', () => {
  const fig = timeFigure({ ...summary, y: 'seconds' });
  const fits = fig.data.filter((t) => t.meta.role === 'fit');
  assert.equal(fits.length, 1);
  assert.equal(fits[0].line.dash, 'dash');
  assert.match(fits[0].name, /R² 0\.900/);
  assert.deepEqual(fits[0].y, [0.9, 0.92].map((v, i) => 0.88 + 0.02 * [1, 2][i]));
});

test('runningBest follows the goal', () => {
  assert.deepEqual(runningBest([0.5, 0.4, 0.7, null, 0.6], 'maximize'), [0.5, 0.5, 0.7, 0.7, 0.7]);
  assert.deepEqual(runningBest([0.5, 0.4, 0.7, 0.3], 'minimize'), [0.5, 0.4, 0.4, 0.3]);
});

test('historyFigure: every returned trial is a point, per dataset', () => {
  const cols = { total: 5, returned: 4, columns: { number: [0, 1, 2, 3], value: [0.1, 0.3, 0.2, 0.5], dataset: ['a', 'b', 'a', 'a'] } };
  const fig = historyFigure(cols, { goal: 'maximize' });
  assert.equal(countPoints(fig.data, 'points'), 4);
  assert.equal(fig.data.find((t) => t.meta.role === 'points').type, 'scattergl');
  assert.deepEqual(fig.data.find((t) => t.meta.role === 'best' && t.meta.dataset === 'a').y, [0.1, 0.2, 0.5]);
  assert.match(fig.layout.annotations[0].text, /4 of 5/);
});

test('parcoords: strings become integer ticks, constant parameters are dropped', () => {
  const cols = { total: 3, returned: 3, columns: {
    value: [0.9, 0.8, 0.7], 'params.activation': ['tanh', 'relu', 'tanh'], 'params.units': [64, 64, 64],
    'params.lr': [0.001, 0.01, 0.1], 'params.dropout': [0.1, 0.2, 0.35],
  } };
  const fig = parcoordsFigure(cols, ['activation', 'units', 'lr', 'dropout'], { metric: 'val_accuracy' });
  const dims = fig.data[0].dimensions;
  assert.deepEqual(dims.map((d) => d.label), ['activation', 'lr', 'dropout', 'val accuracy']);
  assert.deepEqual(dims[0].values, [1, 0, 1]);
  assert.deepEqual(dims[0].ticktext, ['relu', 'tanh']);
  const log = dimension('params.lr', [1e-4, 3e-3, 1e-1, 2e-2, 5e-4, 1e-3, 7e-2, 2e-4, 9e-3, 4e-2, 6e-4, 8e-3, 3e-2], 'lr', { log: true });
  assert.equal(log.label, 'lr (log)');
  assert.deepEqual(log.tickvals, [-4, -3, -2, -1]);
});

test('curvesFigure: train and validation traces as long as the curve', () => {
  const curve = [1, 2, 3].map((e) => ({ epoch: e, train_loss: 1 / e, val_loss: e === 2 ? null : 1.1 / e }));
  const fig = curvesFigure([{ trial: { id: 7, number: 6, dataset: 'iris' }, curve }]);
  assert.equal(fig.data.length, 2);
  for (const t of fig.data) {
    assert.equal(t.meta.trial_id, 7);
    assert.equal(t.x.length, 3);
  }
  assert.equal(fig.data[1].y[1], null);
});

// GET /pareto of two datasets: iris with 3 trials (front #0 and #2 against parameters),
// wine with none that rank.
const pareto = {
  metric: 'val_accuracy', goal: 'maximize', limit: 5000, rule: '...',
  datasets: [
    {
      dataset: 'iris', ranked: 3,
      fronts: {
        parameter_count: { without_cost: 0, trials: [
          { id: 10, number: 0, value: 0.8, parameter_count: 100, seconds: 1, params: { hidden_layers: 1, activation: 'relu', seed: 0 } },
          { id: 12, number: 2, value: 0.9, parameter_count: 3000, seconds: 3, params: { hidden_layers: 4, activation: '<b>x</b>', seed: 0 } }] },
        seconds: { without_cost: 1, trials: [
          { id: 10, number: 0, value: 0.8, parameter_count: 100, seconds: 1, params: { hidden_layers: 1, activation: 'relu', seed: 0 } }] },
      },
      points: {
        total: 3, returned: 3, id: [10, 11, 12], number: [0, 1, 2], value: [0.8, 0.7, 0.9],
        parameter_count: [100, 200, 3000], seconds: [1, 2, null],
        params: { hidden_layers: [1, 2, 4], activation: ['relu', 'tanh', '<b>x</b>'], seed: [0, 0, 0] },
      },
    },
    { dataset: 'wine', ranked: 0, fronts: { parameter_count: { without_cost: 0, trials: [] }, seconds: { without_cost: 0, trials: [] } },
      points: { total: 0, returned: 0, id: [], number: [], value: [], parameter_count: [], seconds: [], params: {} } },
  ],
};

test('paretoFigure: every point grey, the front highlighted with its trial numbers, per dataset', () => {
  const fig = paretoFigure(pareto, { cost: 'parameter_count', parameters: ['hidden_layers', 'activation'] });
  assert.deepEqual(fig.data.map((t) => t.meta.role), ['points', 'front']); // wine has no points
  const [points, front] = fig.data;
  assert.deepEqual(points.x, [100, 200, 3000]);
  assert.deepEqual(front.meta.trials, [0, 2]);
  assert.deepEqual(front.x, [100, 3000]);
  assert.deepEqual(front.y, [0.8, 0.9]);
  assert.equal(front.line.shape, 'hv');
  assert.deepEqual(front.customdata, [[10, 0], [12, 2]]);
  assert.equal(fig.layout.xaxis.type, 'log'); // 100 to 3000 parameters
  // The hover names the trial and its configuration, markup in values escaped.
  assert.match(front.text[1], /trial #2/);
  assert.match(front.text[1], /hidden layers = 4/);
  assert.match(front.text[1], /activation = &lt;b&gt;x&lt;\/b&gt;/);
  assert.doesNotMatch(front.text[1], /seed/); // not among the parameters asked for
});

test('paretoFigure against time leaves out points without a time', () => {
  const fig = paretoFigure(pareto, { cost: 'seconds' });
  assert.deepEqual(fig.data[0].x, [1, 2]);
  assert.deepEqual(fig.data[1].meta.trials, [0]);
  assert.equal(fig.data[1].meta.cost, 'seconds');
  assert.match(fig.data[1].text[0], /seed = 0/); // all parameters by default
});

test('paretoFigure without ranked trials or costs says so', () => {
  const none = paretoFigure({ ...pareto, datasets: [pareto.datasets[1]] });
  assert.equal(none.data.length, 0);
  assert.match(none.layout.annotations[0].text, /no completed trials/);
  const noTime = { ...pareto, datasets: [{ ...pareto.datasets[0], points: { ...pareto.datasets[0].points, seconds: [null, null, null] } }] };
  const fig = paretoFigure(noTime, { cost: 'seconds' });
  assert.equal(fig.data.length, 0);
  assert.match(fig.layout.annotations[0].text, /training time/);
});

// GET /api/v1/throughput for 3 one-minute buckets: two workers shown, two summed as others.
const throughput = {
  from: '2023-11-14T22:13:00.000Z', to: '2023-11-14T22:16:00.000Z', bucket_seconds: 60,
  buckets: ['2023-11-14T22:13:00.000Z', '2023-11-14T22:14:00.000Z', '2023-11-14T22:15:00.000Z'],
  workers: [
    { worker: 'a<b>', done: [0, 3, 1], failed: [0, 1, 0], lost: [0, 0, 0], finished: 5 },
    { worker: '%{y}', done: [0, 1, 0], failed: [0, 0, 1], lost: [0, 2, 0], finished: 2 },
  ],
  other_workers: { count: 2, done: [1, 0, 0], failed: [0, 0, 0], lost: [0, 0, 1], finished: 1 },
  total: [1, 5, 2],
  queue: { sample_seconds: 10, depth: [null, 40, 12], in_flight: [null, 4, 3] },
};

test('throughputFigure: a stacked bar trace per worker, others last, y = done + failed', () => {
  const fig = throughputFigure(throughput);
  assert.equal(fig.layout.barmode, 'stack');
  assert.equal(fig.data.length, 3);
  assert.deepEqual(fig.data.map((t) => t.meta.role), ['throughput', 'throughput', 'throughput']);
  assert.deepEqual(fig.data.map((t) => t.meta.worker), ['a<b>', '%{y}', null]);
  assert.deepEqual(fig.data[0].y, [0, 4, 1]);
  assert.deepEqual(fig.data[1].y, [0, 1, 1]);
  assert.deepEqual(fig.data[2].y, [1, 0, 0]);
  assert.equal(fig.data[2].name, '2 other workers');
  // the stack adds up to the server's total per bucket
  const sums = throughput.buckets.map((_, i) => fig.data.reduce((n, t) => n + t.y[i], 0));
  assert.deepEqual(sums, throughput.total);
  assert.deepEqual(fig.data[0].x, throughput.buckets);
  assert.match(fig.layout.yaxis.title.text, /per minute/);
  // worker ids are escaped, and never part of a hover template (where %{...} would expand)
  assert.equal(fig.data[0].name, 'a&lt;b&gt;');
  assert.match(fig.data[1].text[1], /1 done, 0 failed, 2 lost/);
  for (const t of fig.data) assert.ok(!t.hovertemplate.includes('a<b>') && !t.hovertemplate.includes('%{y}'));
});

test('throughputFigure: nothing finished gives a message; other bucket widths name their unit', () => {
  const idle = { ...throughput, workers: [], other_workers: null, total: [0, 0, 0] };
  const fig = throughputFigure(idle, { emptyText: 'no trial finished in the last hour' });
  assert.equal(fig.data.length, 0);
  assert.equal(fig.layout.annotations[0].text, 'no trial finished in the last hour');
  assert.match(throughputFigure({ ...throughput, bucket_seconds: 300 }).layout.yaxis.title.text, /per 5 min/);
});

test('queueFigure: depth and in flight over the buckets, gaps where nothing was sampled', () => {
  const fig = queueFigure(throughput);
  assert.deepEqual(fig.data.map((t) => t.meta.series), ['depth', 'in_flight']);
  assert.deepEqual(fig.data[0].y, [null, 40, 12]);
  assert.deepEqual(fig.data[1].y, [null, 4, 3]);
  assert.equal(fig.data[0].connectgaps, false);
  assert.equal(countPoints(fig.data, 'queue'), 6);
  const none = queueFigure({ ...throughput, queue: { depth: [null, null, null], in_flight: [null, null, null] } });
  assert.equal(none.data.length, 0);
  assert.ok(none.layout.annotations[0].text.length > 0);
});

test('countText says what an aggregate counted and what it left out', () => {
  assert.equal(countText({ trials: 812, left_out: { pruned: 40, no_value: 0 } }),
    'n = 812 analysed (completed or early-stopped with a value); left out: 40 pruned');
  assert.equal(countText({ total: 3, returned: 3, left_out: { pruned: 0, no_value: 2 } }),
    'n = 3 analysed (completed or early-stopped with a value); left out: 2 without a value');
  assert.equal(countText({ total: 5 }), 'n = 5 analysed (completed or early-stopped with a value)');
  assert.equal(countText({ datasets: [] }), '');
});
