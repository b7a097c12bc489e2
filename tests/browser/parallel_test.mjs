// Unit tests of web/js/parallel.js, the pure half of the dashboard's canvas parallel
// coordinates (axes, ticks, colour buckets, brushing), in plain Node (which also checks that
// it needs no DOM): node --test tests/browser/parallel_test.mjs

import test from 'node:test';
import assert from 'node:assert/strict';
import {
  BUCKETS, GREY_INDEX, VIRIDIS, axisFromDimension, axisPos, axisValue, axisXs, brushMask, bucketColour, bucketOrder,
  colourBucket, composeRaster, axisText, logTicks, makeBrush, nearestRow, niceTicks, parallelModel, powerLabel,
  rasterBuffers, rasterLines, rasterSegment, scaleColour, thinTicks,
} from '../../web/js/parallel.js';
import { dimension, parcoordsFigure } from '../../web/js/plots.js';

const columns = {
  total: 12,
  returned: 6,
  columns: {
    value: [0.9, 0.8, 0.95, 0.7, 0.85, 0.6],
    dataset: ['a', 'a', 'a', 'a', 'a', 'a'],
    'params.activation': ['relu', 'tanh', 'relu', 'gelu', 'tanh', 'relu'],
    'params.lr': [1e-4, 1e-3, 3e-3, 1e-2, 1e-1, 5e-4],
    'params.units': [16, 32, 64, 16, 32, 64],
    'params.dropout': [0, 0.1, 0.25, 0.5, 0.3, 0.2],
    'params.seed': [1, 1, 1, 1, 1, 1],
  },
};
const params = ['activation', 'lr', 'units', 'dropout', 'seed'];
const opts = { metric: 'val_accuracy', goal: 'maximize', logParams: ['lr'], choiceParams: ['activation', 'units'] };

test('model: the axes of the Plotly parcoords, in the same order; constant parameters dropped', () => {
  const m = parallelModel(columns, params, opts);
  const fig = parcoordsFigure(columns, params, opts);
  assert.deepEqual(m.axes.map((a) => a.label), fig.data[0].dimensions.map((d) => d.label));
  assert.deepEqual(m.axes.map((a) => a.name), ['params.activation', 'params.lr', 'params.units', 'params.dropout', 'value']);
  assert.deepEqual(m.axes.map((a) => a.scale), ['category', 'log', 'category', 'linear', 'linear']);
  assert.equal(m.rows, 6);
  assert.equal(m.total, 12);
  assert.equal(m.returned, 6);
  assert.equal(m.metric, 'val accuracy');
  assert.equal(m.lo, 0.6);
  assert.equal(m.hi, 0.95);
});

test('model: several datasets add a dataset axis first; no values give a message', () => {
  const cols = { ...columns, columns: { ...columns.columns, dataset: ['a', 'b', 'a', 'b', 'a', 'b'] } };
  assert.equal(parallelModel(cols, params, opts).axes[0].name, 'dataset');
  const empty = parallelModel({ columns: {} }, params, opts);
  assert.equal(empty.rows, 0);
  assert.ok(empty.message.length > 0);
});

test('categorical axis: names sorted, values are indices, one tick per name', () => {
  const a = parallelModel(columns, params, opts).axes[0];
  assert.deepEqual(a.categories, ['gelu', 'relu', 'tanh']);
  assert.deepEqual([...a.values], [1, 2, 1, 0, 2, 1]);
  assert.deepEqual(a.ticks.map((t) => t.text), ['gelu', 'relu', 'tanh']);
  assert.deepEqual([a.lo, a.hi], [0, 2]);
  assert.equal(axisPos(a, 0), 0);
  assert.equal(axisPos(a, 2), 1);
  // numeric choices are categories too, labelled with their values
  const u = parallelModel(columns, params, opts).axes[2];
  assert.deepEqual(u.ticks.map((t) => t.text), ['16', '32', '64']);
  assert.deepEqual([...u.values], [0, 1, 2, 0, 1, 2]);
});

test('log axis: log10 values, ticks at the powers of ten inside the range', () => {
  const a = parallelModel(columns, params, opts).axes[1];
  assert.equal(a.label, 'lr (log)');
  assert.ok(Math.abs(a.values[0] - -4) < 1e-12);
  assert.deepEqual([a.lo, a.hi].map((v) => Math.round(v * 1e9) / 1e9), [-4, -1]);
  assert.deepEqual(a.ticks.map((t) => t.text), ['1e-4', '0.001', '0.01', '0.1']);
  assert.deepEqual(a.ticks.map((t) => t.v), [-4, -3, -2, -1]);
  assert.equal(powerLabel(3), '1000');
  assert.equal(powerLabel(-5), '1e-5');
  assert.equal(powerLabel(0), '1');
});

test('log ticks within one decade fall back to 1, 2, 5 times a power of ten, then the ends', () => {
  const t = logTicks(Math.log10(0.0012), Math.log10(0.009));
  assert.deepEqual(t.map((x) => x.text), ['0.002', '0.005']);
  const ends = logTicks(Math.log10(0.0021), Math.log10(0.0024));
  assert.equal(ends.length, 2);
  assert.equal(ends[0].text, '0.0021');
});

test('linear axis: nice ticks inside the range; a constant column gets a range of its own', () => {
  assert.deepEqual(niceTicks(0, 0.5, 5), [0, 0.1, 0.2, 0.3, 0.4, 0.5]);
  assert.deepEqual(niceTicks(0.6, 0.95, 5), [0.6, 0.7, 0.8, 0.9]);
  assert.deepEqual(niceTicks(3, 97, 4), [20, 40, 60, 80]);
  assert.deepEqual(niceTicks(-1, 1, 4), [-1, -0.5, 0, 0.5, 1]);
  assert.deepEqual(niceTicks(2, 2), [2]);
  const d = axisFromDimension(dimension('params.x', [5, 5, 5], 'x', {}));
  assert.deepEqual([d.lo, d.hi], [4, 6]);
  const v = parallelModel(columns, params, opts).axes[4];
  assert.deepEqual(v.ticks.map((t) => t.text), ['0.6', '0.7', '0.8', '0.9']);
  assert.equal(axisValue(v, axisPos(v, 0.8)), 0.8);
});

test('missing values are NaN on their axis', () => {
  const a = axisFromDimension(dimension('params.x', [1.5, null, 2.5], 'x', {}));
  assert.ok(Number.isNaN(a.values[1]));
  assert.deepEqual([a.lo, a.hi], [1.5, 2.5]);
});

test('colour: the best value gets the top bucket by the goal; Viridis ends', () => {
  assert.equal(colourBucket(0.95, 0.6, 0.95, false), BUCKETS - 1);
  assert.equal(colourBucket(0.6, 0.6, 0.95, false), 0);
  assert.equal(colourBucket(0.6, 0.6, 0.95, true), BUCKETS - 1);
  assert.equal(colourBucket(0.95, 0.6, 0.95, true), 0);
  assert.equal(colourBucket(NaN, 0, 1), -1);
  assert.equal(colourBucket(3, 3, 3), BUCKETS - 1); // one value: it is the best
  assert.equal(scaleColour(0), 'rgb(68,1,84)');
  assert.equal(scaleColour(1), 'rgb(253,231,37)');
  assert.equal(VIRIDIS.length, 17);
  assert.notEqual(bucketColour(0), bucketColour(BUCKETS - 1));
  const m = parallelModel(columns, params, opts);
  assert.equal(m.bucket[2], BUCKETS - 1); // 0.95, the best
  assert.equal(m.bucket[5], 0); // 0.6, the worst
  const min = parallelModel(columns, params, { ...opts, goal: 'minimize' });
  assert.equal(min.bucket[5], BUCKETS - 1);
  assert.ok(min.minimize);
});

test('bucket order: worst first, each row once, rows without a value left out', () => {
  const { order, start } = bucketOrder(Int16Array.from([3, 0, -1, 3, 1]), 4);
  assert.deepEqual([...order], [1, 4, 0, 3]);
  assert.deepEqual([...start], [0, 1, 2, 2, 4]);
});

test('brushing: a range on one axis, several axes with AND, categories by name', () => {
  const m = parallelModel(columns, params, opts);
  const dropout = m.axes[3];
  const value = m.axes[4];
  assert.equal(brushMask(m, new Map()), 6);
  // dropout from 0.1 to 0.3 (top of the axis is 0.5)
  const b = makeBrush(dropout, axisPos(dropout, 0.3), axisPos(dropout, 0.1));
  assert.ok(Math.abs(b.lo - 0.1) < 1e-12 && Math.abs(b.hi - 0.3) < 1e-12);
  const out = new Uint8Array(6);
  assert.equal(brushMask(m, new Map([['params.dropout', b]]), out), 4); // 0.1, 0.25, 0.3, 0.2
  assert.deepEqual([...out], [0, 1, 1, 0, 1, 1]);
  // and value >= 0.8
  const v = makeBrush(value, axisPos(value, 0.8), 1.5); // past the top: clamped
  assert.equal(v.hi, 0.95);
  assert.equal(brushMask(m, new Map([['params.dropout', b], ['value', v]]), out), 3);
  assert.deepEqual([...out], [0, 1, 1, 0, 1, 0]);
  // a category brush covers whole names; an object works as well as a Map
  const act = m.axes[0];
  const c = makeBrush(act, axisPos(act, 0.8), axisPos(act, 2.2));
  assert.deepEqual(c.categories, ['relu', 'tanh']);
  assert.equal(brushMask(m, { 'params.activation': c }), 5);
  // brushes of axes the model lacks are ignored
  assert.equal(brushMask(m, { 'params.gone': { lo: 0, hi: 0 } }), 6);
});

test('brushing: a category brush keeps its names when an update adds a category', () => {
  const m = parallelModel(columns, params, opts);
  const brush = makeBrush(m.axes[0], 0.9, 1); // tanh only (index 2 of 3)
  assert.deepEqual(brush.categories, ['tanh']);
  const more = { ...columns, columns: { ...columns.columns, 'params.activation': ['relu', 'tanh', 'relu', 'gelu', 'tanh', 'swish'] } };
  const m2 = parallelModel(more, params, opts);
  assert.deepEqual(m2.axes[0].categories, ['gelu', 'relu', 'swish', 'tanh']);
  const out = new Uint8Array(6);
  assert.equal(brushMask(m2, { 'params.activation': brush }, out), 2);
  assert.deepEqual([...out], [0, 1, 0, 0, 1, 0]);
});

test('missing values fail every brush on their axis', () => {
  const cols = { columns: { value: [1, 2, 3], 'params.x': [0.5, null, 1.5] } };
  const m = parallelModel(cols, ['x'], {});
  assert.equal(brushMask(m, { 'params.x': { lo: -10, hi: 10 } }), 2);
});

test('layout helpers: axis positions, tick thinning', () => {
  assert.deepEqual(axisXs(3, 0, 100), [0, 50, 100]);
  assert.deepEqual(axisXs(1, 0, 100), [50]);
  const ticks = [0, 1, 2, 3, 4, 5].map((v) => ({ v, text: String(v) }));
  assert.equal(thinTicks(ticks, (v) => v * 20).length, 6);
  assert.deepEqual(thinTicks(ticks, (v) => 100 - v * 10).map((t) => t.v), [0, 2, 4]);
});

const at = (buf, x, y) => ({ c: buf.pix[y * buf.w + x] >> 8, cov: buf.pix[y * buf.w + x] & 255 });

test('raster: a horizontal line on pixel centres covers one row fully, end to end', () => {
  const buf = rasterBuffers(10, 6);
  rasterSegment(buf, 0, 2.5, 10, 2.5, 7);
  for (let x = 0; x < 10; x += 1) {
    assert.deepEqual(at(buf, x, 2), { c: 7, cov: 255 });
    assert.equal(at(buf, x, 3).cov, 0);
    assert.equal(at(buf, x, 1).c, 0);
  }
  // between two rows: both nearly solid (twice Wu's half, capped)
  const half = rasterBuffers(4, 6);
  rasterSegment(half, 0, 3, 4, 3, 1);
  assert.ok(at(half, 1, 2).cov >= 250 && at(half, 1, 3).cov >= 250);
  // a quarter of the way: the nearer row solid, the other half
  const quarter = rasterBuffers(4, 6);
  rasterSegment(quarter, 0, 2.75, 4, 2.75, 1);
  assert.equal(at(quarter, 1, 2).cov, 255);
  assert.equal(at(quarter, 1, 3).cov, 128);
});

test('raster: steep and reversed segments cover one pixel per row; out of the image is clipped', () => {
  const buf = rasterBuffers(6, 10);
  rasterSegment(buf, 3.5, 9.5, 3.5, 0.5, 2); // bottom to top, vertical
  for (let y = 0; y < 10; y += 1) assert.deepEqual(at(buf, 3, y), { c: 2, cov: 255 });
  const clip = rasterBuffers(6, 6);
  rasterSegment(clip, -20, -20, 30, 30, 1); // the diagonal, from and to outside
  let lit = 0;
  for (let p = 0; p < clip.pix.length; p += 1) if (clip.pix[p] & 255) lit += 1;
  assert.ok(lit >= 6 && lit <= 12, `${lit} pixels lit`);
  assert.equal(at(clip, 2, 2).cov, 255);
});

test('raster: best bucket drawn last, brushed-out lines grey under them, missing values lift the pen', () => {
  // row 0 (the best) rises from the bottom of x to the top of the value, row 1 falls: they
  // cross in the middle; row 2 has no x
  const cols = { columns: { value: [0.9, 0.1, 0.5], 'params.x': [0, 1, null] } };
  const m = parallelModel(cols, ['x'], {});
  assert.equal(m.axes.length, 2);
  const pos = m.axes.map((a) => Float32Array.from(a.values, (v) => axisPos(a, v)));
  const buf = rasterBuffers(20, 12);
  const frame = { xs: [0, 20], pos, top: 1.5, bottom: 10.5, groups: bucketOrder(m.bucket) };
  assert.equal(rasterLines(buf, frame), 2); // the row without x has no segment
  const best = m.bucket[0] + 1;
  const worst = m.bucket[1] + 1;
  assert.equal(best, BUCKETS);
  assert.equal(at(buf, 0, 10).c, best);
  assert.equal(at(buf, 0, 1).c, worst);
  assert.equal(at(buf, 19, 1).c, best);
  // where they cross, the best line is on top
  const mid = [5, 6].map((y) => at(buf, 10, y)).filter((p) => p.cov >= 128);
  assert.ok(mid.length > 0 && mid.every((p) => p.c === best), JSON.stringify(mid));
  // a brush that takes row 0 only: row 1 turns grey
  assert.equal(rasterLines(buf, { ...frame, mask: new Uint8Array([1, 0, 1]) }), 2);
  assert.equal(at(buf, 0, 1).c, GREY_INDEX);
  assert.equal(at(buf, 0, 10).c, best);
  assert.ok([5, 6].map((y) => at(buf, 10, y)).filter((p) => p.cov >= 128).every((p) => p.c === best));
});

test('raster: composed pixels take the bucket colour, opacity from coverage; grey lighter', () => {
  const buf = rasterBuffers(3, 1);
  buf.pix[0] = (BUCKETS << 8) | 255;
  buf.pix[1] = (GREY_INDEX << 8) | 255;
  buf.pix[2] = 0;
  const rgba = new Uint8ClampedArray(12);
  const colours = Array.from({ length: BUCKETS }, (_, b) => bucketColour(b));
  composeRaster(buf, rgba, { colours, grey: '#c5cdd8', alpha: 1, greyAlpha: 0.4 });
  assert.deepEqual([...rgba.slice(0, 4)], [...colours[BUCKETS - 1].match(/\d+/g).map(Number), 255]);
  assert.deepEqual([...rgba.slice(4, 8)], [0xc5, 0xcd, 0xd8, 102]);
  assert.equal(rgba[11], 0);
});

test('raster: segments between two category axes are drawn once per colour, the same picture', () => {
  const n = 400;
  const cols = {
    columns: {
      value: Array.from({ length: n }, (_, i) => (i % 7) / 7),
      'params.a': Array.from({ length: n }, (_, i) => ['x', 'y', 'z'][i % 3]),
      'params.b': Array.from({ length: n }, (_, i) => [1, 2][i % 2]),
    },
  };
  const m = parallelModel(cols, ['a', 'b'], { choiceParams: ['a', 'b'] });
  assert.deepEqual(m.axes.map((a) => a.scale), ['category', 'category', 'linear']);
  const pos = m.axes.map((a) => Float32Array.from(a.values, (v) => axisPos(a, v)));
  const frame = { xs: [2, 60, 118], pos, top: 2.5, bottom: 37.5, groups: bucketOrder(m.bucket) };
  const plain = rasterBuffers(120, 40);
  const shared = rasterBuffers(120, 40);
  assert.equal(rasterLines(plain, frame), n);
  assert.equal(rasterLines(shared, { ...frame, discrete: m.axes.map((a) => a.scale === 'category') }), n);
  // the same colours, and nearly all the same coverage (a line drawn between two copies of
  // a shared segment may leave a different edge where it crosses it)
  const colour = (buf) => Array.from(buf.pix, (v) => v >> 8);
  assert.deepEqual(colour(shared), colour(plain));
  let same = 0;
  for (let p = 0; p < plain.pix.length; p += 1) if (plain.pix[p] === shared.pix[p]) same += 1;
  assert.ok(same / plain.pix.length > 0.98, `${same} of ${plain.pix.length} pixels the same`);
});

test('hover: the nearest line between two axes, its values as text', () => {
  const m = parallelModel(columns, params, opts);
  const pos = m.axes.map((a) => Float32Array.from(a.values, (v) => axisPos(a, v)));
  const xs = axisXs(m.axes.length, 0, 400); // 0, 100, 200, 300, 400
  // at the value axis (x = 400), row 2 (0.95, the best) is at the top (y = 0 of 0..100)
  assert.equal(nearestRow(pos, xs, 0, 100, 400, 1), 2);
  assert.equal(nearestRow(pos, xs, 0, 100, 400, 50, { maxDist: 3 }), -1); // no value near 0.775
  assert.equal(nearestRow(pos, xs, 0, 100, 500, 1), -1); // right of the last axis
  // a mask leaves rows out
  const mask = new Uint8Array([1, 1, 0, 1, 1, 1]);
  assert.equal(nearestRow(pos, xs, 0, 100, 400, 1, { mask, maxDist: 15 }), 0); // 0.9: y = 100 * 0.05 / 0.35 = 14.3
  assert.deepEqual(m.axes.map((a) => axisText(a, 2)), ['relu', '0.003', '64', '0.25', '0.95']);
  const missing = axisFromDimension(dimension('params.x', [1.5, null, 2.5], 'x', {}));
  assert.equal(axisText(missing, 1), '\u2014');
});
