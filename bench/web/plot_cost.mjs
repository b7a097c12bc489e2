// What one plot costs to draw in this machine's headless Chromium (software WebGL), with
// the dashboard's own Plotly bundle and modules from a running `layerlab serve` (or
// tests/browser/dev_server.mjs for web/ on disk). Each figure: from building it until two
// frames later, in ms, one page.
//
// 1. The parallel coordinates, both ways on the same data (4 parameters and the value: 5
//    axes), alternating in rounds: the dashboard's canvas view (web/js/parallel.js and
//    components/parallel.js: parallelModel + ParallelCoords.set) against Plotly's parcoords
//    (parcoordsFigure + Plotly.newPlot, which the report still uses), with 1,000 and 50,000
//    lines. Each figure in `parallel` is the median of the rounds, with every round in
//    `parallel_runs`. canvas_*_redraw: a redraw of the same lines (what a brush costs).
// 2. Plotly only, once each: 250 parcoords lines, 5,000 points as scattergl and as SVG
//    scatter, 2,000 as SVG.
//
//   node bench/web/plot_cost.mjs http://127.0.0.1:PORT [--rounds 3] [--dpr 1]
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require('../../web/node_modules/playwright-core');

const argv = process.argv.slice(2);
const opt = (name, def) => {
  const i = argv.indexOf(`--${name}`);
  return i < 0 ? def : argv[i + 1];
};
const base = String(argv.find((a) => !a.startsWith('--') && !/^\d+$/.test(a)) || '').replace(/\/+$/, '');
const ROUNDS = Math.max(1, Number(opt('rounds', 3)));
const DPR = Math.max(1, Number(opt('dpr', 1)));
if (!base) {
  process.stderr.write('usage: node bench/web/plot_cost.mjs BASE_URL [--rounds 3] [--dpr 1]\n');
  process.exit(2);
}
const browser = await chromium.launch({
  executablePath: process.env.LAYERLAB_CHROMIUM || '/usr/bin/chromium',
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  const page = await (await browser.newContext({ viewport: { width: 1366, height: 768 }, deviceScaleFactor: DPR })).newPage();
  await page.goto(`${base}/#/workers`);
  const url = await page.evaluate(() => document.querySelector('meta[name="layerlab-plotly"]')?.content || '/vendor/plotly.min.js');
  await page.addScriptTag({ url });
  const out = await page.evaluate(async ({ rounds, dpr }) => {
    const { parallelModel } = await import('/js/parallel.js');
    const { ParallelCoords } = await import('/js/components/parallel.js');
    const { parcoordsFigure, PLOT_CONFIG } = await import('/js/plots.js');
    const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const holder = () => {
      const div = document.createElement('div');
      div.style.width = '1300px';
      div.style.height = '330px';
      document.body.prepend(div);
      return div;
    };
    // A study's /columns: the value and 4 searched parameters (two of them categories).
    const columns = (n) => {
      const rnd = () => Math.random();
      const pick = (xs) => () => xs[Math.floor(Math.random() * xs.length)];
      const act = pick(['relu', 'tanh', 'sigmoid']);
      const layers = pick([1, 2, 3, 4]);
      return {
        total: n,
        returned: n,
        columns: {
          value: Array.from({ length: n }, rnd),
          'params.activation': Array.from({ length: n }, act),
          'params.hidden_layers': Array.from({ length: n }, layers),
          'params.learning_rate': Array.from({ length: n }, () => 10 ** (-4 + 3 * Math.random())),
          'params.dropout': Array.from({ length: n }, rnd),
        },
      };
    };
    const params = ['activation', 'hidden_layers', 'learning_rate', 'dropout'];
    const opts = { metric: 'val_accuracy', goal: 'maximize', logParams: ['learning_rate'], choiceParams: ['activation', 'hidden_layers'] };
    const canvas = async (cols) => {
      const div = holder();
      const t0 = performance.now();
      const view = new ParallelCoords(div);
      view.set(parallelModel(cols, params, opts));
      await frames();
      const first = performance.now() - t0;
      if (div.dataset.drawn !== String(cols.columns.value.length)) throw new Error(`canvas drew ${div.dataset.drawn} lines`);
      const t1 = performance.now();
      view.draw();
      await frames();
      const redraw = performance.now() - t1;
      view.destroy();
      div.remove();
      return [first, redraw];
    };
    const plotly = async (cols) => {
      const div = holder();
      const t0 = performance.now();
      const fig = parcoordsFigure(cols, params, opts);
      await window.Plotly.newPlot(div, fig.data, fig.layout, { ...PLOT_CONFIG, plotGlPixelRatio: dpr });
      await frames();
      const ms = performance.now() - t0;
      window.Plotly.purge(div);
      div.remove();
      return ms;
    };
    const runs = {};
    const add = (name, ms) => (runs[name] ||= []).push(Math.round(ms));
    const data = { 1000: columns(1000), 50000: columns(50000) };
    await canvas(data[1000]); // warm-up: module code compiled, fonts loaded
    for (let r = 0; r < rounds; r += 1) {
      for (const n of [1000, 50000]) {
        const [first, redraw] = await canvas(data[n]);
        add(`canvas_${n}`, first);
        add(`canvas_${n}_redraw`, redraw);
        add(`plotly_parcoords_${n}`, await plotly(data[n]));
      }
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const parallel = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, median(v)]));

    const res = {};
    const cases = [['parcoords_250', 250, 'parcoords'], ['scattergl_5000', 5000, 'scattergl'],
      ['scatter_svg_5000', 5000, 'scatter'], ['scatter_svg_2000', 2000, 'scatter']];
    for (const [name, n, type] of cases) {
      const div = holder();
      const col = () => Array.from({ length: n }, () => Math.random());
      const d = type === 'parcoords'
        ? [{ type, dimensions: [0, 1, 2, 3, 4].map((k) => ({ label: `d${k}`, values: col() })), line: { color: col() } }]
        : [{ type, mode: 'markers', x: Array.from({ length: n }, (_, i) => i), y: col() }];
      const t0 = performance.now();
      await window.Plotly.newPlot(div, d, {}, { plotGlPixelRatio: dpr });
      await frames();
      res[name] = Math.round(performance.now() - t0);
      window.Plotly.purge(div);
      div.remove();
    }
    return { parallel, parallel_runs: runs, ms: res };
  }, { rounds: ROUNDS, dpr: DPR });
  process.stdout.write(`${JSON.stringify({ plotly: url, dpr: DPR, rounds: ROUNDS, ...out })}\n`);
} finally {
  await browser.close();
}
