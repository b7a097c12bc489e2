// Browser test of the study page's Pareto view (accuracy against cost), against a running
// layerlab server and a finished study whose fronts are known:
//
//   node tests/browser/pareto_page.mjs --base http://127.0.0.1:8080 --study 1 --out DIR \
//     --expect '{"iris": {"parameter_count": [1, 2, 5, 7], "seconds": [0, 1, 3, 2, 5, 7]}, ...}'
//
// --expect: each dataset's fronts as trial numbers, cheapest first (browser_test.cc passes
// tests/support/known_pareto_study.h's). Checks GET /pareto against them, then opens
// #/study/ID in headless Chromium (LAYERLAB_CHROMIUM, default /usr/bin/chromium) and, for
// each cost of the "against" control: one subplot per dataset whose highlighted front trace
// holds exactly the expected trials at the API's coordinates, and a grey trace with every
// ranked trial; a real mouse hover over a front point shows that trial's configuration, and
// a click shows its details. Prints one JSON line ("ok": true, what was seen) and exits 0;
// exits 1 with the failed check on stderr.

import path from 'node:path';

import { api as apiAt, check, CheckFailed, openPage, parseArgs, run } from './page_check.mjs';

const args = parseArgs(process.argv, ['base', 'study', 'expect'],
  'node tests/browser/pareto_page.mjs --base URL --study ID --out DIR --expect JSON');
const BASE = args.base;
const STUDY = String(args.study);
const EXPECT = JSON.parse(args.expect);
const OUT = args.out;
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const api = (p) => apiAt(BASE, p);

// Runs in the page: the Pareto plot's traces, once drawn for `cost`.
function readPareto(cost) {
  const div = document.getElementById('plot-pareto');
  if (!div || div.dataset.state !== 'ready' || !Array.isArray(div.data)) return null;
  const traces = div.data.filter((t) => t.meta && t.meta.cost === cost);
  if (!traces.length) return null;
  return traces.map((t) => ({
    role: t.meta.role, dataset: t.meta.dataset, trials: t.meta.trials || null, xaxis: t.xaxis || 'x',
    x: [...t.x], y: [...t.y], ids: (t.customdata || []).map((c) => c[0]), mode: t.mode, shape: t.line && t.line.shape,
  }));
}

// Runs in the page: where a trace's point is on screen. The view is a canvas
// (web/js/components/figure.js): div.pointPosition(trace, k) says where point k of trace
// `trace` is drawn, in CSS pixels from the div's top left corner.
function pointOnScreen({ dataset, k }) {
  const div = document.getElementById('plot-pareto');
  const t = div.data.findIndex((d) => d.meta && d.meta.role === 'front' && d.meta.dataset === dataset);
  const at = div.pointPosition(t, k);
  if (!at) return null;
  const box = div.getBoundingClientRect();
  return { x: box.left + at.x, y: box.top + at.y };
}

const results = { ok: false, base: BASE, study: STUDY, checks: {} };

async function main(state) {
  const study = await api(`/api/v1/studies/${encodeURIComponent(STUDY)}`);
  const p = await api(`/api/v1/studies/${encodeURIComponent(STUDY)}/pareto`);
  check(study.status === 'finished', `the test needs a finished study; study ${STUDY} is ${study.status}`);
  // The API's fronts are the known ones.
  check(same(p.datasets.map((d) => d.dataset), study.datasets), `/pareto lists [${p.datasets.map((d) => d.dataset)}]`);
  for (const d of p.datasets) {
    for (const [cost, want] of Object.entries(EXPECT[d.dataset] || {})) {
      const got = d.fronts[cost].trials.map((t) => t.number);
      check(same(got, want), `/pareto: ${d.dataset} against ${cost} is [${got}], expected [${want}]`);
    }
  }

  const pageErrors = [];
  const { browser, page } = await openPage(pageErrors);
  state.browser = browser;
  await page.goto(`${BASE}/#/study/${encodeURIComponent(STUDY)}`, { waitUntil: 'commit', timeout: 15_000 });
  // The page draws a view once it comes near sight: bring the Pareto card there.
  await page.waitForSelector('#plot-pareto', { state: 'attached', timeout: 15_000 });
  await page.evaluate(() => document.getElementById('plot-pareto').closest('.card').scrollIntoView({ block: 'center' }));

  results.screenshots = [];
  for (const cost of ['parameter_count', 'seconds']) {
    if (cost !== 'parameter_count') await page.selectOption('#ctl-cost', cost);
    const handle = await page.waitForFunction(readPareto, cost, { timeout: 40_000, polling: 100 })
      .catch(() => { throw new CheckFailed(`#plot-pareto did not draw the ${cost} fronts within 40 s`); });
    const traces = await handle.jsonValue();
    const fronts = traces.filter((t) => t.role === 'front');
    const points = traces.filter((t) => t.role === 'points');
    check(same(fronts.map((t) => t.dataset), study.datasets),
      `${cost}: front traces for [${fronts.map((t) => t.dataset)}], not the datasets [${study.datasets}]`);
    check(new Set(fronts.map((t) => t.xaxis)).size === fronts.length, `${cost}: the datasets share a subplot`);
    results.checks[cost] = {};
    for (const f of fronts) {
      const api_ = p.datasets.find((d) => d.dataset === f.dataset);
      const want = EXPECT[f.dataset][cost];
      check(same(f.trials, want), `${cost}: the highlighted ${f.dataset} front is [${f.trials}], expected [${want}]`);
      const apiFront = api_.fronts[cost].trials;
      check(same(f.x, apiFront.map((t) => t[cost])) && same(f.y, apiFront.map((t) => t.value)),
        `${cost}: the ${f.dataset} front is drawn at other coordinates than /pareto's`);
      check(same(f.ids, apiFront.map((t) => t.id)), `${cost}: the ${f.dataset} front carries other trial ids`);
      check(f.mode === 'lines+markers' && f.shape === 'hv', `${cost}: the ${f.dataset} front is not a highlighted staircase`);
      const pts = points.find((t) => t.dataset === f.dataset);
      check(pts && pts.x.length === api_.ranked, `${cost}: ${f.dataset} shows ${pts ? pts.x.length : 0} points, ${api_.ranked} trials rank`);
      results.checks[cost][f.dataset] = f.trials;
    }

    // A real hover over the first dataset's most accurate front point shows its configuration.
    const first = fronts[0];
    const k = first.trials.length - 1;
    const trial = p.datasets[0].fronts[cost].trials[k];
    await page.evaluate(() => {
      document.getElementById('plot-pareto').scrollIntoView({ block: 'center' });
    });
    const at = await page.evaluate(pointOnScreen, { dataset: first.dataset, k });
    check(at, `${cost}: trial #${trial.number} is not drawn on the ${first.dataset} subplot`);
    await page.mouse.move(at.x, at.y);
    const hover = await page.waitForFunction(() => {
      const el = document.querySelector('#plot-pareto .figure-tip');
      return el && !el.hidden ? el.textContent : null;
    }, null, { timeout: 10_000 }).then((h) => h.jsonValue())
      .catch(() => { throw new CheckFailed(`${cost}: hovering trial #${trial.number} showed no label`); });
    for (const part of [`trial #${trial.number}`, `hidden layers = ${trial.params.hidden_layers}`,
      `activation = ${trial.params.activation}`]) {
      check(hover.includes(part), `${cost}: the hover label '${hover}' lacks '${part}'`);
    }
    results.checks[`${cost}_hover`] = hover;
    const shot = path.join(OUT, `pareto-${cost}.png`);
    await page.locator('#plot-pareto').screenshot({ path: shot });
    results.screenshots.push(shot);

    if (cost === 'seconds') {
      // A click on the point shows that trial.
      await page.mouse.click(at.x, at.y);
      await page.waitForSelector(`#trial-details [data-trial-id="${trial.id}"]`, { timeout: 10_000 })
        .catch(() => { throw new CheckFailed(`clicking trial #${trial.number} did not show its details`); });
      results.checks.clicked = trial.number;
    }
  }
  check(pageErrors.length === 0, `uncaught errors in the page: ${pageErrors.join(' | ')}`);
}

run('pareto_page', results, main);
