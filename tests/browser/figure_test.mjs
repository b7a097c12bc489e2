// Unit tests of web/js/figure.js, the pure half of the dashboard's canvas figures (subplots,
// axis ranges and ticks, log and category axes, hover text and its escaping, the nearest
// point, the legend, markers as pixels), in plain Node (which also checks that it needs no
// DOM): node --test tests/browser/figure_test.mjs

import test from 'node:test';
import assert from 'node:assert/strict';
import {
  axisKey, axisRange, axisTicks, axisType, blendMarkers, canDraw, categories, dashPattern, discMask, dragZoom, fillTemplate,
  fitTicks, formatValue, hoverLines, legendItems, legendKey, makeScale, markupText, nearestPoint, paperToPixel,
  parseColour, parseMarkup, siText, subplotBox, subplots, toUnit, visibleTraces,
} from '../../web/js/figure.js';
import {
  curvesFigure, emptyFigure, historyFigure, metricFigure, paretoFigure, queueFigure, throughputFigure, timeFigure,
} from '../../web/js/plots.js';

const summary = {
  x: 'hidden_layers', y: 'value', group: 'activation', trials: 10,
  series: [
    { dataset: 'iris', group: 'relu', points: [{ x: 1, mean: 0.9, std: 0.01, n: 3 }, { x: 4, mean: 0.95, std: 0.02, n: 2 }] },
    { dataset: 'iris', group: 'tanh', points: [{ x: 1, mean: 0.8, std: null, n: 1 }] },
    { dataset: 'wine', group: 'relu', points: [{ x: 2, mean: 0.7, std: 0.1, n: 4 }] },
  ],
};

test('canDraw: the study page figures yes; bars and date axes (the workers page) no', () => {
  const tp = { buckets: ['2026-12-02T10:00:00Z'], bucket_seconds: 60, workers: [{ worker: 'w', done: [1], failed: [0], lost: [0], finished: 1 }], queue: { depth: [3], in_flight: [1] } };
  for (const fig of [metricFigure(summary), timeFigure({ x: 'units', series: [] }), emptyFigure('x'),
    historyFigure({ columns: { number: [1], value: [0.5] } }), curvesFigure([])]) {
    assert.equal(canDraw(fig), true);
  }
  assert.equal(canDraw(throughputFigure(tp)), false);
  assert.equal(canDraw(queueFigure(tp)), false); // scatter, but over a date axis
  assert.equal(canDraw({ data: [{ type: 'parcoords' }], layout: {} }), false);
});

test('subplots: one per dataset, by the axes of the layout and their domains', () => {
  const fig = metricFigure(summary);
  const subs = subplots(fig);
  assert.deepEqual(subs.map((s) => [s.x, s.y]), [['x', 'y'], ['x2', 'y2']]);
  assert.deepEqual(subs.map((s) => s.traces), [[0, 1], [2]]);
  assert.equal(axisKey('x2'), 'xaxis2');
  assert.equal(axisKey('y'), 'yaxis');
  // two subplots side by side: the first on the left, the gap between them
  const area = { left: 100, right: 1100, top: 20, bottom: 320 };
  const a = subplotBox(area, subs[0].xa, subs[0].ya);
  const b = subplotBox(area, subs[1].xa, subs[1].ya);
  assert.equal(a.left, 100);
  assert.equal(b.right, 1100);
  assert.ok(a.right < b.left, 'the subplots overlap');
  assert.ok(Math.abs(a.right - 565) < 1e-9 && Math.abs(b.left - 635) < 1e-9, `${a.right} ${b.left}`);
  assert.deepEqual([a.top, a.bottom], [20, 320]);
  // four datasets: two rows, the first row on top
  const four = metricFigure({ ...summary, series: ['a', 'b', 'c', 'd'].map((d) => ({ dataset: d, group: null, points: [{ x: 1, mean: 1, n: 1 }] })) });
  const boxes = subplots(four).map((s) => subplotBox(area, s.xa, s.ya));
  assert.equal(boxes.length, 4);
  assert.ok(boxes[0].bottom < boxes[3].top, 'the second row is not below the first');
  assert.equal(boxes[3].left, boxes[0].left);
  assert.equal(boxes[0].top, 20);
  // the empty figure has no axes, only its message
  assert.deepEqual(subplots(emptyFigure('nothing')), []);
  assert.deepEqual(paperToPixel(area, 0.5, 0.5), { x: 600, y: 170 });
});

test('ranges: padding for markers, none for lines along x, tozero, a single value', () => {
  assert.deepEqual(axisRange({}, 'linear', [[0, 10]]), [-0.5, 10.5]);
  assert.deepEqual(axisRange({}, 'linear', [[0, 10]], { markers: false }), [0, 10]);
  assert.deepEqual(axisRange({ rangemode: 'tozero' }, 'linear', [[2, 10]]), [0, 10.5]);
  assert.deepEqual(axisRange({}, 'linear', [[5, 5]]), [2.5, 7.5]);
  assert.deepEqual(axisRange({}, 'linear', [[NaN]]), [-1, 1]);
  assert.deepEqual(axisRange({ range: [1, 2] }, 'linear', [[0, 10]]), [1, 2]);
  // error bars: the caller passes the ends of the bars
  assert.deepEqual(axisRange({}, 'linear', [[0.8, 0.9], [1.0, 1.1]], { pad: 0 }), [0.8, 1.1]);
});

test('log axes: units are log10, non-positive values are not drawn, ticks are powers of ten', () => {
  const u = toUnit('log');
  assert.equal(u(1000), 3);
  assert.ok(Number.isNaN(u(0)));
  assert.ok(Number.isNaN(u(-5)));
  assert.ok(Number.isNaN(u(null)));
  const units = [100, 3000, 1e6].map(u);
  const range = axisRange({ type: 'log' }, 'log', [units]);
  assert.ok(range[0] < 2 && range[1] > 6);
  const ticks = axisTicks({ type: 'log', exponentformat: 'SI' }, 'log', [2, 6]);
  assert.deepEqual(ticks.map((t) => t.u), [2, 3, 4, 5, 6]);
  assert.deepEqual(ticks.map((t) => t.text), ['100', '1k', '10k', '100k', '1M']);
  // a log axis over less than a decade: 1, 2, 5 times powers of ten
  const narrow = axisTicks({ type: 'log' }, 'log', [Math.log10(1.5), Math.log10(8)]);
  assert.deepEqual(narrow.map((t) => t.text), ['2', '5']);
  // the power format of the learning curves' loss axis: 0.01 ... 1
  assert.deepEqual(axisTicks({ type: 'log', exponentformat: 'power' }, 'log', [-2, 0]).map((t) => t.text), ['0.01', '0.1', '1']);
});

test('linear ticks: nice steps, as many decimals as the step needs, SI and a suffix', () => {
  assert.deepEqual(axisTicks({}, 'linear', [0.78, 0.97], { count: 4 }).map((t) => t.text), ['0.8', '0.85', '0.9', '0.95']);
  assert.deepEqual(axisTicks({}, 'linear', [0, 50000], { count: 5 }).map((t) => t.text), ['0', '10k', '20k', '30k', '40k', '50k']);
  assert.deepEqual(axisTicks({ ticksuffix: 's', exponentformat: 'SI' }, 'linear', [0, 0.02], { count: 4 }).map((t) => t.text),
    ['0s', '5ms', '10ms', '15ms', '20ms']);
  assert.deepEqual(axisTicks({ ticksuffix: 's', exponentformat: 'SI' }, 'linear', [0, 3], { count: 3 }).map((t) => t.text), ['0s', '1s', '2s', '3s']);
  // tickvals from the layout (xAxisFor: every hidden-layer count)
  const axis = { tickmode: 'array', tickvals: [1, 2, 4, 64], ticktext: ['1', '2', '4', '64'] };
  assert.deepEqual(axisTicks(axis, 'linear', [0, 10]).map((t) => t.text), ['1', '2', '4']);
  assert.deepEqual(axisTicks({ ...axis, type: 'log' }, 'log', [0, 2]).map((t) => t.u), [0, Math.log10(2), Math.log10(4), Math.log10(64)]);
  assert.equal(siText(2500, 500), '2.5k');
  assert.equal(siText(0.004, 0.001), '4m');
  // thinned along an axis: none closer than the gap
  const scale = makeScale(0, 10, 300, 0);
  const kept = fitTicks(axisTicks({}, 'linear', [0, 10], { count: 10 }), scale, 70);
  for (let i = 1; i < kept.length; i += 1) assert.ok(Math.abs(scale(kept[i].u) - scale(kept[i - 1].u)) >= 70);
});

test('category axes: the layout\'s order first, then values as they come; indices as units', () => {
  const axis = { type: 'category', categoryarray: ['relu', 'tanh'] };
  const cats = categories(axis, [['gelu', 'relu', null], ['tanh', 'elu']]);
  assert.deepEqual(cats, ['relu', 'tanh', 'gelu', 'elu']);
  const u = toUnit('category', cats);
  assert.equal(u('gelu'), 2);
  assert.ok(Number.isNaN(u('selu')));
  assert.equal(axisType({}, ['a']), 'category');
  assert.equal(axisType({}, [null, 3]), 'linear');
  assert.equal(axisType({ type: 'log' }, ['a']), 'log');
  assert.deepEqual(axisTicks(axis, 'category', [-0.5, 3.5], { cats }).map((t) => t.text), cats);
  assert.deepEqual(axisRange(axis, 'category', [[0, 1, 2, 3]]), [-0.5, 3.5]);
});

test('scales: data to pixels and back, y upwards', () => {
  const y = makeScale(0, 1, 300, 20);
  assert.equal(y(0), 300);
  assert.equal(y(1), 20);
  assert.equal(y.unit(160), 0.5);
});

test('zoom: a drag zooms a box, or one axis when it is flat, not a click', () => {
  const x = makeScale(0, 100, 0, 1000);
  const y = makeScale(0, 1, 300, 0);
  assert.deepEqual(dragZoom(x, y, 100, 30, 300, 150), { x: [10, 30], y: [0.5, 0.9] });
  assert.deepEqual(dragZoom(x, y, 300, 150, 100, 30), { x: [10, 30], y: [0.5, 0.9] }); // either way
  assert.deepEqual(dragZoom(x, y, 100, 30, 300, 33), { x: [10, 30] });
  assert.deepEqual(dragZoom(x, y, 100, 30, 102, 150), { y: [0.5, 0.9] });
  assert.equal(dragZoom(x, y, 100, 30, 103, 32), null);
});

test('hover text: templates filled with formats, <extra> dropped, markup as lines of runs', () => {
  const fig = metricFigure(summary, { metric: 'val_accuracy' });
  const lines = hoverLines(fig.data[0], 1);
  const text = lines.map((l) => l.map((r) => r.text).join(''));
  assert.deepEqual(text, ['iris · relu', 'hidden layers = 4', 'val accuracy: 0.9500 ± 0.020', 'min —, max —', 'n = 2']);
  assert.deepEqual(lines[0][0], { text: 'iris', bold: true });
  // A binned point of a continuous x (docs/api.md) names the range it covers.
  const binned = metricFigure({ x: 'learning_rate', y: 'value', group: '', trials: 250, series: [{ dataset: 'iris', group: null,
    points: [{ x: 0.0010107, x_min: 0.0010001, x_max: 0.0010215, mean: 0.47, std: 0, n: 250, min: 0.47, max: 0.47 }] }] });
  assert.equal(hoverLines(binned.data[0], 0).map((l) => l.map((r) => r.text).join(''))[1],
    'learning rate = 0.0010107 (0.001 to 0.001022)');
  assert.equal(fillTemplate('%{y:.3s}s ± %{customdata[1]:.2s}s<extra>x</extra>', { y: [0.0123], customdata: [[1, 0.002]] }, 0), '12.3ms ± 2.0ms');
  assert.equal(formatValue(0.9, '.4g'), '0.9000');
  assert.equal(formatValue(123456, '.4g'), '1.235e5');
  assert.equal(formatValue(1500, '.3~s'), '1.5k');
  assert.equal(formatValue(null, '.4g'), '—');
  assert.equal(formatValue('relu'), 'relu');
  // no template: the name and (x, y)
  assert.equal(markupText(hoverLines({ name: 'a', x: [1], y: [2] }, 0).map((l) => l.map((r) => r.text).join('')).join('<br>')), 'a\n(1, 2)');
});

test('hover text never carries HTML: tags other than <b> and <br> stay text, entities are decoded to text', () => {
  const lines = parseMarkup('<b>a</b><br><img src=x onerror=alert(1)>&lt;script&gt;<i>x</i>');
  assert.deepEqual(lines, [[{ text: 'a', bold: true }], [{ text: '<img src=x onerror=alert(1)><script><i>x</i>', bold: false }]]);
  // the Pareto view's hover: a parameter value with markup is escaped by plots.js and shows as typed
  const pareto = {
    metric: 'val_accuracy',
    datasets: [{
      dataset: 'iris<b>', ranked: 1,
      fronts: { parameter_count: { trials: [{ id: 4, number: 3, value: 0.9, parameter_count: 10, seconds: 1, params: { act: '<img src=x onerror=alert(1)>' } }] } },
      points: { total: 1, returned: 1, id: [4], number: [3], value: [0.9], parameter_count: [10], seconds: [1], params: { act: ['<img src=x onerror=alert(1)>'] } },
    }],
  };
  const fig = paretoFigure(pareto, { cost: 'parameter_count' });
  const hover = hoverLines(fig.data[1], 0);
  const text = hover.map((l) => l.map((r) => r.text).join(''));
  assert.equal(text[0], 'iris<b> · trial #3 · on the front');
  assert.equal(text[text.length - 1], 'act = <img src=x onerror=alert(1)>');
  assert.deepEqual(hover[0][0], { text: 'iris<b>', bold: true }); // the escaped name is text in the bold run
});

test('nearest point: within the hover distance, the nearest; a later trace wins a tie; NaN never', () => {
  const points = [
    { trace: 0, px: Float32Array.from([10, 50, 100]), py: Float32Array.from([10, 50, 100]) },
    { trace: 2, px: Float32Array.from([NaN, 50]), py: Float32Array.from([NaN, 50]) },
  ];
  assert.deepEqual(nearestPoint(points, 12, 11), { trace: 0, index: 0, dist: Math.hypot(2, 1) });
  const tie = nearestPoint(points, 51, 50);
  assert.equal(tie.trace, 2); // drawn on top (the Pareto front over the grey points)
  assert.equal(tie.index, 1);
  assert.equal(nearestPoint(points, 75, 75), null); // 35 px from the nearest
  assert.equal(nearestPoint(points, 75, 75, 40).index, 1);
  assert.equal(nearestPoint([], 0, 0), null);
  // 50,000 points: the one at the pointer
  const n = 50000;
  const px = new Float32Array(n);
  const py = new Float32Array(n);
  for (let i = 0; i < n; i += 1) {
    px[i] = (i % 500) * 2;
    py[i] = Math.floor(i / 500) * 3;
  }
  const hit = nearestPoint([{ trace: 1, px, py }], 2 * 123 + 0.4, 3 * 77 - 0.2);
  assert.deepEqual([hit.trace, hit.index], [1, 77 * 500 + 123]);
  assert.ok(Math.abs(hit.dist - Math.hypot(0.4, 0.2)) < 1e-6);
});

test('legend: an entry per trace shown in it; a click hides its legend group', () => {
  const fig = metricFigure(summary);
  const items = legendItems(fig);
  assert.deepEqual(items.map((i) => i.name), ['relu', 'tanh']); // relu once, though on two subplots
  const hidden = new Set([items[0].key]);
  assert.deepEqual(visibleTraces(fig.data, hidden), [1]); // relu hidden on both subplots
  assert.deepEqual(visibleTraces(fig.data, new Set()), [0, 1, 2]);
  assert.equal(legendKey({ name: 'a' }), 'name:a');
  assert.deepEqual(legendItems(emptyFigure('x')), []);
  const t = timeFigure({ x: 'units', series: [{ dataset: 'iris', group: null, points: [{ x: 1, mean: 1, n: 1 }, { x: 2, mean: 2, n: 1 }], fit: { slope: 1, intercept: 0, r2: 1, n: 2 } }] });
  const ti = legendItems(t);
  assert.deepEqual(ti.map((i) => i.dash), ['solid', 'dash']);
  assert.equal(ti[0].key, ti[1].key); // the fit hides with its points
  assert.deepEqual(dashPattern('dash', 2), [9, 9]);
  assert.deepEqual(dashPattern('solid', 2), []);
});

test('markers as pixels: a disc blended source-over in its colour, opacity kept, outside clipped', () => {
  const mask = discMask(3);
  assert.equal(mask.size, 8);
  const c = mask.cov[4 * mask.size + 4];
  assert.equal(c, 1); // the centre is covered
  assert.equal(mask.cov[0], 0); // the corner is not
  const w = 20;
  const h = 10;
  const rgba = new Uint8ClampedArray(w * h * 4);
  blendMarkers(rgba, w, h, Float32Array.from([10, NaN, -50]), Float32Array.from([5, 5, 5]), mask, [154, 165, 177], 0.6);
  const at = (x, y) => [...rgba.slice((y * w + x) * 4, (y * w + x) * 4 + 4)];
  assert.deepEqual(at(10, 5), [154, 165, 177, 153]);
  assert.deepEqual(at(0, 0), [0, 0, 0, 0]);
  // a second disc over the first: more opaque, same colour
  blendMarkers(rgba, w, h, Float32Array.from([10]), Float32Array.from([5]), mask, [154, 165, 177], 0.6);
  assert.deepEqual(at(10, 5), [154, 165, 177, 214]);
  assert.deepEqual(parseColour('#9aa5b1'), [154, 165, 177]);
  assert.deepEqual(parseColour('rgb(1, 2, 3)'), [1, 2, 3]);
});
