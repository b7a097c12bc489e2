// Study progress: a stacked bar (one segment per trial status) and the counts per status.

import { h } from '../dom.js';
import { STATUSES, fmtInt, fmtPercent, statusLabel } from '../format.js';

export function statusBadge(status, attrs = {}) {
  return h('span', { ...attrs, class: `badge st-${status || 'unknown'}` }, statusLabel(status || 'unknown'));
}

// A bar of width 100% = total trials; finished statuses are solid, running striped,
// queued left empty.
export function progressBar(counts = {}, total = 0, { compact = false } = {}) {
  const sum = STATUSES.reduce((a, s) => a + (counts[s] || 0), 0);
  const whole = Math.max(total || 0, sum, 1);
  const segs = [];
  for (const s of STATUSES) {
    const n = counts[s] || 0;
    if (!n || s === 'queued') continue;
    segs.push(h('span', {
      class: `seg st-${s}`,
      style: { width: `${(100 * n) / whole}%` },
      title: `${statusLabel(s)}: ${fmtInt(n)}`,
    }));
  }
  return h('div', {
    class: `progress${compact ? ' compact' : ''}`,
    role: 'progressbar',
    'aria-valuemin': '0',
    'aria-valuemax': String(whole),
    'aria-valuenow': String(sum - (counts.queued || 0)),
  }, segs);
}

// "38 completed · 6 running · 80 queued" as small chips (zero counts left out).
export function countChips(counts = {}) {
  const chips = [];
  for (const s of STATUSES) {
    const n = counts[s] || 0;
    if (!n) continue;
    chips.push(h('span', { class: 'chip', title: statusLabel(s) },
      h('i', { class: `dot st-${s}` }), h('b', { dataset: { status: s } }, fmtInt(n)), ` ${statusLabel(s)}`));
  }
  if (!chips.length) chips.push(h('span', { class: 'muted' }, 'no trials'));
  return h('div', { class: 'chips' }, chips);
}

export function progressText(finished, total) {
  return `${fmtInt(finished)} / ${fmtInt(total)} (${fmtPercent(finished, total)})`;
}
