// #/study/ID : one study. Header with status and progress, the best trial (of each
// dataset), seven views (metric and training time against a parameter, accuracy against
// cost with each dataset's Pareto front, optimisation history, parallel coordinates,
// learning curves, trials table), the leaderboard of each dataset and the details of the
// selected trial.
// Views load when they come into sight (an IntersectionObserver): a reader of the first
// screen should not wait for the views below it. A view once seen stays live. Every view is
// drawn on a canvas 2D, none with Plotly (1.5 MB to parse, 0.2-0.4 s a plot in software
// rendering, about 2 s for its WebGL parcoords): the parallel coordinates by
// components/parallel.js, the other plots (plots.js's figure specs) by components/figure.js
// through charts.js's renderFigure.
// Live: trial events update the counts and (throttled to about once a second) the plots
// and the table page; epoch events extend the curves of selected trials; resync refetches
// everything. The page never reloads.

import { ApiError, endpoints, get, post } from '../api.js';
import { EventStream } from '../events.js';
import { h, fill } from '../dom.js';
import { bestNote, fmtAgo, fmtParam, fmtSeconds, fmtTime, fmtValue } from '../format.js';
import { refresher } from '../throttle.js';
import { markError, markLoading, plotCard, purge, renderFigure } from '../charts.js';
import {
  PALETTE, PARETO_COSTS, countText, curvesFigure, emptyFigure, historyFigure, label, metricFigure, paretoFigure,
  parcoordsFields, timeFigure, yLabel,
} from '../plots.js';
import { parallelModel } from '../parallel.js';
import { ParallelCoords } from '../components/parallel.js';
import { countChips, progressBar } from '../components/progress.js';
import { TrialsTable } from '../components/trials_table.js';
import { leaderboardBoards } from '../components/leaderboard.js';
import { trialDetails } from '../components/trial_details.js';

const FINAL = new Set(['completed', 'early_stopped', 'pruned', 'diverged', 'failed', 'cancelled']);
const MAX_CURVES = 6;
const HISTORY_LIMIT = 5000;
const PARCOORDS_LIMIT = 5000; // lines of the parallel coordinates (an even sample past it)
const LEADERBOARD_LIMIT = 10;
const PARETO_LIMIT = 5000; // points per dataset; the fronts come in full

function select(id, labelText, options, value, onchange) {
  const el = h('select', { id, onchange: () => onchange(el.value) },
    options.map(([v, text]) => h('option', { value: v, selected: v === value }, text)));
  return h('label', { class: 'control' }, h('span', null, labelText), el);
}

// The parameters that vary: those listed with several values or a distribution. A
// parameter fixed in the study file (`units: {value: 64}`) is not worth a column or an axis.
function variedParams(study) {
  const spec = (study.spec && study.spec.parameters) || {};
  const all = study.parameters || [];
  const varied = all.filter((p) => {
    const d = spec[p];
    if (!d || typeof d !== 'object') return true;
    if (Array.isArray(d.values)) return d.values.length > 1;
    return !('value' in d);
  });
  return varied.length ? varied : all;
}

// Parameters searched on a log scale (distribution log_uniform, log_int_uniform...).
function logParams(study) {
  const spec = (study.spec && study.spec.parameters) || {};
  return (study.parameters || []).filter((p) => /log/.test(String((spec[p] || {}).distribution || '')));
}

// Parameters given as a list of values (grid or categorical).
function choiceParams(study) {
  const spec = (study.spec && study.spec.parameters) || {};
  return (study.parameters || []).filter((p) => Array.isArray((spec[p] || {}).values));
}

// Parameters that look numeric in the study spec (values all numbers, or a distribution).
function numericParams(study) {
  const spec = (study.spec && study.spec.parameters) || {};
  return variedParams(study).filter((p) => {
    const d = spec[p];
    if (!d || typeof d !== 'object') return false;
    if (Array.isArray(d.values)) return d.values.every((v) => typeof v === 'number');
    if ('min' in d || 'distribution' in d) return true;
    return typeof d.value === 'number';
  });
}

export function mount(root, { id: studyId }, ctx) {
  ctx.setTitle(`Study ${studyId}`);
  let alive = true;
  let study = null;
  let table = null;
  let leaderboard = null; // GET /leaderboard: each dataset's best trials
  const opts = { x: '', group: '', y: 'value', cost: 'parameter_count' };
  const selected = new Map(); // trial id -> {trial, curve, attempt, color}
  let colorNext = 0;
  let focused = null; // trial id whose details are shown
  let focusedTrial = null;
  let autoSelected = false;

  // ---- skeleton ---------------------------------------------------------------------
  const statusEl = h('span', { id: 'study-status', class: 'badge' }, '…');
  const nameEl = h('h1', { class: 'study-name' }, `Study ${studyId}`);
  const metaEl = h('div', { class: 'study-meta muted' });
  const finishedEl = h('b', { id: 'study-finished', class: 'num' }, '0');
  const totalEl = h('span', { id: 'study-total', class: 'num' }, '0');
  const percentEl = h('span', { class: 'muted' });
  const barEl = h('div', { class: 'progress-holder' });
  const chipsEl = h('div', { class: 'chips-holder' });
  const cancelBtn = h('button', { type: 'button', class: 'btn btn-danger', hidden: true, onclick: cancelStudy }, 'Cancel study');
  const head = h('section', { class: 'card study-head' },
    h('div', { class: 'title-row' },
      h('a', { href: '#/', class: 'back', title: 'all studies' }, '\u2190'),
      nameEl, statusEl, h('span', { class: 'spacer' }), cancelBtn),
    metaEl,
    h('div', { class: 'progress-row' }, barEl,
      h('div', { class: 'progress-label' }, finishedEl, ' / ', totalEl, ' finished ', percentEl)),
    chipsEl);
  const bestEl = h('section', { class: 'card best-card', id: 'best-trial' },
    h('div', { class: 'card-title' }, 'Best trial'), h('div', { class: 'muted' }, 'loading…'));

  const xCtl = h('div', { class: 'controls' });
  const metric = plotCard({ id: 'plot-metric', title: 'Metric', subtitle: 'mean \u00b1 std over the trials at each x (e.g. seeds), per dataset', controls: xCtl, wide: true });
  const time = plotCard({ id: 'plot-time', title: 'Training time', subtitle: 'mean \u00b1 std; dashed: least-squares fit' });
  const history = plotCard({ id: 'plot-history', title: 'Optimisation history', subtitle: 'analysed trials by number; line: best so far' });
  const costCtl = h('div', { class: 'controls' });
  const pareto = plotCard({ id: 'plot-pareto', title: 'Accuracy against cost', subtitle: 'every completed trial (grey) and each dataset\u2019s Pareto front: no other trial is as good for less; hover for the configuration, click to inspect', controls: costCtl, wide: true });
  const parcoords = plotCard({ id: 'plot-parcoords', title: 'Parameters and value', subtitle: 'one line per analysed trial, coloured by its value; drag along an axis to filter', wide: true });
  // A canvas, not a Plotly graph: plot() hands it the model through show() and fail().
  let parallel = null;
  const parallelView = () => {
    parallel ??= new ParallelCoords(parcoords.div, { title: 'Parameters and value' });
    parcoords.card.classList.remove('is-loading');
    return parallel;
  };
  parcoords.show = (model) => parallelView().set(model);
  parcoords.fail = (message) => parallelView().message(message);
  const curveChips = h('div', { class: 'curve-chips', id: 'curve-chips' });
  const curves = plotCard({ id: 'plot-curves', title: 'Learning curves', subtitle: 'dashed: train loss, solid: validation loss', extra: curveChips });
  const detailsEl = h('div', { id: 'trial-details', class: 'details-body' },
    h('div', { class: 'empty-state small' }, 'Click a row of the trials table to see the trial here.'));
  const detailsCard = h('section', { class: 'card details-card' }, h('div', { class: 'card-head' }, h('h2', { class: 'card-title' }, 'Trial details')), detailsEl);
  const lbHolder = h('div', { id: 'leaderboard', class: 'boards' }, h('div', { class: 'loading-text' }, 'loading…'));
  const lbSub = h('div', { class: 'card-sub' }, `ranked within each dataset; top ${LEADERBOARD_LIMIT}`);
  const lbCard = h('section', { class: 'card wide leaderboard-card' },
    h('div', { class: 'card-head' }, h('div', null, h('h2', { class: 'card-title' }, 'Leaderboard per dataset'), lbSub)), lbHolder);
  const tableHolder = h('div', { class: 'table-holder is-loading' }, h('div', { class: 'loading-text' }, 'loading trials…'));
  const tableCard = h('section', { class: 'card wide table-card-study' },
    h('div', { class: 'card-head' }, h('h2', { class: 'card-title' }, 'Trials'),
      h('div', { class: 'card-sub' }, 'click a header to sort, a row to inspect')), tableHolder);

  // ---- views drawn once near sight ------------------------------------------------------
  const seen = new Set(); // plot cards that have come near the viewport
  const views = new Map(); // card -> its loader
  const observer = typeof IntersectionObserver === 'function'
    ? new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (!e.isIntersecting || seen.has(e.target)) continue;
        seen.add(e.target);
        observer.unobserve(e.target);
        if (study && alive) views.get(e.target)?.();
      }
    }, { rootMargin: '0px' })
    : null;
  const inSight = (p) => !observer || seen.has(p.card);

  fill(root,
    h('div', { class: 'study-top' }, head, bestEl),
    h('div', { class: 'grid' }, metric.card, lbCard, time.card, history.card, pareto.card, parcoords.card, curves.card, detailsCard, tableCard));
  for (const p of [metric, time, history, pareto, parcoords, curves]) markLoading(p.div);

  // ---- header and best trial --------------------------------------------------------
  function renderHead() {
    const s = study;
    ctx.setTitle(s.name);
    nameEl.textContent = s.name;
    statusEl.className = `badge st-${s.status}`;
    statusEl.textContent = String(s.status || '').replace(/_/g, ' ');
    fill(metaEl,
      [s.method, s.metric && `${label(s.metric)} (${s.goal})`, (s.datasets || []).join(', '),
        variedParams(s).length ? `searching ${variedParams(s).join(', ')}` : '']
        .filter(Boolean).join(' \u00b7 '),
      ' \u00b7 created ', h('span', { title: fmtTime(s.created_at) }, fmtAgo(s.created_at)));
    finishedEl.textContent = String(s.finished ?? 0);
    totalEl.textContent = String(s.total ?? 0);
    percentEl.textContent = s.total ? `(${Math.round((100 * (s.finished || 0)) / s.total)}%)` : '';
    fill(barEl, progressBar(s.counts, s.total));
    fill(chipsEl, countChips(s.counts));
    cancelBtn.hidden = s.status !== 'running';
    renderBest();
  }

  function renderBest() {
    const boards = leaderboard ? leaderboard.datasets || [] : null;
    if ((study.datasets || []).length > 1) {
      // Several datasets: a best value each (one across them would compare apples and pears).
      fill(bestEl,
        h('div', { class: 'card-title' }, 'Best per dataset ', h('span', { class: 'muted small' }, `(${study.goal})`)),
        boards === null ? h('div', { class: 'muted' }, 'loading…') : h('div', { class: 'best-list', id: 'best-per-dataset' },
          boards.map((b) => h('div', { class: 'best-row', dataset: { dataset: b.dataset } },
            h('span', { class: 'best-dataset' }, b.dataset),
            h('b', { class: 'num best-row-value' }, fmtValue(b.best_value)),
            h('span', { class: 'muted small' }, b.best_count > 1 ? `${b.best_count} trials share it`
              : b.trials && b.trials[0] ? `trial #${b.trials[0].number}` : 'no value yet'),
            b.trials && b.trials[0] ? h('button', { type: 'button', class: 'btn btn-small', onclick: () => selectTrial(b.trials[0], true) }, 'show') : null))));
      return;
    }
    const b = (study.best || [])[0]?.trial;
    if (!b) {
      fill(bestEl, h('div', { class: 'card-title' }, 'Best trial'),
        h('div', { class: 'empty-state small' }, 'no trial has a value yet'));
      return;
    }
    const params = b.params || {};
    fill(bestEl,
      h('div', { class: 'card-title' }, 'Best trial ', h('span', { class: 'muted small' }, `(${study.goal})`)),
      h('div', { class: 'best-value num', id: 'best-value' }, fmtValue(b.value)),
      h('div', { class: 'muted small' }, `${label(study.metric)} \u00b7 trial #${b.number}${b.dataset ? ` \u00b7 ${b.dataset}` : ''} \u00b7 ${fmtSeconds(b.seconds)}`),
      boards && boards[0] && boards[0].best_count > 1 ? h('div', { class: 'muted small tie-note' }, bestNote(boards[0])) : null,
      h('dl', { class: 'kv compact' }, variedParams(study).filter((p) => p in params)
        .map((p) => [h('dt', null, label(p)), h('dd', null, fmtParam(params[p]))])),
      h('button', { type: 'button', class: 'btn btn-small', onclick: () => selectTrial(b, true) }, 'show details and curve'));
  }

  async function cancelStudy() {
    if (!window.confirm(`Cancel the queued trials of ${study ? study.name : `study ${studyId}`}? Running trials finish.`)) return;
    try {
      const res = await post(`${endpoints.study(studyId)}/cancel`, '');
      ctx.clearError('cancel');
      ctx.showNotice('cancel', `cancelled ${res.cancelled} queued trials; running ones finish`);
      refresh.now();
    } catch (err) {
      ctx.showError('cancel', err);
    }
  }

  // ---- plot controls ----------------------------------------------------------------
  function setupControls() {
    const params = variedParams(study);
    const numeric = numericParams(study);
    if (!opts.x) {
      if (params.includes('hidden_layers')) opts.x = 'hidden_layers';
      else opts.x = numeric[0] || params[0] || 'hidden_layers';
      opts.group = params.includes('activation') && opts.x !== 'activation' ? 'activation' : '';
    }
    const xs = params.length ? params : [opts.x];
    const ys = [['value', label(study.metric || 'value')], ['val_loss', 'val loss'], ['train_loss', 'train loss'], ['epochs_run', 'epochs run']]
      .filter(([v], i) => i === 0 || v !== study.metric);
    fill(xCtl,
      select('ctl-y', 'y', ys, opts.y, (v) => { opts.y = v; loadMetric(); }),
      select('ctl-x', 'x', xs.map((p) => [p, label(p)]), opts.x, (v) => {
        opts.x = v;
        if (opts.group === v) opts.group = '';
        setupControls();
        loadMetric();
        loadTime();
      }),
      select('ctl-group', 'group', [['', 'none'], ...params.filter((p) => p !== opts.x).map((p) => [p, label(p)])], opts.group,
        (v) => { opts.group = v; loadMetric(); }));
    fill(costCtl, select('ctl-cost', 'against', Object.entries(PARETO_COSTS), opts.cost,
      (v) => { opts.cost = v; loadPareto(); }));
  }

  // ---- loaders ----------------------------------------------------------------------
  async function loadStudy() {
    try {
      study = await get(endpoints.study(studyId));
      if (!alive) return false;
      ctx.clearError('study');
      renderHead();
      return true;
    } catch (err) {
      if (!alive) return false;
      if (err instanceof ApiError && err.status === 404 && !study) {
        fill(root, h('section', { class: 'card empty-page' },
          h('h1', null, 'Study not found'),
          h('p', null, `${err.message}. `, h('a', { href: '#/' }, 'Back to the studies'), '.')));
        alive = false;
        return false;
      }
      ctx.showError('study', err);
      return false;
    }
  }

  // Fetches url and draws build(json) into p's graph div. Skips the drawing when neither
  // the response nor the build inputs changed; with minInterval (ms), draws at most that
  // often (the latest data is drawn when the interval has passed).
  async function plot(p, errKey, url, build, { minInterval = 0, inputs = '' } = {}) {
    p.div.dataset.src = url;
    let json;
    try {
      json = await get(url);
    } catch (err) {
      if (!alive) return;
      ctx.showError(errKey, err);
      if (p.div.dataset.state !== 'ready') {
        if (p.fail) p.fail(`could not load: ${err.message}`);
        else await renderFigure(p.div, emptyFigure(`could not load: ${err.message}`));
        markError(p.div);
      }
      return;
    }
    if (!alive || p.div.dataset.src !== url) return;
    ctx.clearError(errKey);
    const key = `${url}\n${inputs}\n${JSON.stringify(json)}`;
    if (key === p.key) return;
    const draw = async () => {
      p.timer = null;
      if (!alive) return;
      p.key = key;
      p.last = performance.now();
      if (p.countEl) p.countEl.textContent = countText(json);
      if (p.show) p.show(build(json));
      else await renderFigure(p.div, build(json));
    };
    clearTimeout(p.timer);
    const wait = minInterval ? (p.last || -Infinity) + minInterval - performance.now() : 0;
    if (wait > 0) {
      p.timer = setTimeout(draw, wait);
      return;
    }
    await draw();
  }

  function loadMetric() {
    const ylab = yLabel(opts.y, study.metric);
    metric.titleEl.textContent = `${ylab.charAt(0).toUpperCase()}${ylab.slice(1)} vs ${label(opts.x)}`;
    metric.subEl.textContent = `mean \u00b1 std over the trials at each ${label(opts.x)} (e.g. seeds), per dataset` +
      (opts.group ? `; colour: ${label(opts.group)}` : '');
    const url = endpoints.summary(studyId, { x: opts.x, y: opts.y, group: opts.group });
    return plot(metric, 'plot-metric', url, (s) => metricFigure(s, { metric: study.metric, goal: study.goal }),
      { inputs: `${study.metric}` });
  }

  function loadTime() {
    time.titleEl.textContent = `Training time vs ${label(opts.x)}`;
    const url = endpoints.summary(studyId, { x: opts.x, y: 'seconds' });
    return plot(time, 'plot-time', url, (s) => timeFigure(s));
  }

  function loadHistory() {
    history.subEl.textContent = `analysed trials by number; line: best so far (${study.goal || 'maximize'})`;
    const url = endpoints.columns(studyId, { fields: 'number,value,dataset', limit: HISTORY_LIMIT });
    return plot(history, 'plot-history', url, (c) => historyFigure(c, { goal: study.goal, metric: study.metric }),
      { inputs: `${study.goal} ${study.metric}` });
  }

  // Accuracy against cost: the fronts come from the server (analysis/pareto.h), per dataset.
  async function loadPareto() {
    const url = endpoints.pareto(studyId, { limit: PARETO_LIMIT });
    await plot(pareto, 'plot-pareto', url,
      (j) => paretoFigure(j, { cost: opts.cost, parameters: variedParams(study) }), { inputs: opts.cost });
    if (alive && !pareto.clicks) {
      // a click on a point (components/figure.js's plotclick) shows that trial
      pareto.clicks = true;
      pareto.div.dataset.clickable = '1';
      pareto.div.addEventListener('plotclick', (ev) => {
        const { customdata, trace } = ev.detail;
        if (!customdata) return;
        const [id, number] = customdata;
        selectTrial({ id, number, dataset: trace.meta && trace.meta.dataset }, true);
      });
    }
  }

  async function loadLeaderboard() {
    const url = endpoints.leaderboard(studyId, { limit: LEADERBOARD_LIMIT });
    lbHolder.dataset.src = url;
    try {
      const lb = await get(url);
      if (!alive) return;
      ctx.clearError('leaderboard');
      const key = JSON.stringify(lb);
      if (key === lbHolder.dataset.key) return;
      leaderboard = lb;
      lbHolder.dataset.key = key;
      lbSub.textContent = `ranked within each dataset by ${label(lb.metric)} (${lb.goal}); top ${lb.limit}`;
      fill(lbHolder, leaderboardBoards(lb, {
        parameters: variedParams(study), metric: lb.metric, onSelect: (t) => selectTrial(t, true),
      }));
      lbHolder.dataset.state = 'ready';
      renderBest();
    } catch (err) {
      if (alive) ctx.showError('leaderboard', err);
    }
  }

  // Parallel coordinates on a canvas: the same axes as the report's Plotly parcoords
  // (parcoordsDimensions), redrawn with live data at most every 2 s.
  function loadParcoords() {
    const fields = parcoordsFields(variedParams(study), true).filter((f) => f !== 'number');
    const url = endpoints.columns(studyId, { fields: fields.join(','), limit: PARCOORDS_LIMIT });
    return plot(parcoords, 'plot-parcoords', url,
      (c) => parallelModel(c, variedParams(study), { goal: study.goal, metric: study.metric, logParams: logParams(study), choiceParams: choiceParams(study) }),
      { minInterval: 2000, inputs: `${study.goal} ${study.metric}` });
  }

  // ---- selection, details and curves --------------------------------------------------
  let curvesFrame = 0;
  function renderCurves() {
    curvesFrame = 0;
    if (!alive) return;
    table?.setSelection(selected.keys(), focused);
    if (!inSight(curves)) return; // drawn when it comes near sight
    const list = [...selected.values()];
    renderFigure(curves.div, curvesFigure(list.map((e) => ({ trial: e.trial, curve: e.curve, color: e.color }))));
    fill(curveChips, list.map((e) => h('span', { class: 'curve-chip', style: { borderColor: e.color } },
      h('i', { style: { background: e.color } }),
      h('button', { type: 'button', class: 'link', title: 'show details', onclick: () => selectTrial(e.trial, false) },
        `#${e.trial.number}${e.trial.dataset ? ` ${e.trial.dataset}` : ''}`),
      h('button', { type: 'button', class: 'chip-x', title: 'remove', 'aria-label': 'remove', onclick: () => unselect(e.trial.id) }, '\u00d7'))),
    list.length > 1 ? h('button', { type: 'button', class: 'link small', onclick: clearSelection }, 'clear all') : null);
  }
  function scheduleCurves() {
    if (!curvesFrame) curvesFrame = requestAnimationFrame(renderCurves);
  }

  function unselect(id) {
    selected.delete(id);
    scheduleCurves();
  }
  function clearSelection() {
    selected.clear();
    scheduleCurves();
  }

  function curveAttempt(detail) {
    let a = 0;
    for (const p of detail.curve || []) a = Math.max(a, p.attempt || 0);
    return a || detail.attempts?.length || 1;
  }

  function renderDetails() {
    if (!focusedTrial) return;
    fill(detailsEl, trialDetails(focusedTrial, { parameters: variedParams(study), metric: study.metric }));
  }

  async function fetchTrial(id) {
    const detail = await get(endpoints.trial(id));
    if (!alive) return null;
    const e = selected.get(id);
    if (e) {
      e.trial = detail;
      e.curve = (detail.curve || []).slice();
      e.attempt = curveAttempt(detail);
    }
    if (focused === id) {
      focusedTrial = detail;
      renderDetails();
    }
    return detail;
  }

  // Selects a trial: shows its details and adds its learning curve.
  async function selectTrial(t, scroll) {
    focused = t.id;
    if (!selected.has(t.id)) {
      if (selected.size >= MAX_CURVES) selected.delete(selected.keys().next().value);
      selected.set(t.id, { trial: t, curve: [], attempt: 0, color: PALETTE[colorNext++ % PALETTE.length] });
    }
    table?.setSelection(selected.keys(), focused);
    fill(detailsEl, h('div', { class: 'loading-text' }, `loading trial #${t.number}…`));
    try {
      await fetchTrial(t.id);
      ctx.clearError('trial');
    } catch (err) {
      ctx.showError('trial', err);
    }
    scheduleCurves();
    if (scroll) detailsCard.scrollIntoView({ behavior: 'smooth', block: 'nearest' });
  }

  function onEpoch(ev) {
    const e = selected.get(ev.trial_id);
    if (!e) return;
    const attempt = ev.attempt || 1;
    if (attempt < e.attempt) return;
    if (attempt > e.attempt) {
      e.attempt = attempt;
      e.curve = [];
    }
    const i = e.curve.findIndex((p) => p.epoch === ev.epoch);
    const point = { attempt, epoch: ev.epoch, train_loss: ev.train_loss, val_loss: ev.val_loss, val_metric: ev.val_metric, seconds: ev.seconds };
    if (i >= 0) e.curve[i] = point;
    else {
      e.curve.push(point);
      e.curve.sort((a, b) => a.epoch - b.epoch);
    }
    scheduleCurves();
  }

  function onTrial(t) {
    if (t.study_id !== undefined && String(t.study_id) !== String(studyId)) return;
    const e = selected.get(t.id);
    if (e && e.trial.status !== t.status) {
      e.trial = { ...e.trial, ...t };
      // a selected trial finished: fetch its final curve and details
      if (FINAL.has(t.status)) fetchTrial(t.id).then(scheduleCurves).catch(() => {});
    }
    refresh.request(); // counts, plots and the table page, at most about once a second
  }

  // ---- refresh ------------------------------------------------------------------------
  let staleWhileHidden = false;
  let studyFresh = false; // loaded just now: the first refresh need not fetch it again
  async function refreshAll() {
    if (!alive) return;
    if (document.hidden && study) {
      staleWhileHidden = true; // nobody is looking: catch up when the tab is shown again
      return;
    }
    const ok = studyFresh || await loadStudy();
    studyFresh = false;
    if (!ok || !alive) return;
    const jobs = [table.load(), loadLeaderboard()];
    for (const [card, load] of views) if (card !== curves.card && seen.has(card)) jobs.push(load());
    if (!observer) jobs.push(loadMetric(), loadTime(), loadHistory(), loadPareto(), loadParcoords());
    if (focused !== null && focusedTrial && !FINAL.has(focusedTrial.status)) {
      jobs.push(fetchTrial(focused).then(scheduleCurves).catch(() => {}));
    }
    await Promise.all(jobs);
  }

  const refresh = refresher(refreshAll, 1000);
  const onVisible = () => {
    if (!document.hidden && staleWhileHidden) {
      staleWhileHidden = false;
      refresh.request();
    }
  };
  document.addEventListener('visibilitychange', onVisible);
  let events = null;

  async function start() {
    const ok = await loadStudy();
    if (!ok || !alive) {
      for (const p of [metric, time, history, pareto, parcoords, curves]) {
        if (alive) markError(p.div);
      }
      return;
    }
    setupControls();
    table = new TrialsTable({
      studyId,
      parameters: variedParams(study),
      datasets: study.datasets || [],
      goal: study.goal,
      metric: study.metric,
      onSelect: (t) => selectTrial(t, false),
      onError: (err) => (err ? ctx.showError('trials', err) : ctx.clearError('trials')),
    });
    tableHolder.classList.remove('is-loading');
    fill(tableHolder, table.el);
    table.table.dataset.src = endpoints.trials(studyId, {});
    if (inSight(curves)) renderFigure(curves.div, curvesFigure([]));
    // subscribe first, so that nothing between the first load and the stream is missed
    events = new EventStream(endpoints.events({ study: studyId }), { onState: ctx.setLive });
    events
      .on('trial', onTrial)
      .on('epoch', onEpoch)
      .on('study', (s) => { if (String(s.id) === String(studyId)) refresh.request(); })
      .on('resync', () => {
        refresh.request();
        for (const id of selected.keys()) fetchTrial(id).then(scheduleCurves).catch(() => {});
      })
      .start();
    // each dataset's best trial's curve loads alongside the plots
    const bests = (study.best || []).map((b) => b.trial).filter(Boolean);
    if (!autoSelected && bests.length > 0 && selected.size === 0) {
      autoSelected = true;
      for (const t of bests) selectTrial(t, false);
    }
    studyFresh = true;
    for (const [p, load] of [[metric, loadMetric], [time, loadTime], [history, loadHistory], [pareto, loadPareto],
      [parcoords, loadParcoords], [curves, scheduleCurves]]) {
      views.set(p.card, load);
      observer?.observe(p.card);
    }
    await refresh.now();
  }
  start();

  return () => {
    alive = false;
    observer?.disconnect();
    document.removeEventListener('visibilitychange', onVisible);
    for (const p of [metric, time, history, pareto, parcoords]) clearTimeout(p.timer);
    refresh.stop();
    if (events) events.close();
    if (curvesFrame) cancelAnimationFrame(curvesFrame);
    for (const p of [metric, time, history, pareto, curves]) purge(p.div);
    parallel?.destroy();
  };
}
