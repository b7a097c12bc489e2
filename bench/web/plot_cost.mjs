// What one Plotly plot costs to draw in this machine's headless Chromium (software WebGL),
// with the dashboard's own Plotly bundle from a running `layerlab serve`: parallel
// coordinates (5 axes) with 1,000 and 250 lines, 5,000 points as scattergl and as SVG
// scatter, 2,000 as SVG. Each figure: Plotly.newPlot until two frames later, in ms, one page.
//
//   node bench/web/plot_cost.mjs http://127.0.0.1:PORT
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require('../../web/node_modules/playwright-core');

const base = String(process.argv[2] || '').replace(/\/+$/, '');
if (!base) {
  process.stderr.write('usage: node bench/web/plot_cost.mjs BASE_URL\n');
  process.exit(2);
}
const browser = await chromium.launch({
  executablePath: process.env.LAYERLAB_CHROMIUM || '/usr/bin/chromium',
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  const page = await (await browser.newContext({ viewport: { width: 1366, height: 768 } })).newPage();
  await page.goto(`${base}/#/workers`);
  const url = await page.evaluate(() => document.querySelector('meta[name="layerlab-plotly"]')?.content || '/vendor/plotly.min.js');
  await page.addScriptTag({ url });
  const out = await page.evaluate(async () => {
    const res = {};
    const cases = [['parcoords_1000', 1000, 'parcoords'], ['parcoords_1000_again', 1000, 'parcoords'], ['parcoords_250', 250, 'parcoords'],
      ['scattergl_5000', 5000, 'scattergl'], ['scatter_svg_5000', 5000, 'scatter'], ['scatter_svg_2000', 2000, 'scatter']];
    for (const [name, n, type] of cases) {
      const div = document.createElement('div');
      div.style.width = '1300px';
      div.style.height = '400px';
      document.body.append(div);
      const col = () => Array.from({ length: n }, () => Math.random());
      const data = type === 'parcoords'
        ? [{ type, dimensions: [0, 1, 2, 3, 4].map((k) => ({ label: `d${k}`, values: col() })), line: { color: col() } }]
        : [{ type, mode: 'markers', x: Array.from({ length: n }, (_, i) => i), y: col() }];
      const t0 = performance.now();
      await window.Plotly.newPlot(div, data, {}, { plotGlPixelRatio: 1 });
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      res[name] = Math.round(performance.now() - t0);
      window.Plotly.purge(div);
      div.remove();
    }
    return res;
  });
  process.stdout.write(`${JSON.stringify({ plotly: url, ms: out })}\n`);
} finally {
  await browser.close();
}
