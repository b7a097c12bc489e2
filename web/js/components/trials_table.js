// The study's trials as a server-sorted, server-paged table (GET /studies/{id}/trials).
// Clicking a header sorts by it (again: reverses); clicking a row calls onSelect(trial).

import { get, endpoints } from '../api.js';
import { h, fill } from '../dom.js';
import { FINISHED, STATUSES, fmtAgo, fmtInt, fmtParam, fmtSeconds, fmtTime, fmtValue, statusLabel } from '../format.js';
import { statusBadge } from './progress.js';

export const PAGE_SIZE = 50;

export class TrialsTable {
  // opts: {studyId, parameters, datasets, goal, metric, onSelect(trial), onError(err|null)}
  constructor(opts) {
    this.o = opts;
    this.sort = 'number';
    this.order = 'asc';
    this.status = '';
    this.dataset = '';
    this.offset = 0;
    this.total = 0;
    this.trials = [];
    this.selected = new Set();
    this.focused = null;
    this.seq = 0;
    this.loaded = false;

    this.columns = [
      { title: '#', key: 'number', cls: 'num', cell: (t) => String(t.number) },
      ...((opts.datasets || []).length > 1 ? [{ title: 'dataset', cell: (t) => t.dataset }] : []),
      { title: 'status', cell: (t) => statusBadge(t.status) },
      ...(opts.parameters || []).map((p) => ({
        title: p.replace(/_/g, ' '), key: `params.${p}`, cls: 'param',
        cell: (t) => fmtParam(t.params ? t.params[p] : undefined),
      })),
      { title: opts.metric ? opts.metric.replace(/_/g, ' ') : 'value', key: 'value', cls: 'num strong', cell: (t) => fmtValue(t.value) },
      { title: 'time', key: 'duration', cls: 'num', cell: (t) => fmtSeconds(t.seconds) },
      { title: 'epochs', cls: 'num', cell: (t) => (t.epochs_run ?? '\u2014') },
      { title: 'attempts', cls: 'num', cell: (t) => (t.attempts ?? '\u2014') },
      { title: 'finished', key: 'finished', cls: 'nowrap', cell: (t) => (t.finished_at ? h('span', { title: fmtTime(t.finished_at) }, fmtAgo(t.finished_at)) : '\u2014') },
    ];

    this.statusSelect = h('select', { id: 'trials-status', 'aria-label': 'status filter', onchange: () => {
      this.status = this.statusSelect.value;
      this.offset = 0;
      this.load();
    } },
    h('option', { value: '' }, 'all statuses'),
    h('option', { value: FINISHED.join(',') }, 'finished'),
    STATUSES.map((s) => h('option', { value: s }, statusLabel(s))));
    const datasets = opts.datasets || [];
    this.datasetSelect = datasets.length > 1 ? h('select', { id: 'trials-dataset', 'aria-label': 'dataset filter', onchange: () => {
      this.dataset = this.datasetSelect.value;
      this.offset = 0;
      this.load();
    } }, h('option', { value: '' }, 'all datasets'), datasets.map((d) => h('option', { value: d }, d))) : null;
    this.prev = h('button', { type: 'button', class: 'btn', id: 'trials-prev', onclick: () => this.page(-1) }, '\u2039 prev');
    this.next = h('button', { type: 'button', class: 'btn', id: 'trials-next', onclick: () => this.page(1) }, 'next \u203a');
    this.range = h('span', { class: 'muted small nowrap', id: 'trials-range' }, '');
    this.thead = h('thead');
    this.tbody = h('tbody');
    this.table = h('table', { class: 'table trials', id: 'trials-table' }, this.thead, this.tbody);
    this.el = h('div', { class: 'trials-wrap' },
      h('div', { class: 'toolbar' },
        h('div', { class: 'toolbar-group' }, this.statusSelect, this.datasetSelect),
        h('div', { class: 'toolbar-group' }, this.range, this.prev, this.next)),
      h('div', { class: 'table-scroll' }, this.table));
    this.renderHead();
  }

  page(dir) {
    const next = this.offset + dir * PAGE_SIZE;
    if (next < 0 || next >= this.total) return;
    this.offset = next;
    this.load();
  }

  setSort(key) {
    if (this.sort === key) {
      this.order = this.order === 'asc' ? 'desc' : 'asc';
    } else {
      this.sort = key;
      this.order = key === 'value' && this.o.goal !== 'minimize' ? 'desc' : 'asc';
    }
    this.offset = 0;
    this.renderHead();
    this.load();
  }

  renderHead() {
    fill(this.thead, h('tr', null, this.columns.map((c) => {
      if (!c.key) return h('th', { class: c.cls || '' }, c.title);
      const active = this.sort === c.key;
      return h('th', {
        class: `sortable ${c.cls || ''} ${active ? 'sorted' : ''}`,
        dataset: { sort: c.key },
        'aria-sort': active ? (this.order === 'asc' ? 'ascending' : 'descending') : 'none',
        title: `sort by ${c.title}`,
        tabindex: '0',
        onclick: () => this.setSort(c.key),
        onkeydown: (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); this.setSort(c.key); } },
      }, c.title, h('span', { class: 'sort-arrow' }, active ? (this.order === 'asc' ? ' \u25b2' : ' \u25bc') : ''));
    })));
  }

  query() {
    return {
      status: this.status, dataset: this.dataset, sort: this.sort, order: this.order,
      limit: PAGE_SIZE, offset: this.offset,
    };
  }

  async load() {
    const seq = ++this.seq;
    this.el.classList.add('busy');
    try {
      const res = await get(endpoints.trials(this.o.studyId, this.query()));
      if (seq !== this.seq) return;
      this.total = res.total || 0;
      this.trials = res.trials || [];
      if (this.offset > 0 && this.offset >= this.total) {
        this.offset = Math.max(0, Math.floor((this.total - 1) / PAGE_SIZE) * PAGE_SIZE);
        this.load();
        return;
      }
      this.loaded = true;
      this.table.dataset.shown = `${this.sort}:${this.order}`; // what the rows are sorted by
      this.o.onError?.(null);
      this.renderBody();
    } catch (err) {
      if (seq === this.seq) this.o.onError?.(err);
    } finally {
      if (seq === this.seq) this.el.classList.remove('busy');
    }
  }

  setSelection(selectedIds, focusedId) {
    this.selected = new Set(selectedIds);
    this.focused = focusedId;
    for (const tr of this.tbody.rows) {
      const id = Number(tr.dataset.trialId);
      tr.classList.toggle('selected', this.selected.has(id));
      tr.classList.toggle('focused', id === this.focused);
    }
  }

  renderBody() {
    const n = this.trials.length;
    this.range.textContent = this.total
      ? `${fmtInt(this.offset + 1)}\u2013${fmtInt(this.offset + n)} of ${fmtInt(this.total)}`
      : '0 trials';
    this.prev.disabled = this.offset <= 0;
    this.next.disabled = this.offset + n >= this.total;
    if (!n) {
      fill(this.tbody, h('tr', { class: 'empty-row' },
        h('td', { colspan: String(this.columns.length) }, this.status || this.dataset ? 'no trials match the filter' : 'no trials yet')));
      return;
    }
    fill(this.tbody, this.trials.map((t) => h('tr', {
      dataset: { trialId: t.id, status: t.status },
      class: `clickable${this.selected.has(t.id) ? ' selected' : ''}${t.id === this.focused ? ' focused' : ''}`,
      title: t.error ? `error: ${t.error}` : 'show details and learning curve',
      tabindex: '0',
      onclick: () => this.o.onSelect?.(t),
      onkeydown: (ev) => { if (ev.key === 'Enter') this.o.onSelect?.(t); },
    }, this.columns.map((c) => h('td', { class: c.cls || '' }, c.cell(t))))));
  }
}
