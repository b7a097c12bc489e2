// Browser test of the study page's leaderboard per dataset, against a running layerlab
// server and a finished study over several datasets:
//
//   node tests/browser/leaderboard_page.mjs --base http://127.0.0.1:8080 --study 1 --out DIR
//
// Opens #/study/ID in headless Chromium (LAYERLAB_CHROMIUM, default /usr/bin/chromium) and
// checks #leaderboard against GET /api/v1/studies/ID/leaderboard: one board per dataset of
// the study, in its order; each board's rows are that dataset's trials in the API's order;
// its note says how many trials share the best value; the best card has a line per
// dataset; clicking a row of the last board shows that trial's details; the studies list
// (#/) shows each dataset's best, as the study summary has it. Prints one JSON
// line ("ok": true, what was seen) and exits 0; exits 1 with the failed check on stderr.

import path from 'node:path';

import { bestPerDataset } from '../../web/js/format.js';
import { api as apiAt, check, CheckFailed, openPage, parseArgs, run } from './page_check.mjs';

const args = parseArgs(process.argv, ['base', 'study'],
  'node tests/browser/leaderboard_page.mjs --base URL --study ID --out DIR');
const BASE = args.base;
const STUDY = String(args.study);
const OUT = args.out;
const api = (p) => apiAt(BASE, p);

// What the API's board says in words (web/js/format.js bestNote, `layerlab status`).
function expectedNote(b) {
  if (!b.best_count) return 'no trial with a value yet';
  return b.best_count > 1 ? `${b.best_count} trials share the best value` : 'best ';
}

// Runs in the page: each board's dataset, note and rows.
function readBoards() {
  const holder = document.getElementById('leaderboard');
  if (!holder || holder.dataset.state !== 'ready') return null;
  return [...holder.querySelectorAll('section.board')].map((s) => ({
    dataset: s.dataset.dataset,
    title: s.querySelector('.board-title')?.textContent || '',
    note: s.querySelector('.board-note')?.textContent || '',
    best_count: Number(s.querySelector('.board-note')?.dataset.bestCount),
    rows: [...s.querySelectorAll('tbody tr[data-trial-id]')].map((tr) => ({
      id: Number(tr.dataset.trialId), dataset: tr.dataset.dataset,
    })),
  }));
}

const results = { ok: false, base: BASE, study: STUDY };

async function main(state) {
  const study = await api(`/api/v1/studies/${encodeURIComponent(STUDY)}`);
  const lb = await api(`/api/v1/studies/${encodeURIComponent(STUDY)}/leaderboard?limit=10`);
  check(study.status === 'finished', `the test needs a finished study; study ${STUDY} is ${study.status}`);
  check((study.datasets || []).length >= 2, 'the test needs a study over several datasets');

  const pageErrors = [];
  const { browser, page } = await openPage(pageErrors);
  state.browser = browser;
  await page.goto(`${BASE}/#/study/${encodeURIComponent(STUDY)}`, { waitUntil: 'commit', timeout: 15_000 });
  await page.waitForFunction(() => document.getElementById('leaderboard')?.dataset.state === 'ready',
    null, { timeout: 40_000, polling: 100 })
    .catch(() => { throw new CheckFailed('#leaderboard was not rendered within 40 s'); });
  const boards = await page.evaluate(readBoards);
  results.boards = boards.map((b) => ({ dataset: b.dataset, rows: b.rows.length, best_count: b.best_count, note: b.note }));

  // One board per dataset of the study, in its order, each as the API ranks it.
  check(boards.length === study.datasets.length,
    `#leaderboard shows ${boards.length} boards for ${study.datasets.length} datasets`);
  boards.forEach((b, i) => {
    const want = lb.datasets[i];
    check(b.dataset === study.datasets[i] && want.dataset === study.datasets[i],
      `board ${i} is '${b.dataset}', the study's dataset ${i} is '${study.datasets[i]}'`);
    check(b.title === b.dataset, `board ${i}'s title is '${b.title}'`);
    check(b.rows.length === want.trials.length && b.rows.length > 0,
      `board '${b.dataset}' shows ${b.rows.length} rows, the API has ${want.trials.length}`);
    check(b.rows.every((r) => r.dataset === b.dataset), `board '${b.dataset}' mixes datasets`);
    check(b.rows.map((r) => r.id).join() === want.trials.map((t) => t.id).join(),
      `board '${b.dataset}' rows ${b.rows.map((r) => r.id)} are not the API's ${want.trials.map((t) => t.id)}`);
    check(b.best_count === want.best_count && b.note.startsWith(expectedNote(want)),
      `board '${b.dataset}' says '${b.note}' (best_count ${b.best_count}); the API has best_count ${want.best_count}`);
  });

  // The best card: a line per dataset, not one best across them.
  const bestRows = await page.$$eval('#best-per-dataset .best-row', (rows) => rows.map((r) => r.dataset.dataset));
  check(bestRows.join() === study.datasets.join(), `the best card lists [${bestRows}], not the datasets [${study.datasets}]`);

  // A click on the last board's second row shows that trial.
  const last = boards[boards.length - 1];
  const pick = last.rows[Math.min(1, last.rows.length - 1)].id;
  // Clicked again while the details do not show: views drawn as they come into sight may
  // redraw the board under the first click on a loaded machine.
  let shown = false;
  for (let tries = 0; tries < 6 && !shown; ++tries) {
    await page.click(`#leaderboard section.board[data-dataset="${last.dataset}"] tr[data-trial-id="${pick}"]`);
    shown = await page.waitForSelector(`#trial-details [data-trial-id="${pick}"]`, { timeout: 5_000 })
      .then(() => true, () => false);
  }
  check(shown, `clicking trial ${pick} in the '${last.dataset}' board did not show its details`);
  results.clicked = pick;

  results.screenshots = [];
  for (const [name, selector] of [['leaderboard-best', '.study-top'], ['leaderboard', '.leaderboard-card']]) {
    await page.evaluate((sel) => {
      document.querySelector(sel).scrollIntoView({ block: 'start' });
      window.scrollBy(0, -64); // the sticky top bar
    }, selector);
    const file = path.join(OUT, `${name}.png`);
    await page.screenshot({ path: file });
    results.screenshots.push(file);
  }

  // The studies list: each dataset's best (the summary's, as the boards say it), never one
  // across datasets.
  study.best.forEach((b, i) => {
    const want = lb.datasets[i];
    check(b.dataset === want.dataset && b.value === want.best_value && b.count === want.best_count,
      `the summary's best ${JSON.stringify(b)} is not board '${want.dataset}' (best ${want.best_value}, ${want.best_count} share it)`);
  });
  await page.goto(`${BASE}/#/`, { waitUntil: 'commit', timeout: 15_000 });
  const cell = await page.waitForSelector(`tr[data-study-id="${study.id}"] .best-cell`, { timeout: 15_000 })
    .then((el) => el.textContent(), () => { throw new CheckFailed('the studies list shows no best for the study'); });
  results.studies_best = cell;
  check(cell === bestPerDataset(study.best), `the studies list says '${cell}', not '${bestPerDataset(study.best)}'`);
  for (const d of study.datasets) check(cell.includes(`${d} `), `the studies list's best '${cell}' does not name ${d}`);
  check(pageErrors.length === 0, `uncaught errors in the page: ${pageErrors.join(' | ')}`);
}

run('leaderboard_page', results, main);
