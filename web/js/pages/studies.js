// #/ : the studies list, refreshed live from the event stream.

import { get, endpoints } from '../api.js';
import { EventStream } from '../events.js';
import { h, fill } from '../dom.js';
import { bestPerDataset, fmtAgo, fmtTime, fmtInt } from '../format.js';
import { refresher } from '../throttle.js';
import { countChips, progressBar, progressText, statusBadge } from '../components/progress.js';

// Each dataset's best, never one across datasets.
function bestCell(s) {
  const text = bestPerDataset(s.best);
  if (text === null) return h('span', { class: 'muted' }, '\u2014');
  return h('span', { class: 'best-cell num' }, text);
}

function row(s) {
  const href = `#/study/${encodeURIComponent(s.id)}`;
  return h('tr', { dataset: { studyId: s.id }, class: 'clickable', onclick: (ev) => {
    if (ev.target.closest('a')) return;
    location.hash = href;
  } },
  h('td', { class: 'num muted' }, String(s.id)),
  h('td', null, h('a', { href, class: 'study-link' }, s.name),
    h('div', { class: 'muted small' }, [s.method, s.metric && `${s.metric} (${s.goal})`].filter(Boolean).join(' \u00b7 '))),
  h('td', null, statusBadge(s.status)),
  h('td', { class: 'progress-cell' }, progressBar(s.counts, s.total, { compact: true }),
    h('div', { class: 'small muted' }, `${progressText(s.finished, s.total)} finished`)),
  h('td', null, countChips(s.counts)),
  h('td', null, bestCell(s)),
  h('td', { title: fmtTime(s.created_at), class: 'nowrap' }, fmtAgo(s.created_at)));
}

export function mount(root, _params, ctx) {
  ctx.setTitle('Studies');
  const count = h('span', { class: 'muted' });
  const body = h('div', { class: 'card table-card is-loading' }, h('div', { class: 'loading-text' }, 'Loading studies…'));
  fill(root,
    h('div', { class: 'page-head' }, h('h1', null, 'Studies ', count)),
    body);

  let studies = null;
  function render() {
    if (!studies) return;
    body.classList.remove('is-loading');
    count.textContent = studies.length ? `(${fmtInt(studies.length)})` : '';
    if (!studies.length) {
      fill(body, h('div', { class: 'empty-state', id: 'studies-empty' },
        h('div', { class: 'empty-title' }, 'No studies yet'),
        h('p', null, 'no studies yet: run ', h('code', null, 'layerlab run STUDY.yaml'),
          ' or POST one to ', h('code', null, '/api/v1/studies'))));
      return;
    }
    fill(body, h('table', { class: 'table', id: 'studies-table' },
      h('thead', null, h('tr', null,
        ['#', 'Study', 'Status', 'Progress', 'Trials', 'Best', 'Created'].map((t) => h('th', null, t)))),
      h('tbody', null, studies.map(row))));
  }

  async function load() {
    try {
      const res = await get(endpoints.studies());
      studies = res.studies || [];
      ctx.clearError('studies');
      render();
    } catch (err) {
      ctx.showError('studies', err);
      if (!studies) {
        body.classList.remove('is-loading');
        fill(body, h('div', { class: 'empty-state' }, 'Could not load the studies.'));
      }
    }
  }

  const refresh = refresher(load, 1000);
  refresh.now();
  const events = new EventStream(endpoints.events(), { onState: ctx.setLive });
  events.on('study', refresh.request).on('trial', refresh.request).on('resync', refresh.request).start();
  const tick = setInterval(render, 15000); // keeps "created ... ago" current
  return () => {
    events.close();
    refresh.stop();
    clearInterval(tick);
  };
}
