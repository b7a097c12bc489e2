// Unit tests of web/js/format.js in plain Node: node --test tests/browser/format_test.mjs

import test from 'node:test';
import assert from 'node:assert/strict';
import { bestNote, bestPerDataset, fmtInt, fmtValue, grouped } from '../../web/js/format.js';

test('bestNote: a leaderboard board in the words `layerlab status` uses', () => {
  const trial = (number, value) => ({ id: number + 100, number, value });
  assert.equal(bestNote({ dataset: 'wine', best_value: 1, best_count: 12, trials: [trial(3, 1), trial(4, 1)] }),
    '12 trials share the best value 1');
  assert.equal(bestNote({ dataset: 'digits', best_value: 0.97501, best_count: 1, trials: [trial(17, 0.97501)] }),
    'best 0.975 (trial #17)');
  assert.equal(bestNote({ dataset: 'iris', best_value: null, best_count: 0, trials: [] }), 'no trial with a value yet');
  assert.equal(bestNote(undefined), 'no trial with a value yet');
});

test('bestPerDataset: the studies list names each dataset\'s best, never one across them', () => {
  const entry = (dataset, value, number, count) => ({ dataset, trial_id: number + 100, number, value, count });
  // wine's 18 trials at 1.0 do not outrank iris: each dataset says its own
  assert.equal(bestPerDataset([entry('iris', 0.97333, 12, 1), entry('wine', 1, 29, 18)]),
    'iris 0.9733 (#12) \u00b7 wine 1 (18 tied)');
  assert.equal(bestPerDataset([entry('iris', null, null, 0), entry('wine', 1, 29, 1)]), 'wine 1 (#29)');
  assert.equal(bestPerDataset([entry('digits', 0.97501, 17, 1)]), '0.975 (trial #17)');
  assert.equal(bestPerDataset([entry('digits', 0.97501, 17, 3)]), '0.975 (3 tied)');
  assert.equal(bestPerDataset([entry('iris', null, null, 0)]), null);
  assert.equal(bestPerDataset([]), null);
  assert.equal(bestPerDataset(undefined), null);
});

test('grouped numbers: thousands separated, rounded, the dash for a missing value', () => {
  assert.equal(grouped(1234567.6), '1,234,568');
  assert.equal(grouped(-4321), '-4,321');
  assert.equal(grouped(0), '0');
  assert.equal(fmtInt(98765.4), '98,765');
  assert.equal(fmtInt(null), '\u2014');
  assert.equal(fmtValue(12345.6), '12,346');
  assert.equal(fmtValue(0.012345), '0.01235');
});

test('grouped numbers: as Intl.NumberFormat en-US writes them, for every size and sign', () => {
  const intl = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
  const values = [0, -0, 0.4, -0.4, 1, 9, 10, 99, 100, 999, 999.5, 1000, 1001, 9999, 12345, 123456, 999999.5, 1e6,
    1234567, 12345678901, 2 ** 53 - 1, 2 ** 53, 1e21, -1, -999, -1000, -1234567.8, NaN, Infinity, -Infinity];
  for (let k = 1; k < 1e15; k *= 7) values.push(k, -k, k + 0.5);
  for (const v of values) assert.equal(grouped(v), intl.format(Math.round(v)), String(v));
});
