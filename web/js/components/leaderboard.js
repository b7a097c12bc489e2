// Per-dataset leaderboards (GET /studies/{id}/leaderboard): one table per dataset, ranked
// within that dataset only (a value on one dataset says nothing about another), under a
// line saying how many trials share its best value. Clicking a row calls onSelect(trial).

import { h } from '../dom.js';
import { bestNote, fmtParam, fmtSeconds, fmtValue } from '../format.js';
import { statusBadge } from './progress.js';

// lb: the endpoint's JSON; opts: {parameters, metric, onSelect(trial)}.
export function leaderboardBoards(lb, { parameters = [], metric = 'value', onSelect } = {}) {
  const boards = (lb && lb.datasets) || [];
  if (!boards.length) return h('div', { class: 'empty-state small' }, 'no datasets');
  return boards.map((b, i) => {
    const head = h('div', { class: 'board-head' },
      h('h3', { class: 'board-title' }, b.dataset),
      h('span', { class: 'muted small board-note', dataset: { bestCount: String(b.best_count ?? 0) } }, bestNote(b)));
    const trials = b.trials || [];
    const table = trials.length ? h('table', { class: 'table compact board-table', id: `leaderboard-${i}` },
      h('thead', null, h('tr', null,
        h('th', { class: 'num' }, 'rank'), h('th', { class: 'num' }, '#'),
        h('th', { class: 'num' }, metric.replace(/_/g, ' ')),
        parameters.map((p) => h('th', null, p.replace(/_/g, ' '))),
        h('th', { class: 'num' }, 'seed'), h('th', null, 'status'), h('th', { class: 'num' }, 'time'))),
      h('tbody', null, trials.map((t, rank) => h('tr', {
        class: `clickable${t.value === b.best_value ? ' board-best' : ''}`,
        tabindex: '0',
        dataset: { trialId: String(t.id), dataset: t.dataset },
        onclick: () => onSelect && onSelect(t),
        onkeydown: (e) => { if (e.key === 'Enter' && onSelect) onSelect(t); },
      },
      h('td', { class: 'num' }, String(rank + 1)),
      h('td', { class: 'num' }, String(t.number)),
      h('td', { class: 'num strong' }, fmtValue(t.value)),
      parameters.map((p) => h('td', null, fmtParam(t.params ? t.params[p] : undefined))),
      h('td', { class: 'num' }, fmtParam(t.params ? t.params.seed : undefined)),
      h('td', null, statusBadge(t.status)),
      h('td', { class: 'num' }, fmtSeconds(t.seconds)))))) : null;
    return h('section', { class: 'board', dataset: { dataset: b.dataset } }, head,
      table ? h('div', { class: 'table-scroll' }, table) : null);
  });
}
