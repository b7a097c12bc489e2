// The dashboard's entry point: hash routing between the pages, the live indicator and the
// error banner. Pages are modules exporting mount(root, params, ctx) -> unmount(). The
// studies list, the landing page, is imported with this module (its modules load beside
// dom.js and banner.js, a level earlier); the others when first shown, so that the list
// does not wait for the study page's modules (plots, the parallel coordinates), which a
// static import would fetch level by level first.
//   #/            studies list
//   #/study/ID    one study
//   #/workers     workers and queue

import { h, fill } from './dom.js';
import { clearAllErrors, clearError, showError, showNotice } from './banner.js';
import * as studiesPage from './pages/studies.js';

const studies = () => Promise.resolve(studiesPage);
const study = () => import('./pages/study.js');
const workers = () => import('./pages/workers.js');

const routes = [
  { re: /^#?\/?$/, page: studies, nav: 'studies' },
  { re: /^#\/studies\/?$/, page: studies, nav: 'studies' },
  { re: /^#\/study\/([^/?#]+)\/?$/, page: study, nav: 'studies', params: (m) => ({ id: decodeURIComponent(m[1]) }) },
  { re: /^#\/workers\/?$/, page: workers, nav: 'workers' },
];

const view = document.getElementById('view');
const live = document.getElementById('live');
let unmount = null;
let generation = 0;

const LIVE_TEXT = { live: 'live', connecting: 'connecting…', offline: 'offline', '': '' };

const ctx = {
  setLive(state) {
    live.dataset.state = state || '';
    live.title = state === 'live' ? 'receiving live updates' : state === 'offline'
      ? 'event stream disconnected; retrying' : 'connecting to the event stream';
    fill(live, h('span', { class: 'live-dot' }), LIVE_TEXT[state] ?? state);
  },
  setTitle(text) {
    document.title = text ? `${text} · layerlab` : 'layerlab';
  },
  showError,
  showNotice,
  clearError,
};

function notFound(root) {
  fill(root, h('section', { class: 'card empty-page' },
    h('h1', null, 'Page not found'),
    h('p', null, 'Nothing lives at ', h('code', null, location.hash), '. ',
      h('a', { href: '#/' }, 'Back to the studies'), '.')));
  return () => {};
}

async function route() {
  generation += 1;
  const gen = generation;
  if (unmount) {
    try {
      unmount();
    } catch (err) {
      console.error(err);
    }
    unmount = null;
  }
  clearAllErrors();
  ctx.setLive('');
  ctx.setTitle('');
  const hash = location.hash || '#/';
  let match = null;
  let r = null;
  for (const candidate of routes) {
    match = hash.match(candidate.re);
    if (match) {
      r = candidate;
      break;
    }
  }
  for (const a of document.querySelectorAll('.nav a')) {
    a.classList.toggle('active', !!r && a.dataset.nav === r.nav);
  }
  const root = h('div', { class: 'page' });
  fill(view, root);
  window.scrollTo(0, 0);
  if (!r) {
    unmount = notFound(root);
    return;
  }
  try {
    const page = await r.page();
    if (gen !== generation) return;  // another route came while this page's modules loaded
    const u = page.mount(root, r.params ? r.params(match) : {}, ctx);
    if (gen === generation) unmount = u;
    else if (typeof u === 'function') u();
  } catch (err) {
    console.error(err);
    showError('page', err);
  }
}

window.addEventListener('hashchange', route);
window.addEventListener('unhandledrejection', (ev) => {
  const err = ev.reason;
  if (err && err.name === 'AbortError') return;
  console.error(err);
  showError('unexpected', err);
});
route();
