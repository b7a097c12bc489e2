// #/workers : the workers (alive or not) with what each did (trials done, failed, lost;
// busy share of the last hour), the cluster's finished trials per minute by worker, and
// the queue with its depth over time; refreshed on worker events and every 5 s.

import { get, endpoints } from '../api.js';
import { EventStream } from '../events.js';
import { h, fill } from '../dom.js';
import { DASH, fmtAge, fmtAgo, fmtBytes, fmtInt, fmtPercent, fmtSeconds, fmtTime, isNum } from '../format.js';
import { markError, markLoading, plotCard, purge, renderFigure } from '../charts.js';
import { emptyFigure, queueFigure, throughputFigure } from '../plots.js';
import { refresher } from '../throttle.js';

// The window of the utilisation column and of both charts (the API's default).
const WINDOW_MINUTES = 60;

function stat(label, value, id, hint) {
  return h('div', { class: 'stat', title: hint || '' },
    h('div', { class: 'stat-value num', id }, value),
    h('div', { class: 'stat-label' }, label));
}

const NUMERIC = ['PID', 'Pack', 'Memory', 'Done', 'Failed', 'Lost', 'Utilisation', 'Heartbeat age'];

function workerRow(w) {
  const alive = !!w.alive;
  return h('tr', { dataset: { workerId: w.id }, class: alive ? '' : 'dead' },
    h('td', null, h('span', { class: `alive-dot ${alive ? 'on' : 'off'}`, title: alive ? 'alive' : 'silent or stopped' }),
      h('span', { class: 'small' }, alive ? 'alive' : 'gone')),
    h('td', { class: 'mono' }, w.id),
    h('td', null, w.host || '\u2014'),
    h('td', { class: 'num' }, w.pid ?? '\u2014'),
    h('td', null, w.device || '\u2014'),
    h('td', { class: 'num', dataset: { col: 'pack' }, title: 'trials trained at once' }, fmtInt(w.pack)),
    h('td', { class: 'num', dataset: { col: 'memory' }, title: 'backend memory in use' }, fmtBytes(w.memory_bytes)),
    h('td', null, h('span', { class: `badge ws-${w.status}` }, w.status || '\u2014')),
    h('td', { class: 'num', dataset: { col: 'done' }, title: 'trials it finished with a result' }, fmtInt(w.done)),
    h('td', { class: `num ${w.failed ? 'warn-text' : ''}`, dataset: { col: 'failed' }, title: 'trials that failed on it' }, fmtInt(w.failed)),
    h('td', { class: `num ${w.lost ? 'warn-text' : ''}`, dataset: { col: 'lost' }, title: 'attempts it lost: it died or hung and its lease ran out' }, fmtInt(w.lost)),
    h('td', {
      class: 'num',
      dataset: { col: 'utilisation' },
      title: isNum(w.utilisation)
        ? `busy ${fmtSeconds(w.busy_seconds)} of ${fmtSeconds(w.alive_seconds)} alive in the last ${WINDOW_MINUTES} min`
        : `not alive in the last ${WINDOW_MINUTES} min`,
    }, isNum(w.utilisation) ? fmtPercent(w.utilisation, 1) : DASH),
    h('td', null, w.current_trial === null || w.current_trial === undefined
      ? h('span', { class: 'muted' }, '\u2014')
      : h('span', { class: 'num' }, `trial ${w.current_trial}`)),
    h('td', { class: `num ${alive ? '' : 'warn-text'}`, title: fmtTime(w.heartbeat_at) }, fmtAge(w.heartbeat_age)),
    h('td', { title: fmtTime(w.started_at), class: 'nowrap' }, fmtAgo(w.started_at)));
}

export function mount(root, _params, ctx) {
  ctx.setTitle('Workers');
  const queueBox = h('div', { class: 'card stats is-loading', id: 'queue' }, h('div', { class: 'loading-text' }, 'Loading the queue…'));
  const workersBox = h('div', { class: 'card table-card is-loading' }, h('div', { class: 'loading-text' }, 'Loading workers…'));
  const queueStudies = h('div', { class: 'card table-card', hidden: true });
  const count = h('span', { class: 'muted' });
  const throughputPlot = plotCard({
    id: 'throughput-plot', title: 'Trials finished per minute', subtitle: `the last ${WINDOW_MINUTES} minutes, stacked by worker`,
  });
  const queuePlot = plotCard({
    id: 'queue-plot', title: 'Queue depth', subtitle: 'trials queued and in flight, as the server sampled them',
  });
  fill(root,
    h('div', { class: 'page-head' }, h('h1', null, 'Workers ', count),
      h('span', { class: 'muted small' }, 'refreshed on worker events and every 5 s')),
    queueBox,
    h('div', { class: 'grid' }, throughputPlot.card, queuePlot.card),
    h('h2', { class: 'section-title' }, 'Workers'),
    workersBox,
    queueStudies);
  for (const p of [throughputPlot, queuePlot]) markLoading(p.div);

  function renderQueue(q) {
    queueBox.classList.remove('is-loading');
    fill(queueBox,
      stat('queued', fmtInt(q.depth), 'queue-depth', 'trials waiting for a worker'),
      stat('in flight', fmtInt(q.in_flight), 'queue-in-flight', 'trials claimed by a worker'),
      stat('dead-lettered', fmtInt(q.dead_lettered), 'queue-dead', 'trials failed after losing their worker too often'),
      stat('backend', q.backend || '\u2014', 'queue-backend'));
    const list = q.studies || [];
    queueStudies.hidden = list.length === 0;
    fill(queueStudies, h('table', { class: 'table' },
      h('thead', null, h('tr', null, ['Running study', 'Queued', 'Running'].map((t, i) => h('th', { class: i ? 'num' : '' }, t)))),
      h('tbody', null, list.map((s) => h('tr', null,
        h('td', null, h('a', { href: `#/study/${encodeURIComponent(s.id)}` }, s.name)),
        h('td', { class: 'num' }, fmtInt(s.queued)),
        h('td', { class: 'num' }, fmtInt(s.running)))))));
  }

  // One page of the API's list (alive first, then the most recently seen); total and alive
  // count every worker the store knows.
  function renderWorkers(page) {
    const list = page.workers || [];
    workersBox.classList.remove('is-loading');
    const total = page.total ?? list.length;
    const alive = page.alive ?? list.filter((w) => w.alive).length;
    count.textContent = total ? `(${fmtInt(alive)} alive of ${fmtInt(total)})` : '';
    if (!list.length) {
      fill(workersBox, h('div', { class: 'empty-state', id: 'workers-empty' },
        h('div', { class: 'empty-title' }, 'No workers'),
        h('p', null, 'start one with ', h('code', null, 'layerlab worker --store URL'),
          ', or ', h('code', null, 'layerlab serve --workers N'))));
      return;
    }
    const sorted = [...list].sort((a, b) => (b.alive - a.alive) || String(a.id).localeCompare(String(b.id)));
    fill(workersBox, h('table', { class: 'table', id: 'workers-table' },
      h('thead', null, h('tr', null,
        ['', 'Worker', 'Host', 'PID', 'Device', 'Pack', 'Memory', 'Status', 'Done', 'Failed', 'Lost', 'Utilisation', 'Current trial', 'Heartbeat age', 'Started']
          .map((t) => h('th', { class: NUMERIC.includes(t) ? 'num' : '' }, t)))),
      h('tbody', null, sorted.map(workerRow))),
      total > list.length
        ? h('p', { class: 'muted small', id: 'workers-more' },
          `${fmtInt(list.length)} shown of ${fmtInt(total)}: the alive ones first, then the most recently seen (GET /api/v1/workers?offset=${list.length} for the next)`)
        : null);
  }

  async function renderThroughput(t) {
    await renderFigure(throughputPlot.div, throughputFigure(t, { emptyText: `no trial finished in the last ${WINDOW_MINUTES} minutes` }));
    await renderFigure(queuePlot.div, queueFigure(t, { emptyText: 'no sample of the queue yet: the server takes one every 10 s' }));
  }

  async function load() {
    const span = { minutes: WINDOW_MINUTES };
    const [w, q, t] = await Promise.allSettled([
      get(endpoints.workers(span)), get(endpoints.queue()), get(endpoints.throughput(span))]);
    if (w.status === 'fulfilled') {
      ctx.clearError('workers');
      renderWorkers(w.value);
    } else {
      ctx.showError('workers', w.reason);
    }
    if (q.status === 'fulfilled') {
      ctx.clearError('queue');
      renderQueue(q.value);
    } else {
      ctx.showError('queue', q.reason);
    }
    if (t.status === 'fulfilled') {
      ctx.clearError('throughput');
      await renderThroughput(t.value);
    } else {
      ctx.showError('throughput', t.reason);
      for (const p of [throughputPlot, queuePlot]) {
        markError(p.div);
        await renderFigure(p.div, emptyFigure(`could not load: ${t.reason.message}`));
      }
    }
  }

  const refresh = refresher(load, 1000);
  refresh.now();
  const events = new EventStream(endpoints.events(), { onState: ctx.setLive });
  events.on('worker', refresh.request).on('resync', refresh.request).start();
  const timer = setInterval(refresh.request, 5000);
  return () => {
    events.close();
    refresh.stop();
    clearInterval(timer);
    for (const p of [throughputPlot, queuePlot]) purge(p.div);
  };
}
