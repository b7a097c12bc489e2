// What the browser checks of a running server share (leaderboard_page.mjs, pareto_page.mjs):
// their arguments, a failed check, the API, Debian's Chromium, and the one JSON line they
// print when they end.

import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { chromium } = require('../../web/node_modules/playwright-core');

export class CheckFailed extends Error {}
export function check(cond, message) {
  if (!cond) throw new CheckFailed(message);
}

// --name value pairs; exits 2 with `usage` when one of `required` is missing. Makes --out.
export function parseArgs(argv, required, usage) {
  const out = {};
  for (let i = 2; i < argv.length; i += 2) out[argv[i].replace(/^--/, '')] = argv[i + 1];
  if (required.some((k) => !out[k])) {
    process.stderr.write(`usage: ${usage}\n`);
    process.exit(2);
  }
  out.base = String(out.base || '').replace(/\/+$/, '');
  out.out = path.resolve(out.out || 'browser-test-output');
  fs.mkdirSync(out.out, { recursive: true });
  return out;
}

// GET base + p as JSON; a failed check naming the status otherwise.
export async function api(base, p) {
  const res = await fetch(`${base}${p}`, { headers: { Accept: 'application/json' } });
  const text = await res.text();
  if (!res.ok) throw new CheckFailed(`GET ${p} -> ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

// Headless Chromium (LAYERLAB_CHROMIUM, default Debian's /usr/bin/chromium) and a page of
// 1366x900 that collects uncaught errors in `errors`.
export async function openPage(errors) {
  const browser = await chromium.launch({
    executablePath: process.env.LAYERLAB_CHROMIUM || '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const page = await (await browser.newContext({ viewport: { width: 1366, height: 900 } })).newPage();
  page.on('pageerror', (err) => errors.push(String(err && err.message ? err.message : err)));
  return { browser, page };
}

// Runs main(state) where state.browser is closed at the end; prints `results` as one JSON
// line ("ok" set) and exits 0, or 1 with "NAME: FAILED: ..." on stderr (also after 90 s).
export function run(name, results, main) {
  const state = { browser: null };
  const done = (code, message) => {
    clearTimeout(overall);
    results.ok = code === 0;
    if (message) results.error = message;
    process.stdout.write(`${JSON.stringify(results)}\n`);
    if (message) process.stderr.write(`${name}: FAILED: ${message}\n`);
    const exit = () => process.exit(code);
    if (state.browser) state.browser.close().then(exit, exit);
    else exit();
  };
  const overall = setTimeout(() => done(1, 'overall timeout of 90 s exceeded'), 90_000);
  main(state).then(() => done(0),
    (err) => done(1, err instanceof CheckFailed ? err.message : (err && err.stack) || String(err)));
}
