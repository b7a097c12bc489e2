// Load time of the dashboard's study page and studies list, for benchmarks (not a test):
//
//   node tests/browser/load_time.mjs --base http://127.0.0.1:8080 --study 1 [--runs 5]
//   node tests/browser/load_time.mjs --base http://127.0.0.1:8080 --page studies [--runs 5]
//
// Each run opens the page in a fresh browser context (empty cache) and measures with the
// page's performance.now() (0 = navigation start).
//
// Study page, two figures per run:
// - first_screen: every view on the first screen (1366x768, not scrolled) holds data: the
//   plots among the six whose card shows at least in part, the leaderboard and the trials
//   table if they show.
// - all (median_ms, the figure to compare with earlier builds): all six plots hold traces
//   (the parallel coordinates, a canvas: have drawn lines, data-drawn > 0),
//   the trials table has rows and the leaderboard is filled. The page draws a view once it comes near sight, so the
//   run scrolls through as a reader would: each plot is scrolled into sight (nearest edge)
//   as soon as the ones above it hold data. A build that draws every view at once fills
//   them in the same time whether scrolled or not.
// Studies list: the table has a row for every study that /api/v1/studies lists.
// Prints {"median_ms", "runs": [...], ...} as JSON.

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require('../../web/node_modules/playwright-core');
import { VIEW_IDS, viewFilled } from './views.mjs';

function parseArgs(argv) {
  const out = {};
  for (let i = 2; i < argv.length; i += 1) {
    const a = argv[i];
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 0) out[a.slice(2, eq)] = a.slice(eq + 1);
    else if (a.startsWith('--')) {
      out[a.slice(2)] = argv[i + 1];
      i += 1;
    }
  }
  return out;
}

const args = parseArgs(process.argv);
const PAGE = String(args.page || 'study');
if (!args.base || (PAGE === 'study' && !args.study) || !['study', 'studies'].includes(PAGE)) {
  process.stderr.write('usage: node tests/browser/load_time.mjs --base URL (--study ID | --page studies) [--runs 5] [--timeout-s 60]\n');
  process.exit(2);
}
const BASE = String(args.base).replace(/\/+$/, '');
const STUDY = String(args.study ?? '');
const RUNS = Math.max(1, Number(args.runs || 5));
const TIMEOUT = Math.max(1, Number(args['timeout-s'] || 60)) * 1000;

// Runs in the page from its start: records when each view first holds data
// (window.__layerlabFilled[id], 'table' for the trials table) and when all of them do
// (window.__layerlabReadyAt).
function watchStudyPage(ids) {
  const filled = (id) => {
    if (id === 'table') return document.querySelectorAll('#trials-table tbody tr[data-trial-id]').length > 0;
    if (id === 'leaderboard') return document.getElementById('leaderboard')?.dataset.state === 'ready';
    const el = document.getElementById(id);
    // the parallel coordinates are a canvas: data-drawn lines (views.mjs, viewFilled)
    if (el && el.dataset.rows !== undefined) return el.dataset.state === 'ready' && Number(el.dataset.drawn) > 0;
    return Boolean(el && el.dataset.state === 'ready' && Array.isArray(el.data) && el.data.length > 0);
  };
  window.__layerlabFilled = {};
  const all = [...ids, 'leaderboard', 'table'];
  const tick = () => {
    const now = performance.now();
    for (const id of all) if (!(id in window.__layerlabFilled) && filled(id)) window.__layerlabFilled[id] = now;
    if (all.every((id) => id in window.__layerlabFilled)) window.__layerlabReadyAt = Math.max(...Object.values(window.__layerlabFilled));
    else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}

// After a run, at the top of the page as it is laid out with data: the views whose card (the
// leaderboard, the table) shows at least in part on the first screen.
function firstScreenViews(ids) {
  window.scrollTo(0, 0);
  const shows = (el) => Boolean(el) && el.getBoundingClientRect().top < window.innerHeight;
  const out = ids.filter((id) => shows(document.getElementById(id)?.closest('.card')));
  if (shows(document.getElementById('leaderboard'))) out.push('leaderboard');
  if (shows(document.getElementById('trials-table'))) out.push('table');
  return out;
}

async function studyRun(page, i) {
  await page.addInitScript(watchStudyPage, VIEW_IDS);
  await page.goto(`${BASE}/#/study/${encodeURIComponent(STUDY)}`, { waitUntil: 'commit' });
  const deadline = Date.now() + TIMEOUT;
  for (const id of VIEW_IDS) {
    await page.waitForFunction((x) => document.getElementById(x), id, { timeout: TIMEOUT });
    await page.evaluate((x) => document.getElementById(x).closest('.card').scrollIntoView({ block: 'nearest' }), id);
    try {
      await page.waitForFunction(viewFilled, { id, traces: true }, { timeout: Math.max(1, deadline - Date.now()), polling: 'raf' });
    } catch {
      const state = await page.evaluate((ids) => ids.map((x) => `${x}=${document.getElementById(x)?.dataset.state ?? 'missing'}:${document.getElementById(x)?.data?.length ?? document.getElementById(x)?.dataset.drawn ?? 0}`)
        .join(', '), VIEW_IDS).catch(() => '');
      throw new Error(`run ${i + 1}: the study page was not filled within ${TIMEOUT / 1000} s (${state})`);
    }
  }
  await page.evaluate(() => document.getElementById('trials-table')?.scrollIntoView({ block: 'nearest' }));
  await page.waitForFunction(() => window.__layerlabReadyAt, null, { timeout: Math.max(1, deadline - Date.now()) });
  const firstScreen = await page.evaluate(firstScreenViews, VIEW_IDS);
  const filled = await page.evaluate(() => window.__layerlabFilled);
  return {
    all: await page.evaluate(() => window.__layerlabReadyAt),
    first: Math.max(...firstScreen.map((id) => filled[id])),
    firstScreen,
    filled: Object.fromEntries(Object.entries(filled).map(([k, v]) => [k, Math.round(v)])),
  };
}

async function studiesRun(page, i) {
  const list = await (await fetch(`${BASE}/api/v1/studies`)).json();
  const n = (Array.isArray(list) ? list : list.studies || []).length;
  await page.goto(`${BASE}/#/`, { waitUntil: 'commit' });
  let at;
  try {
    at = await (await page.waitForFunction((k) => document.querySelectorAll('#studies-table tbody tr').length >= k && performance.now(),
      n, { timeout: TIMEOUT, polling: 'raf' })).jsonValue();
  } catch {
    throw new Error(`run ${i + 1}: the studies list did not show ${n} rows within ${TIMEOUT / 1000} s`);
  }
  return { all: at, studies: n };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.LAYERLAB_CHROMIUM || '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const runs = [];
  const first = [];
  const filledRuns = []; // per run: when each view first held data, ms
  let extra = {};
  try {
    for (let i = 0; i < RUNS; i += 1) {
      const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
      const page = await context.newPage();
      const errors = [];
      page.on('pageerror', (err) => errors.push(err.message));
      try {
        const r = PAGE === 'study' ? await studyRun(page, i) : await studiesRun(page, i);
        runs.push(Math.round(r.all));
        if (r.first !== undefined) first.push(Math.round(r.first));
        extra = PAGE === 'study' ? { first_screen_views: r.firstScreen } : { studies: r.studies };
        if (r.filled) filledRuns.push(r.filled);
      } catch (err) {
        throw new Error(`${err.message}${errors.length ? `; page errors: ${errors.join(' | ')}` : ''}`);
      }
      await context.close();
    }
  } finally {
    await browser.close();
  }
  const out = { page: PAGE, median_ms: median(runs), runs };
  if (first.length) Object.assign(out, { first_screen_median_ms: median(first), first_screen_runs: first, view_ms: filledRuns });
  process.stdout.write(`${JSON.stringify({ ...out, ...extra, base: BASE, study: STUDY || undefined })}\n`);
}

main().catch((err) => {
  process.stderr.write(`load_time: ${err.message}\n`);
  process.exit(1);
});
