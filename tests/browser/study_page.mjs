// Browser test of the dashboard against a running layerlab server and a study that is
// still running:
//
//   node tests/browser/study_page.mjs --base http://127.0.0.1:8080 --study 1 --out /tmp/shots
//        [--ready-file PATH]
//
// Opens #/study/ID in headless Chromium (LAYERLAB_CHROMIUM, default /usr/bin/chromium),
// checks the rendered plots and table against the API (fetched here with Node's fetch),
// waits for a live update without a page reload, selects a trial and checks its learning
// curve, then opens #/ and #/workers (each worker's done/failed/lost/utilisation against
// /api/v1/workers, the throughput and queue charts against /api/v1/throughput). Saves
// screenshots to --out and prints one JSON line.
// --ready-file: written once the first render has been checked, before waiting for the
// live update (so that a driver can hold the study still until then).
// Exit status 0 on success; 1 with a message on the first failed check; 2 on bad usage.

import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { VIEW_IDS, showEveryView, viewFilled } from './views.mjs';

import { DASH, fmtInt, fmtPercent, isNum } from '../../web/js/format.js';

const require = createRequire(import.meta.url);
const { chromium } = require('../../web/node_modules/playwright-core');

const OVERALL_MS = 120_000;
const FINISHED = ['completed', 'early_stopped', 'pruned'];
const started = Date.now();

function parseArgs(argv) {
  const out = {};
  for (let i = 2; i < argv.length; i += 1) {
    const a = argv[i];
    if (!a.startsWith('--')) usage(`unexpected argument ${a}`);
    const eq = a.indexOf('=');
    if (eq > 0) out[a.slice(2, eq)] = a.slice(eq + 1);
    else {
      out[a.slice(2)] = argv[i + 1];
      i += 1;
    }
  }
  return out;
}

function usage(msg) {
  process.stderr.write(`study_page: ${msg}\nusage: node tests/browser/study_page.mjs --base URL --study ID --out DIR [--ready-file PATH]\n`);
  process.exit(2);
}

const args = parseArgs(process.argv);
if (!args.base) usage('--base is required');
if (!args.study) usage('--study is required');
const BASE = String(args.base).replace(/\/+$/, '');
const STUDY = String(args.study);
const OUT = path.resolve(args.out || 'browser-test-output');
const READY_FILE = args['ready-file'] ? path.resolve(args['ready-file']) : '';
fs.mkdirSync(OUT, { recursive: true });

class CheckFailed extends Error {}
function check(cond, message) {
  if (!cond) throw new CheckFailed(message);
}

let browser = null;
const results = { ok: false, base: BASE, study: STUDY, checks: {}, screenshots: [] };

function finish(code, message) {
  results.seconds = Number(((Date.now() - started) / 1000).toFixed(1));
  if (message) results.error = message;
  results.ok = code === 0;
  process.stdout.write(`${JSON.stringify(results)}\n`);
  if (message) process.stderr.write(`study_page: FAILED: ${message}\n`);
  const done = () => process.exit(code);
  if (browser) browser.close().then(done, done);
  else done();
}

const overall = setTimeout(() => finish(1, `overall timeout of ${OVERALL_MS / 1000} s exceeded`), OVERALL_MS);

async function api(p) {
  const url = p.startsWith('http') ? p : `${BASE}${p}`;
  const res = await fetch(url, { headers: { Accept: 'application/json' } });
  const text = await res.text();
  if (!res.ok) throw new CheckFailed(`GET ${url} -> ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

const apiGet = api;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function shot(page, name, opts = {}) {
  const file = path.join(OUT, `${name}.png`);
  await page.screenshot({ path: file, ...opts });
  results.screenshots.push(file);
}

// ---- what the page shows ------------------------------------------------------------
// Runs in the browser: a snapshot of the rendered plots and table.
function domSnapshot() {
  const plot = (id) => {
    const el = document.getElementById(id);
    return el ? { el, data: Array.isArray(el.data) ? el.data : null, src: el.dataset.src || '', state: el.dataset.state } : null;
  };
  const m = plot('plot-metric');
  const hi = plot('plot-history');
  const role = (t) => (t.meta && t.meta.role) || '';
  const metricPoints = [];
  let metricTotal = 0;
  let metricN = 0;
  for (const t of m && m.data ? m.data : []) {
    const xs = t.x || [];
    metricTotal += xs.length;
    xs.forEach((x, i) => {
      const n = t.customdata && t.customdata[i] ? Number(t.customdata[i][0]) : NaN;
      metricN += n;
      metricPoints.push(`${t.meta ? t.meta.dataset : '?'}|${t.meta ? t.meta.group : '?'}|${x}|${n}`);
    });
  }
  let historyPoints = 0;
  for (const t of hi && hi.data ? hi.data : []) if (role(t) === 'points') historyPoints += (t.x || []).length;
  const table = document.getElementById('trials-table');
  const rows = table ? table.querySelectorAll('tbody tr[data-trial-id]').length : -1;
  return {
    metric: { src: m ? m.src : '', points: metricTotal, n: metricN, signature: metricPoints.sort() },
    history: { src: hi ? hi.src : '', points: historyPoints },
    table: { src: table ? table.dataset.src : '', rows },
    finished: Number((document.getElementById('study-finished') || {}).textContent),
  };
}

async function apiSnapshot(dom) {
  const [summary, cols, trials] = await Promise.all([api(dom.metric.src), api(dom.history.src), api(dom.table.src)]);
  const signature = [];
  let points = 0;
  let n = 0;
  for (const s of summary.series || []) {
    for (const p of s.points || []) {
      points += 1;
      n += p.n;
      signature.push(`${s.dataset}|${s.group ?? ''}|${p.x}|${p.n}`);
    }
  }
  return {
    metric: { points, n, trials: summary.trials, signature: signature.sort() },
    history: { returned: cols.returned, total: cols.total },
    table: { total: trials.total, expectRows: Math.min(50, trials.total) },
  };
}

function compare(dom, a) {
  const problems = [];
  if (dom.metric.points !== a.metric.points) problems.push(`#plot-metric shows ${dom.metric.points} points, the summary has ${a.metric.points}`);
  if (a.metric.n !== a.metric.trials) problems.push(`the summary's points sum to n=${a.metric.n} but it says trials=${a.metric.trials}`);
  if (dom.metric.n !== a.metric.trials) problems.push(`#plot-metric's points sum to n=${dom.metric.n}, the summary has trials=${a.metric.trials}`);
  if (dom.metric.signature.join(';') !== a.metric.signature.join(';')) problems.push('#plot-metric (dataset, group, x, n) points differ from the summary');
  if (dom.history.points !== a.history.returned) problems.push(`#plot-history shows ${dom.history.points} points, /columns returned ${a.history.returned}`);
  if (dom.table.rows !== a.table.expectRows) problems.push(`#trials-table shows ${dom.table.rows} rows, expected min(50, ${a.table.total}) = ${a.table.expectRows}`);
  return problems;
}

// The study keeps changing, so compare the page with API snapshots taken just before and
// just after reading it: it must equal one of them. Retries while the page catches up.
async function checkConsistent(page, label, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  let last = [];
  let tries = 0;
  for (;;) {
    tries += 1;
    const dom0 = await page.evaluate(domSnapshot);
    check(dom0.metric.src && dom0.history.src && dom0.table.src, `${label}: a plot or the table has no data-src (not rendered?)`);
    const before = await apiSnapshot(dom0);
    const dom = await page.evaluate(domSnapshot);
    const after = await apiSnapshot(dom);
    const p1 = compare(dom, before);
    const p2 = compare(dom, after);
    if (!p1.length || !p2.length) {
      const a = p1.length ? after : before;
      return {
        tries,
        metric_points: dom.metric.points,
        metric_trials: a.metric.trials,
        history_points: dom.history.points,
        columns_returned: a.history.returned,
        table_rows: dom.table.rows,
        trials_total: a.table.total,
        finished: dom.finished,
      };
    }
    last = p2;
    if (Date.now() > deadline) throw new CheckFailed(`${label}: the page does not match the API after ${tries} tries: ${last.join('; ')}`);
    await sleep(400);
  }
}

// ---- the workers page: what each worker did, and the throughput charts ---------------
// A worker that is gone (stopped or silent) no longer changes: its row must equal the API
// exactly, utilisation included, and its bars in the throughput chart the API's series. A
// live worker's numbers move while the page is read: they may not exceed a later API read.
async function checkWorkerActivity(page) {
  const cells = () => page.$$eval('#workers-table tbody tr', (trs) => trs.map((tr) => {
    const col = (name) => tr.querySelector(`td[data-col="${name}"]`)?.textContent ?? null;
    return { id: tr.dataset.workerId, done: col('done'), failed: col('failed'), lost: col('lost'), utilisation: col('utilisation') };
  }));
  const shown = (w) => ({
    id: w.id, done: fmtInt(w.done), failed: fmtInt(w.failed), lost: fmtInt(w.lost),
    utilisation: isNum(w.utilisation) ? fmtPercent(w.utilisation, 1) : DASH,
  });
  const count = (text) => Number(String(text).replace(/,/g, ''));
  // each new column under its own header
  const headers = await page.$$eval('#workers-table tbody tr:first-child td', (tds) => {
    const ths = [...document.querySelectorAll('#workers-table thead th')].map((th) => th.textContent);
    return tds.map((td, i) => [td.dataset.col || '', ths[i]]).filter(([col]) => col);
  });
  for (const [col, title] of [['done', 'Done'], ['failed', 'Failed'], ['lost', 'Lost'], ['utilisation', 'Utilisation']]) {
    const at = headers.find(([c]) => c === col);
    check(at && at[1] === title, `the ${col} cells are under the header '${at ? at[1] : 'none'}', not '${title}'`);
  }
  const deadline = Date.now() + 30_000;
  let problems = [];
  for (;;) {
    const rows = await cells();
    const api = (await apiGet('/api/v1/workers?minutes=60')).workers;
    problems = [];
    if (rows.length !== api.length) problems.push(`${rows.length} rows, the API has ${api.length} workers`);
    for (const w of api) {
      const row = rows.find((r) => r.id === w.id);
      if (!row) { problems.push(`no row for worker ${w.id}`); continue; }
      const want = shown(w);
      if (!w.alive) {
        for (const k of ['done', 'failed', 'lost', 'utilisation']) {
          if (row[k] !== want[k]) problems.push(`${w.id} (gone): ${k} ${row[k]}, the API says ${want[k]}`);
        }
      } else {
        for (const k of ['done', 'failed', 'lost']) {
          if (!(count(row[k]) <= w[k])) problems.push(`${w.id}: ${k} ${row[k]} is over the API's later ${w[k]}`);
        }
        if (row.utilisation !== DASH && !/^\d+(\.\d)?%$/.test(row.utilisation)) problems.push(`${w.id}: utilisation '${row.utilisation}'`);
      }
    }
    if (!problems.length) break;
    if (Date.now() > deadline) throw new CheckFailed(`the workers table does not match /api/v1/workers: ${problems.join('; ')}`);
    await sleep(500);
  }
  const api = (await apiGet('/api/v1/workers?minutes=60')).workers;
  const gone = api.filter((w) => !w.alive).map((w) => ({ id: w.id, done: w.done, failed: w.failed, lost: w.lost, utilisation: w.utilisation }));

  // The charts: bars per worker; a gone worker's bars are the API's series, minute by minute.
  await page.waitForFunction(() => ['throughput-plot', 'queue-plot'].every((id) => {
    const el = document.getElementById(id);
    return el && el.dataset.state === 'ready' && Array.isArray(el.data);
  }), null, { timeout: 15_000 }).catch(() => { throw new CheckFailed('the throughput and queue charts did not render'); });
  const traces = await page.evaluate(() => document.getElementById('throughput-plot').data
    .map((t) => ({ role: t.meta && t.meta.role, worker: t.meta ? t.meta.worker : undefined, x: t.x, y: t.y })));
  check(traces.length > 0 && traces.every((t) => t.role === 'throughput'), `the throughput chart holds no worker bars (${traces.length} traces)`);
  const tp = await apiGet('/api/v1/throughput?minutes=60');
  for (const w of gone) {
    const bars = traces.find((t) => t.worker === w.id);
    const series = tp.workers.find((s) => s.worker === w.id);
    if (!series) continue; // finished nothing in the last hour
    check(bars, `the throughput chart has no bars for worker ${w.id}`);
    const api = new Map(tp.buckets.map((b, i) => [b, series.done[i] + series.failed[i]]));
    bars.x.forEach((b, i) => {
      if (api.has(b)) check(bars.y[i] === api.get(b), `worker ${w.id} at ${b}: ${bars.y[i]} finished on the chart, ${api.get(b)} in the API`);
    });
  }
  const charted = traces.reduce((n, t) => n + t.y.reduce((a, b) => a + b, 0), 0);
  const later = tp.total.reduce((a, b) => a + b, 0);
  check(charted > 0 && charted <= later, `the throughput chart counts ${charted} finished trials, the API ${later}`);
  const queue = await page.evaluate(() => document.getElementById('queue-plot').data.map((t) => t.meta && t.meta.series));
  check(queue.length === 0 || (queue.includes('depth') && queue.includes('in_flight')), `queue chart traces: ${queue.join(', ')}`);
  return { gone, throughput_traces: traces.length, charted_finished: charted, queue_traces: queue.length };
}

// ---- the parallel coordinates: a canvas (web/js/components/parallel.js) ----------------
// It drew one line per row of its /columns response (data-src), over one axis per varied
// parameter asked for and the value; a drag along the value axis selects the trials in
// range (the count says so), a click on the axis clears it.
async function checkParallel(page) {
  const read = () => page.evaluate(() => {
    const el = document.getElementById('plot-parcoords');
    const d = el.dataset;
    return {
      src: d.src, state: d.state, rows: Number(d.rows), drawn: Number(d.drawn), selected: Number(d.selected),
      brushes: Number(d.brushes), axes: (d.axes || '').split(','), axisX: (d.axisX || '').split(',').map(Number),
      plotY: (d.plotY || '').split(',').map(Number), count: el.querySelector('.parallel-count')?.textContent || '',
      canvas: (() => { const r = el.querySelector('canvas').getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; })(),
      label: el.querySelector('canvas').getAttribute('aria-label') || '',
    };
  });
  // the rows shown are those of the response the page fetched (live: retry while it catches up)
  const deadline = Date.now() + 30_000;
  let v;
  let cols;
  for (;;) {
    v = await read();
    check(v.src && v.state === 'ready', `#plot-parcoords: state ${v.state}, data-src '${v.src}'`);
    cols = await api(v.src);
    if (v.rows === cols.returned && v.drawn === v.rows) break;
    if (Date.now() > deadline) {
      throw new CheckFailed(`#plot-parcoords drew ${v.drawn} lines of ${v.rows} rows, /columns returned ${cols.returned}`);
    }
    await sleep(500);
  }
  check(v.rows > 0, '#plot-parcoords has no rows (the study has finished trials)');
  const fields = new URL(v.src, BASE).searchParams.get('fields').split(',');
  check(v.axes[v.axes.length - 1] === 'value', `the last axis is ${v.axes[v.axes.length - 1]}, not the value`);
  for (const a of v.axes) check(a === 'value' || fields.includes(a), `axis ${a} is not among the fields asked for (${fields})`);
  check(v.axes.some((a) => a.startsWith('params.')), `no parameter axis: ${v.axes}`);
  check(v.axisX.length === v.axes.length, `${v.axisX.length} axis positions for ${v.axes.length} axes`);
  check(v.count.startsWith(`${v.rows.toLocaleString('en-US')} of ${v.rows.toLocaleString('en-US')} trials shown`), `count '${v.count}'`);
  check(v.label.includes('trials over'), `canvas aria-label '${v.label}'`);
  // brush the top 40% of the value axis
  await page.evaluate(() => document.getElementById('plot-parcoords').closest('.card').scrollIntoView({ block: 'center' }));
  v = await read();
  const x = v.canvas.x + v.axisX[v.axisX.length - 1];
  const [top, bottom] = v.plotY;
  await page.mouse.move(x, v.canvas.y + top - 2);
  await page.mouse.down();
  await page.mouse.move(x, v.canvas.y + top + 0.4 * (bottom - top), { steps: 5 });
  await page.mouse.up();
  await page.waitForFunction(() => document.getElementById('plot-parcoords').dataset.brushes === '1', null, { timeout: 5000 })
    .catch(() => { throw new CheckFailed('a drag along the value axis made no brush'); });
  const b = await read();
  check(b.selected > 0 && b.selected < b.rows, `the brush on the value's top 40% selects ${b.selected} of ${b.rows} trials`);
  check(b.count.startsWith(`${b.selected.toLocaleString('en-US')} of ${b.rows.toLocaleString('en-US')} trials shown`), `count '${b.count}' after the brush`);
  await shot(page, 'study-parallel-brushed', { clip: { x: b.canvas.x, y: b.canvas.y, width: b.canvas.w, height: b.canvas.h } });
  // a click on the axis clears it
  await page.mouse.click(x, v.canvas.y + (top + bottom) / 2);
  await page.waitForFunction(() => document.getElementById('plot-parcoords').dataset.brushes === '0', null, { timeout: 5000 })
    .catch(() => { throw new CheckFailed('a click on the brushed axis did not clear the brush'); });
  const c = await read();
  check(c.selected === c.rows, `after clearing the brush ${c.selected} of ${c.rows} trials are selected`);
  return { rows: v.rows, columns_returned: cols.returned, drawn: v.drawn, axes: v.axes, brushed_selected: b.selected, brushed_rows: b.rows };
}

let stillLoading = () => '';

async function waitPlots(page, timeoutMs) {
  try {
    // The page draws a view once it comes near sight: scroll through it as a reader would.
    await showEveryView(page, { timeoutMs });
    // every view drawn (views.mjs: a canvas figure, or the parallel coordinates' canvas)
    await page.waitForFunction(`${JSON.stringify(VIEW_IDS)}.every((id) => (${String(viewFilled)})({ id }))
      && document.querySelectorAll('#trials-table tbody tr').length > 0`, null, { timeout: timeoutMs, polling: 100 });
  } catch (err) {
    const state = await page.evaluate(() => ['plot-metric', 'plot-time', 'plot-history', 'plot-pareto', 'plot-parcoords', 'plot-curves']
      .map((id) => `${id}=${document.getElementById(id)?.dataset.state ?? 'missing'}`)
      .concat(`trials-table rows=${document.querySelectorAll('#trials-table tbody tr').length}`).join(', '));
    const banner = await page.evaluate(() => document.getElementById('banner')?.innerText || '');
    const loading = stillLoading();
    throw new CheckFailed(`the study page did not render within ${timeoutMs / 1000} s (${state})` +
      `${banner ? `; banner: ${banner}` : ''}${loading ? `; still loading: ${loading}` : ''}`);
  }
}

async function main() {
  // the study must exist and still be running
  const study = await api(`/api/v1/studies/${encodeURIComponent(STUDY)}`);
  results.study_name = study.name;
  check(study.status === 'running' || study.status === 'queued', `study ${STUDY} is ${study.status}; the test needs a study that is still running`);

  browser = await chromium.launch({
    executablePath: process.env.LAYERLAB_CHROMIUM || '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
  const page = await context.newPage();
  const pageErrors = [];
  const consoleErrors = [];
  page.on('pageerror', (err) => pageErrors.push(String(err && err.message ? err.message : err)));
  page.on('console', (msg) => { if (msg.type() === 'error') consoleErrors.push(msg.text()); });
  const pending = new Map(); // request -> start, to name what is still loading on a timeout
  page.on('request', (r) => pending.set(r, Date.now()));
  page.on('requestfinished', (r) => pending.delete(r));
  page.on('requestfailed', (r) => pending.delete(r));
  stillLoading = () => [...pending.entries()].filter(([r]) => !r.url().includes('/api/v1/events'))
    .map(([r, t]) => `${r.url().replace(BASE, '')} (${((Date.now() - t) / 1000).toFixed(1)} s)`).join(', ');
  const trialRequests = [];
  page.on('request', (r) => { if (r.url().includes('/trials?')) trialRequests.push(r.url().replace(BASE, '')); });
  let navigations = 0;
  page.on('framenavigated', (f) => { if (f === page.mainFrame()) navigations += 1; });

  // 1. the study page renders and matches the API
  await page.goto(`${BASE}/#/study/${encodeURIComponent(STUDY)}`, { waitUntil: 'commit', timeout: 15_000 });
  // Views out of sight wait: with the first screen drawn, the parallel coordinates (far
  // below it) are not drawn until scrolled to.
  await page.waitForFunction(() => document.getElementById('plot-metric')?.dataset.state === 'ready', null, { timeout: 40_000 });
  await page.waitForTimeout(500);
  const deferred = await page.evaluate(() => {
    const el = document.getElementById('plot-parcoords');
    return { state: el.dataset.state, requested: el.dataset.src || null, top: el.closest('.card').getBoundingClientRect().top, height: window.innerHeight };
  });
  check(deferred.top > deferred.height + 300, `#plot-parcoords is ${deferred.top}px down, not below the first screen`);
  check(deferred.state === 'loading' && deferred.requested === null,
    `#plot-parcoords is ${deferred.state} (data ${deferred.requested ? `requested: ${deferred.requested}` : 'not requested'}) before it was scrolled into sight`);
  results.deferred = deferred;
  await waitPlots(page, 40_000);
  // every plot of the study page is a canvas (web/js/components/figure.js, parallel.js): no Plotly
  check(await page.evaluate(() => window.Plotly === undefined && !document.querySelector('script[src*="plotly"]')),
    'the study page loaded Plotly');
  await shot(page, 'study', { fullPage: true });
  results.checks.initial = await checkConsistent(page, 'initial render');
  results.checks.parallel = await checkParallel(page);
  const status = await page.textContent('#study-status');
  check(status && status.trim().length > 0, '#study-status is empty');

  // tell whoever drives the study (e.g. the C++ test starting a worker) that the page is up
  if (READY_FILE) fs.writeFileSync(READY_FILE, `${JSON.stringify(results.checks.initial)}\n`);

  // 2. a live update arrives without a reload
  const navBefore = navigations;
  await page.evaluate(() => { window.__noReload = 1; });
  const before = await page.evaluate(domSnapshot);
  try {
    await page.waitForFunction((b) => {
      const fin = Number(document.getElementById('study-finished').textContent);
      const h = document.getElementById('plot-history');
      let pts = 0;
      for (const t of (h && h.data) || []) if (t.meta && t.meta.role === 'points') pts += (t.x || []).length;
      return fin > b.finished && pts > b.history.points;
    }, before, { timeout: 60_000, polling: 250 });
  } catch {
    const now = await page.evaluate(domSnapshot);
    throw new CheckFailed(`no live update within 60 s: #study-finished ${before.finished} -> ${now.finished}, ` +
      `history points ${before.history.points} -> ${now.history.points} (is the study still running?)`);
  }
  check(await page.evaluate(() => window.__noReload === 1), 'the page reloaded during the live update (window.__noReload is gone)');
  check(navigations === navBefore, 'the main frame navigated during the live update');
  const afterUpdate = await checkConsistent(page, 'after the live update');
  check(afterUpdate.history_points > before.history.points, `the history did not grow (${before.history.points} -> ${afterUpdate.history_points})`);
  results.checks.live_update = {
    finished_before: before.finished, finished_after: afterUpdate.finished,
    history_points_before: before.history.points, history_points_after: afterUpdate.history_points,
    metric_trials_before: before.metric.n, metric_trials_after: afterUpdate.metric_trials,
    no_reload: true, ...afterUpdate,
  };
  await shot(page, 'study-after-update', { fullPage: true });

  // 3. clicking a finished trial shows its learning curve
  const finishedRow = '#trials-table tbody tr[data-trial-id]' + `:is(${FINISHED.map((s) => `[data-status="${s}"]`).join(',')})`;
  if ((await page.locator(finishedRow).count()) === 0) {
    await page.selectOption('#trials-status', FINISHED.join(','));
    await page.waitForSelector(finishedRow, { timeout: 10_000 });
  }
  const rows = page.locator(finishedRow);
  const count = await rows.count();
  const trialId = await rows.nth(Math.min(count - 1, 2)).getAttribute('data-trial-id');
  check(trialId, 'no finished trial row to click');
  await page.locator(`#trials-table tbody tr[data-trial-id="${trialId}"]`).click();
  const detail = await api(`/api/v1/trials/${trialId}`);
  const curveLen = (detail.curve || []).length;
  check(curveLen > 0, `trial ${trialId} has an empty curve in the API`);
  try {
    await page.waitForFunction(({ id, n }) => {
      const el = document.getElementById('plot-curves');
      const ts = ((el && el.data) || []).filter((t) => t.meta && String(t.meta.trial_id) === String(id));
      return ts.length > 0 && ts.every((t) => (t.x || []).length === n);
    }, { id: trialId, n: curveLen }, { timeout: 15_000, polling: 100 });
  } catch {
    const got = await page.evaluate((id) => ((document.getElementById('plot-curves') || {}).data || [])
      .filter((t) => t.meta && String(t.meta.trial_id) === String(id)).map((t) => (t.x || []).length), trialId);
    throw new CheckFailed(`#plot-curves for trial ${trialId}: trace lengths [${got}] but the API curve has ${curveLen} epochs`);
  }
  const curveTraces = await page.evaluate((id) => document.getElementById('plot-curves').data
    .filter((t) => t.meta && String(t.meta.trial_id) === String(id)).map((t) => ({ kind: t.meta.kind, points: t.x.length })), trialId);
  await page.waitForSelector(`#trial-details [data-trial-id="${trialId}"]`, { timeout: 10_000 });
  results.checks.curves = { trial_id: Number(trialId), api_curve_length: curveLen, traces: curveTraces };
  await page.evaluate(() => {
    document.getElementById('plot-curves').closest('.card').scrollIntoView({ block: 'start' });
    window.scrollBy(0, -64); // the sticky top bar
  });
  await sleep(400);
  await shot(page, 'study-curves');

  // 4. a click on the value header sorts on the server; rows come back in order
  const sortBy = async (key, previous) => {
    await page.click(`#trials-table th[data-sort="${key}"]`);
    // wait until the header shows the new order and the rows for it have arrived
    await page.waitForFunction(({ k, prev }) => {
      const th = document.querySelector(`#trials-table th[data-sort="${k}"]`);
      const t = document.getElementById('trials-table');
      const aria = th && th.getAttribute('aria-sort');
      return aria && aria !== 'none' && aria !== prev && t.dataset.shown === `${k}:${aria === 'ascending' ? 'asc' : 'desc'}` &&
        !document.querySelector('.trials-wrap.busy');
    }, { k: key, prev: previous || '' }, { timeout: 10_000 });
    const aria = await page.getAttribute(`#trials-table th[data-sort="${key}"]`, 'aria-sort');
    const order = aria === 'ascending' ? 'asc' : 'desc';
    const values = await page.$$eval('#trials-table tbody tr[data-trial-id] td.strong', (tds) => tds.map((td) => td.textContent));
    const nums = values.map((v) => (v === '\u2014' ? null : Number(v)));
    const firstNull = nums.indexOf(null);
    check(firstNull < 0 || nums.slice(firstNull).every((v) => v === null), `sorted by ${key} ${order}: rows without a value are not last`);
    const vs = nums.filter((v) => v !== null);
    const sorted = vs.every((v, i) => i === 0 || (order === 'desc' ? vs[i - 1] >= v : vs[i - 1] <= v));
    check(sorted, `sorted by ${key} ${order}: the table is out of order: ${values.slice(0, 10).join(', ')} (requests: ${trialRequests.slice(-4).join(' ')})`);
    check(trialRequests.some((u) => u.includes(`sort=${key}&order=${order}`)), `no request with sort=${key}&order=${order} was made`);
    return { order, aria, rows: values.length, first: values[0] };
  };
  const s1 = await sortBy('value');
  const s2 = await sortBy('value', s1.aria);
  results.checks.sort = [s1, s2];
  check(results.checks.sort[0].order !== results.checks.sort[1].order, 'a second click on the header did not reverse the order');

  // 5. the studies list and the workers page
  await page.evaluate(() => { location.hash = '#/'; });
  await page.waitForSelector(`#studies-table tbody tr[data-study-id="${study.id}"]`, { timeout: 15_000 })
    .catch(() => { throw new CheckFailed(`#/ does not list study ${study.id}`); });
  results.checks.studies_list = { rows: await page.locator('#studies-table tbody tr').count() };
  await shot(page, 'studies');

  await page.evaluate(() => { location.hash = '#/workers'; });
  await page.waitForSelector('#workers-table tbody tr', { timeout: 15_000 })
    .catch(() => { throw new CheckFailed('#/workers shows no worker row'); });
  await page.waitForSelector('#queue-depth', { timeout: 10_000 });
  results.checks.workers = {
    rows: await page.locator('#workers-table tbody tr').count(),
    alive: await page.locator('#workers-table .alive-dot.on').count(),
    queue_depth: await page.textContent('#queue-depth'),
    pack: await page.locator('#workers-table td[data-col="pack"]').allTextContents(),
    memory: await page.locator('#workers-table td[data-col="memory"]').allTextContents(),
    ...await checkWorkerActivity(page),
  };
  await shot(page, 'workers', { fullPage: true });
  // the workers page's bar and time charts are Plotly's, loaded from the URL index.html names
  check(await page.evaluate(() => typeof window.Plotly === 'object'), 'Plotly did not load on the workers page (meta layerlab-plotly)');

  check(await page.evaluate(() => window.__noReload === 1), 'the page reloaded while switching pages');
  check(pageErrors.length === 0, `uncaught errors in the page: ${pageErrors.join(' | ')}`);
  results.console_errors = consoleErrors;
}

main().then(() => {
  clearTimeout(overall);
  finish(0);
}, (err) => {
  clearTimeout(overall);
  finish(1, err instanceof CheckFailed ? err.message : (err && err.stack) || String(err));
});
