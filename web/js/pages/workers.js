// #/workers : the workers (alive or not) and the queue, refreshed on worker events and
// every 5 s.

import { get, endpoints } from '../api.js';
import { EventStream } from '../events.js';
import { h, fill } from '../dom.js';
import { fmtAge, fmtAgo, fmtBytes, fmtInt, fmtTime } from '../format.js';
import { refresher } from '../throttle.js';

function stat(label, value, id, hint) {
  return h('div', { class: 'stat', title: hint || '' },
    h('div', { class: 'stat-value num', id }, value),
    h('div', { class: 'stat-label' }, label));
}

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
  fill(root,
    h('div', { class: 'page-head' }, h('h1', null, 'Workers ', count),
      h('span', { class: 'muted small' }, 'refreshed on worker events and every 5 s')),
    queueBox,
    h('h2', { class: 'section-title' }, 'Workers'),
    workersBox,
    queueStudies);

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

  function renderWorkers(list) {
    workersBox.classList.remove('is-loading');
    const alive = list.filter((w) => w.alive).length;
    count.textContent = list.length ? `(${alive} alive of ${list.length})` : '';
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
        ['', 'Worker', 'Host', 'PID', 'Device', 'Pack', 'Memory', 'Status', 'Current trial', 'Heartbeat age', 'Started']
          .map((t) => h('th', { class: ['PID', 'Pack', 'Memory', 'Heartbeat age'].includes(t) ? 'num' : '' }, t)))),
      h('tbody', null, sorted.map(workerRow))));
  }

  async function load() {
    const [w, q] = await Promise.allSettled([get(endpoints.workers()), get(endpoints.queue())]);
    if (w.status === 'fulfilled') {
      ctx.clearError('workers');
      renderWorkers(w.value.workers || []);
    } else {
      ctx.showError('workers', w.reason);
    }
    if (q.status === 'fulfilled') {
      ctx.clearError('queue');
      renderQueue(q.value);
    } else {
      ctx.showError('queue', q.reason);
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
  };
}
