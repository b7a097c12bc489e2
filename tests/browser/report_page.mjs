// Browser test of a report written by `layerlab report --format html`, opened from its file
// with every network request refused (the report must work offline):
//
//   node tests/browser/report_page.mjs --report /path/report.html --out /tmp/shots
//
// Checks in headless Chromium (LAYERLAB_CHROMIUM, default /usr/bin/chromium) that every plot
// container rendered (Plotly's .main-svg, at least one trace, no empty trace), that the
// depth figure has one line per depth curve of the report's data and a plateau marker
// where a plateau can be judged, that the Pareto figures highlight the findings' fronts and
// the Pareto table lists them, that the page asked for nothing beyond its own file and
// logged no error. Saves report.png (the whole page) and report-depth.png to --out and
// prints one JSON line. Exit status 0 on success; 1 with a message on the first failed
// check; 2 on bad usage.

import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const { chromium } = require('../../web/node_modules/playwright-core');

const OVERALL_MS = 90_000;

function usage(msg) {
  process.stderr.write(`report_page: ${msg}\nusage: node tests/browser/report_page.mjs --report FILE --out DIR\n`);
  process.exit(2);
}

const args = {};
for (let i = 2; i < process.argv.length; i += 2) {
  if (!process.argv[i].startsWith('--')) usage(`unexpected argument ${process.argv[i]}`);
  args[process.argv[i].slice(2)] = process.argv[i + 1];
}
if (!args.report) usage('--report is required');
const REPORT = path.resolve(args.report);
const OUT = path.resolve(args.out || 'report-browser-output');
fs.mkdirSync(OUT, { recursive: true });

class CheckFailed extends Error {}
function check(cond, message) {
  if (!cond) throw new CheckFailed(message);
}

let browser = null;
const results = { ok: false, report: REPORT, checks: {}, screenshots: [] };

function finish(code, message) {
  if (message) results.error = message;
  results.ok = code === 0;
  process.stdout.write(`${JSON.stringify(results)}\n`);
  if (message) process.stderr.write(`report_page: FAILED: ${message}\n`);
  const done = () => process.exit(code);
  if (browser) browser.close().then(done, done);
  else done();
}
setTimeout(() => finish(1, `overall timeout of ${OVERALL_MS / 1000} s exceeded`), OVERALL_MS).unref();

// Runs in the page: what each plot container holds.
function plotsSnapshot() {
  const traceSize = (t) => {
    if (t.type === 'parcoords') return (t.dimensions || []).length && (t.dimensions[0].values || []).length;
    return Math.max((t.x || []).length, (t.y || []).length);
  };
  return [...document.querySelectorAll('.plot[data-figure]')].map((el) => ({
    id: el.id,
    figure: el.dataset.figure,
    state: el.dataset.state || '',
    svg: el.querySelectorAll('.main-svg').length,
    traces: Array.isArray(el.data) ? el.data.length : 0,
    empty: Array.isArray(el.data) ? el.data.filter((t) => !traceSize(t)).map((t) => t.name || t.type) : [],
    roles: Array.isArray(el.data) ? el.data.map((t) => (t.meta && t.meta.role) || '') : [],
    width: el.getBoundingClientRect().width,
    height: el.getBoundingClientRect().height,
  }));
}

async function main() {
  check(fs.existsSync(REPORT), `no report at ${REPORT}`);
  browser = await chromium.launch({
    executablePath: process.env.LAYERLAB_CHROMIUM || '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 }, offline: true });
  const page = await context.newPage();
  const pageErrors = [];
  const consoleErrors = [];
  const outside = [];
  page.on('pageerror', (err) => pageErrors.push(String(err && err.message ? err.message : err)));
  page.on('console', (msg) => { if (msg.type() === 'error') consoleErrors.push(msg.text()); });
  const own = pathToFileURL(REPORT).href;
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url === own || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
    outside.push(url);
    return route.abort();
  });

  const started = Date.now();
  await page.goto(own, { waitUntil: 'load' });
  await page.waitForFunction(() => document.body.dataset.plots === 'done', null, { timeout: 60_000 });
  results.checks.render_ms = Date.now() - started;

  const plots = await page.evaluate(plotsSnapshot);
  const data = await page.evaluate(() => JSON.parse(document.getElementById('report-data').textContent));
  results.checks.plots = plots.map((p) => `${p.figure}:${p.traces}`);
  const expected = ['study-metric', 'study-time', 'study-history', 'study-parcoords', 'study-curves', 'importance',
    'pareto-parameters', 'pareto-seconds'];
  if (data.findings.depth.curves.length) expected.push('depth', 'time-fit');
  for (const f of expected) check(plots.some((p) => p.figure === f), `no plot container for '${f}'`);
  for (const p of plots) {
    check(p.state === 'ready', `plot ${p.id} is '${p.state}', not ready`);
    check(p.svg > 0, `plot ${p.id} has no Plotly .main-svg`);
    // Importance draws datasets with shares only; with none (too few trials) it says so.
    const noShares = p.figure === 'importance' && !data.findings.importance.some((d) => d.verdict === 'shares');
    check(p.traces > 0 || noShares, `plot ${p.id} has no traces`);
    check(p.empty.length === 0, `plot ${p.id} has empty traces: ${p.empty.join(', ')}`);
    check(p.width > 200 && p.height > 150, `plot ${p.id} is ${p.width}x${p.height}`);
  }

  // The depth figure: one line per curve, a plateau marker per curve with several depths.
  const depth = plots.find((p) => p.figure === 'depth');
  if (depth) {
    const curves = data.findings.depth.curves;
    const series = depth.roles.filter((r) => r === 'series').length;
    const markers = depth.roles.filter((r) => r === 'plateau').length;
    check(series === curves.length, `depth figure has ${series} lines for ${curves.length} curves`);
    const judged = curves.filter((c) => !c.plateau.one_depth).length;
    check(markers === judged, `depth figure has ${markers} plateau markers for ${judged} curves`);
    results.checks.depth = { series, markers };
  }
  // The tables the page shows agree with its data.
  const bestRows = await page.locator('#best-table tbody tr').count();
  check(bestRows === data.findings.best.length, `best table has ${bestRows} rows, data ${data.findings.best.length}`);
  // The Pareto figures highlight the findings' fronts, dataset by dataset, and the table
  // lists every trial on them.
  let frontTrials = 0;
  results.checks.pareto = {};
  for (const [figure, cost] of [['pareto-parameters', 'parameter_count'], ['pareto-seconds', 'seconds']]) {
    const drawn = await page.evaluate((id) => document.getElementById(id).data
      .filter((t) => t.meta && t.meta.role === 'front')
      .map((t) => ({ dataset: t.meta.dataset, trials: t.meta.trials })), `plot-${figure}`);
    const want = data.findings.pareto.filter((d) => d.fronts[cost].trials.length)
      .map((d) => ({ dataset: d.dataset, trials: d.fronts[cost].trials.map((t) => t.number) }));
    check(JSON.stringify(drawn) === JSON.stringify(want),
      `${figure} highlights ${JSON.stringify(drawn)}; the findings have ${JSON.stringify(want)}`);
    frontTrials += want.reduce((n, d) => n + d.trials.length, 0);
    results.checks.pareto[cost] = drawn.map((d) => d.trials.length);
  }
  const paretoRows = await page.locator('#pareto-table tbody tr').count();
  check(paretoRows === frontTrials, `the Pareto table has ${paretoRows} rows for ${frontTrials} front trials`);

  check(outside.length === 0, `the report asked for ${outside.length} URL(s) beyond its file: ${outside.slice(0, 3).join(', ')}`);
  check(pageErrors.length === 0, `uncaught errors in the page: ${pageErrors.join(' | ')}`);
  check(consoleErrors.length === 0, `console errors: ${consoleErrors.join(' | ')}`);

  for (const [name, locator] of [['report', null], ['report-depth', depth ? '#plot-depth' : null]]) {
    const file = path.join(OUT, `${name}.png`);
    if (name === 'report') await page.screenshot({ path: file, fullPage: true });
    else if (locator) await page.locator(locator).screenshot({ path: file });
    else continue;
    results.screenshots.push(file);
  }
  finish(0);
}

main().catch((err) => finish(1, err instanceof CheckFailed ? err.message : String(err && err.stack ? err.stack : err)));
