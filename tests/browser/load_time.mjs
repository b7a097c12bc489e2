// Load time of the dashboard's study page, for benchmarks (not a test):
//
//   node tests/browser/load_time.mjs --base http://127.0.0.1:8080 --study 1 [--runs 5]
//
// Each run opens #/study/ID in a fresh browser context (empty cache) and measures, with the
// page's performance.now() (0 = navigation start), the time until all six plots hold
// traces and the trials table has its rows. Prints {"median_ms", "runs": [...]} as JSON.

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require('../../web/node_modules/playwright-core');

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
if (!args.base || !args.study) {
  process.stderr.write('usage: node tests/browser/load_time.mjs --base URL --study ID [--runs 5] [--timeout-s 60]\n');
  process.exit(2);
}
const BASE = String(args.base).replace(/\/+$/, '');
const STUDY = String(args.study);
const RUNS = Math.max(1, Number(args.runs || 5));
const TIMEOUT = Math.max(1, Number(args['timeout-s'] || 60)) * 1000;

// Runs in the page: true (and records the moment) once the seven views are filled.
function ready() {
  if (window.__layerlabReadyAt) return true;
  const ids = ['plot-metric', 'plot-time', 'plot-history', 'plot-pareto', 'plot-parcoords', 'plot-curves'];
  for (const id of ids) {
    const el = document.getElementById(id);
    if (!el || el.dataset.state !== 'ready' || !Array.isArray(el.data) || el.data.length === 0) return false;
  }
  const table = document.getElementById('trials-table');
  if (!table || table.querySelectorAll('tbody tr[data-trial-id]').length === 0) return false;
  window.__layerlabReadyAt = performance.now();
  return true;
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
  try {
    for (let i = 0; i < RUNS; i += 1) {
      const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
      const page = await context.newPage();
      const errors = [];
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(`${BASE}/#/study/${encodeURIComponent(STUDY)}`, { waitUntil: 'commit' });
      try {
        await page.waitForFunction(ready, null, { timeout: TIMEOUT, polling: 'raf' });
      } catch {
        const state = await page.evaluate(() => ['plot-metric', 'plot-time', 'plot-history', 'plot-pareto', 'plot-parcoords', 'plot-curves']
          .map((id) => `${id}=${document.getElementById(id)?.dataset.state ?? 'missing'}:${document.getElementById(id)?.data?.length ?? 0}`)
          .join(', ')).catch(() => '');
        throw new Error(`run ${i + 1}: the study page was not filled within ${TIMEOUT / 1000} s (${state})` +
          `${errors.length ? `; page errors: ${errors.join(' | ')}` : ''}`);
      }
      runs.push(Math.round(await page.evaluate(() => window.__layerlabReadyAt)));
      await context.close();
    }
  } finally {
    await browser.close();
  }
  process.stdout.write(`${JSON.stringify({ median_ms: median(runs), runs, base: BASE, study: STUDY })}\n`);
}

main().catch((err) => {
  process.stderr.write(`load_time: ${err.message}\n`);
  process.exit(1);
});
