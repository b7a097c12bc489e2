// Serves the dashboard's files from web/ on disk and passes /api, /metrics and /healthz
// through to a running `layerlab serve`, so that dashboard changes can be tried against the
// real API without rebuilding the binary (which embeds web/ at build time):
//
//   node tests/browser/dev_server.mjs --api http://127.0.0.1:8080 [--port 0]
//
// Prints `dashboard at http://127.0.0.1:PORT/` on stderr once it listens.

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const WEB = path.resolve(here, '../../web');

function arg(name, def) {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 || process.argv[i + 1] === undefined ? def : process.argv[i + 1];
}
const API = new URL(arg('api', 'http://127.0.0.1:8080'));
const PORT = Number(arg('port', 0));

function serveFile(res, file, type) {
  fs.readFile(path.join(WEB, file), (err, data) => {
    if (err) {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'not_found', message: `no dashboard file ${file}` } }));
      return;
    }
    res.writeHead(200, { 'Content-Type': type, 'Cache-Control': 'no-cache' });
    res.end(data);
  });
}

function proxy(req, res) {
  const up = http.request({
    host: API.hostname, port: API.port, method: req.method, path: req.url,
    headers: { ...req.headers, host: API.host },
  }, (r) => {
    res.writeHead(r.statusCode, r.headers);
    r.pipe(res);
  });
  up.on('error', (err) => {
    res.writeHead(502, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'unavailable', message: `proxy: ${err.message}` } }));
  });
  res.on('close', () => up.destroy()); // the browser went away (e.g. an event stream)
  req.pipe(up);
}

const server = http.createServer((req, res) => {
  const p = new URL(req.url, 'http://x').pathname;
  if (p.startsWith('/api/') || p === '/metrics' || p === '/healthz') return proxy(req, res);
  if (p === '/') return serveFile(res, 'index.html', 'text/html; charset=utf-8');
  if (p === '/vendor/plotly-gl2d.min.js') return serveFile(res, 'node_modules/plotly.js/dist/plotly-gl2d.min.js', 'text/javascript');
  if (/^\/(js|css)(\/[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*)+$/.test(p)) {
    return serveFile(res, p.slice(1), p.endsWith('.css') ? 'text/css' : 'text/javascript');
  }
  res.writeHead(404, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ error: { code: 'not_found', message: `no route ${p}` } }));
  return undefined;
});
server.listen(PORT, '127.0.0.1', () => {
  process.stderr.write(`dashboard at http://127.0.0.1:${server.address().port}/\n`);
});
