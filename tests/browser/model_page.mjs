// Browser test of the trial view's model download (a study with keep_weights), against a
// running layerlab server and a finished study:
//
//   node tests/browser/model_page.mjs --base http://127.0.0.1:8080 --study 1 --trial 7 \
//     --other 3 --out DIR
//
// --trial: a trial with a kept model; --other: one without. Checks the API (model_kept in
// GET /api/v1/trials/{id}; GET /api/v1/trials/{other}/model is a 404 whose JSON says why),
// then opens #/study/ID in headless Chromium (LAYERLAB_CHROMIUM, default /usr/bin/chromium),
// clicks the trial's row, clicks "Download model" in its details and saves what the browser
// downloaded to DIR/downloaded.safetensors; the other trial's details have no such button.
// Prints one JSON line ("ok": true, "file": the saved path, what was seen) and exits 0; exits
// 1 with the failed check on stderr. browser_test.cc reads the file with the independent
// reader (tests/integration/model/read_safetensors.py) against `layerlab predict`.

import fs from 'node:fs';
import path from 'node:path';

import { api as apiAt, check, openPage, parseArgs, run } from './page_check.mjs';

const args = parseArgs(process.argv, ['base', 'study', 'trial', 'other'],
  'node tests/browser/model_page.mjs --base URL --study ID --trial ID --other ID --out DIR');
const BASE = args.base;
const STUDY = String(args.study);
const TRIAL = String(args.trial);
const OTHER = String(args.other);
const OUT = args.out;
const api = (p) => apiAt(BASE, p);

const results = { ok: false, base: BASE, study: STUDY, trial: TRIAL, checks: {} };

// Shows a trial's details: its row in the trials table (every status listed), clicked.
async function openTrial(page, id) {
  const row = `#trials-table tbody tr[data-trial-id="${id}"]`;
  await page.waitForSelector(row, { timeout: 15_000 });
  await page.locator(row).click();
  await page.waitForSelector(`#trial-details [data-trial-id="${id}"]`, { timeout: 10_000 });
}

async function main(state) {
  const kept = await api(`/api/v1/trials/${TRIAL}`);
  check(kept.model_kept === true, `GET /api/v1/trials/${TRIAL}: model_kept is ${kept.model_kept}`);
  const other = await api(`/api/v1/trials/${OTHER}`);
  check(other.model_kept === false, `GET /api/v1/trials/${OTHER}: model_kept is ${other.model_kept}`);
  const missing = await fetch(`${BASE}/api/v1/trials/${OTHER}/model`);
  const body = await missing.json();
  check(missing.status === 404, `GET /api/v1/trials/${OTHER}/model -> ${missing.status}`);
  check(body.error && /no model kept for trial/.test(body.error.message),
    `GET /api/v1/trials/${OTHER}/model: ${JSON.stringify(body)}`);
  results.checks.missing = { status: missing.status, message: body.error.message };

  const pageErrors = [];
  const { browser, page } = await openPage(pageErrors);
  state.browser = browser;
  await page.goto(`${BASE}/#/study/${encodeURIComponent(STUDY)}`, { waitUntil: 'commit', timeout: 15_000 });

  await openTrial(page, OTHER);
  check(await page.locator('#trial-details .download-model').count() === 0,
    `trial ${OTHER} has no kept model but its details show a download button`);

  await openTrial(page, TRIAL);
  const button = page.locator('#trial-details .download-model');
  await button.waitFor({ timeout: 10_000 });
  results.checks.button = { text: (await button.textContent()).trim(), href: await button.getAttribute('href') };
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 15_000 }), button.click()]);
  const file = path.join(OUT, 'downloaded.safetensors');
  await download.saveAs(file);
  results.file = file;
  results.checks.download = { suggested: download.suggestedFilename(), bytes: fs.statSync(file).size };
  check(results.checks.download.bytes > 8, `the download is ${results.checks.download.bytes} bytes`);
  await page.screenshot({ path: path.join(OUT, 'model-download.png') });
  check(pageErrors.length === 0, `page errors: ${pageErrors.join('; ')}`);
}

run('model_page', results, main);
