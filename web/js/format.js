// Formatting of numbers, durations and times for display. Pure functions, no DOM.

export const DASH = '\u2014';

// Trial statuses in display order; the finished ones count towards progress.
export const STATUSES = ['queued', 'running', 'completed', 'early_stopped', 'pruned',
  'diverged', 'failed', 'cancelled'];
export const FINISHED = ['completed', 'early_stopped', 'pruned'];

export function statusLabel(s) {
  return String(s || '').replace(/_/g, ' ');
}

// One formatter for every grouped integer: Number.prototype.toLocaleString builds a new
// Intl.NumberFormat on each call, which cost 0.4 s for the hover texts of 10,000 points.
const GROUPED = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

// 12345.6 -> "12,346". Integers below 2^53 are grouped here: even the shared
// Intl.NumberFormat costs about 5 µs a call, 0.1 s of the Pareto view's hover texts at
// 10,000 points; the rest (and -0, NaN, infinities) as Intl writes them.
export function grouped(v) {
  const n = Math.round(v);
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return GROUPED.format(n);
  const s = String(n < 0 ? -n : n);
  if (s.length <= 3) return n < 0 ? `-${s}` : s;
  let out = s.slice(0, ((s.length - 1) % 3) + 1);
  for (let i = out.length; i < s.length; i += 3) out += `,${s.slice(i, i + 3)}`;
  return n < 0 ? `-${out}` : out;
}

export function isNum(v) {
  return typeof v === 'number' && Number.isFinite(v);
}

// A metric value: 4 significant digits, no exponent for ordinary magnitudes.
export function fmtValue(v, digits = 4) {
  if (!isNum(v)) return DASH;
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e6 || a < 1e-4) return v.toExponential(digits - 1).replace('e+', 'e');
  if (a >= 1000) return grouped(v);
  return String(Number(v.toPrecision(digits)));
}

export function fmtInt(v) {
  if (!isNum(v)) return DASH;
  return grouped(v);
}

// 1536 -> "1.5 KiB"; 0 and missing -> the dash (a worker that has not trained yet).
export function fmtBytes(v) {
  if (!isNum(v) || v <= 0) return DASH;
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
  return `${i === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

export function fmtPercent(part, whole) {
  if (!isNum(part) || !isNum(whole) || whole <= 0) return '0%';
  const p = (100 * part) / whole;
  return `${p >= 10 || p === 0 ? Math.round(p) : p.toFixed(1)}%`;
}

// A duration in seconds: "850 µs", "12.3 ms", "1.25 s", "3 min 05 s", "2 h 10 min".
export function fmtSeconds(s) {
  if (!isNum(s)) return DASH;
  const a = Math.abs(s);
  if (a < 1e-3) return `${Math.round(s * 1e6)} \u00b5s`;
  if (a < 1) return `${Number((s * 1e3).toPrecision(3))} ms`;
  if (a < 60) return `${Number(s.toPrecision(3))} s`;
  if (a < 3600) {
    const m = Math.floor(a / 60);
    return `${m} min ${String(Math.floor(a - m * 60)).padStart(2, '0')} s`;
  }
  const h = Math.floor(a / 3600);
  return `${h} h ${String(Math.floor((a - h * 3600) / 60)).padStart(2, '0')} min`;
}

// An age in seconds, short: "0.8 s", "12 s", "4 min", "3 h", "2 d".
export function fmtAge(s) {
  if (!isNum(s)) return DASH;
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

function pad(n) {
  return String(n).padStart(2, '0');
}

// An ISO time as local "2026-11-30 03:10:05".
export function fmtTime(iso) {
  if (!iso) return DASH;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// "5 min ago" relative to now (ms since epoch).
export function fmtAgo(iso, now = Date.now()) {
  if (!iso) return DASH;
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return String(iso);
  const s = Math.max(0, (now - t) / 1000);
  if (s < 5) return 'just now';
  return `${fmtAge(s)} ago`;
}

// A parameter value for tables and tooltips.
export function fmtParam(v, digits = 4) {
  if (v === null || v === undefined) return DASH;
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : fmtValue(v, digits);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

// One dataset's board of GET /studies/{id}/leaderboard in words, as `layerlab status`
// says it: "3 trials share the best value 0.975", "best 0.975 (trial #17)", "no trial
// with a value yet".
export function bestNote(board) {
  if (!board || !isNum(board.best_value) || !board.best_count) return 'no trial with a value yet';
  if (board.best_count > 1) return `${board.best_count} trials share the best value ${fmtValue(board.best_value)}`;
  const first = (board.trials || [])[0];
  return `best ${fmtValue(board.best_value)}${first ? ` (trial #${first.number})` : ''}`;
}

// STUDY_SUMMARY's `best` (an entry per dataset) in words for the studies list: "0.975
// (trial #17)" for a study of one dataset, "iris 0.973 (#12) \u00b7 wine 1 (18 tied)" for
// several, never one best across them; null while no dataset has a value.
export function bestPerDataset(best) {
  const entries = Array.isArray(best) ? best : [];
  const ranked = entries.filter((b) => isNum(b.value) && b.count > 0);
  if (ranked.length === 0) return null;
  const which = (b, prefix) => (b.count > 1 ? `${b.count} tied` : `${prefix}${b.number}`);
  if (entries.length === 1) return `${fmtValue(ranked[0].value)} (${which(ranked[0], 'trial #')})`;
  return ranked.map((b) => `${b.dataset} ${fmtValue(b.value)} (${which(b, '#')})`).join(' \u00b7 ');
}
