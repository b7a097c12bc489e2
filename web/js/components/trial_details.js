// The details of one trial (GET /api/v1/trials/{id}): status, value, metrics, parameters
// (the searched ones first) and attempts; a download of its model when the study kept it
// (keep_weights: GET /api/v1/trials/{id}/model).

import { endpoints } from '../api.js';
import { h } from '../dom.js';
import { fmtParam, fmtSeconds, fmtTime, fmtValue, isNum } from '../format.js';
import { statusBadge } from './progress.js';

function kv(rows) {
  return h('dl', { class: 'kv' }, rows.filter(Boolean).map(([k, v]) => [h('dt', null, k), h('dd', null, v)]));
}

export function trialDetails(t, { parameters = [], metric } = {}) {
  const params = t.params || {};
  const searched = parameters.filter((p) => p in params);
  const others = Object.keys(params).filter((p) => !searched.includes(p)).sort();
  const metrics = t.metrics || {};
  const attempts = Array.isArray(t.attempts) ? t.attempts : [];
  const curve = t.curve || [];
  return h('div', { class: 'trial-details', dataset: { trialId: t.id } },
    h('div', { class: 'details-head' },
      h('h3', null, `Trial #${t.number}`),
      statusBadge(t.status),
      h('span', { class: 'muted small' }, `id ${t.id}${t.dataset ? ` \u00b7 ${t.dataset}` : ''}`),
      t.model_kept ? h('a', {
        class: 'btn btn-small download-model',
        href: endpoints.trialModel(t.id),
        download: `trial-${t.number}.safetensors`,
        title: 'The weights kept in the store (keep_weights), as safetensors',
      }, 'Download model') : null),
    t.error ? h('div', { class: 'error-box' }, t.error) : null,
    h('div', { class: 'details-grid' },
      h('div', null,
        h('h4', null, 'Result'),
        kv([
          [metric ? metric.replace(/_/g, ' ') : 'value', h('b', null, fmtValue(t.value))],
          ...Object.keys(metrics).filter((k) => k !== metric && isNum(metrics[k]))
            .map((k) => [k.replace(/_/g, ' '), fmtValue(metrics[k])]),
          ['training time', fmtSeconds(t.seconds)],
          ['epochs run', t.epochs_run ?? '\u2014'],
          ['epochs stored', String(curve.length)],
          t.worker ? ['worker', h('span', { class: 'mono small' }, t.worker)] : null,
          ['started', fmtTime(t.started_at)],
          ['finished', fmtTime(t.finished_at)],
        ])),
      h('div', null,
        h('h4', null, 'Parameters'),
        kv(searched.map((p) => [p.replace(/_/g, ' '), h('b', null, fmtParam(params[p], 6))])),
        others.length ? h('details', { class: 'more-params' },
          h('summary', null, `${others.length} more`),
          kv(others.map((p) => [p.replace(/_/g, ' '), fmtParam(params[p], 6)]))) : null)),
    attempts.length ? h('div', null,
      h('h4', null, `Attempts (${attempts.length})`),
      h('table', { class: 'table compact attempts' },
        h('thead', null, h('tr', null, ['#', 'worker', 'started', 'finished', 'outcome'].map((c) => h('th', null, c)))),
        h('tbody', null, attempts.map((a) => h('tr', null,
          h('td', { class: 'num' }, String(a.attempt)),
          h('td', { class: 'mono small' }, a.worker || '\u2014'),
          h('td', { class: 'nowrap' }, fmtTime(a.started_at)),
          h('td', { class: 'nowrap' }, a.finished_at ? fmtTime(a.finished_at) : '\u2014'),
          h('td', null, a.outcome ? statusBadge(a.outcome) : h('span', { class: 'muted' }, 'running'))))))) : null);
}
