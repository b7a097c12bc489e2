// The error banner under the top bar. Messages are keyed by what failed (e.g. 'study',
// 'events'), so a repeated failure replaces its message and a later success clears it.

import { h, fill } from './dom.js';

const messages = new Map();
let el = null;

function render() {
  if (!el) el = document.getElementById('banner');
  if (!el) return;
  el.hidden = messages.size === 0;
  fill(el, [...messages.entries()].map(([key, { text, kind }]) => h('div', { class: `banner-msg ${kind}`, dataset: { key } },
    h('span', { class: 'banner-icon', 'aria-hidden': 'true' }, kind === 'info' ? 'i' : '!'),
    h('span', { class: 'banner-text' }, text),
    h('button', {
      class: 'banner-close', type: 'button', title: 'dismiss', 'aria-label': 'dismiss',
      onclick: () => clearError(key),
    }, '\u00d7'))));
}

// Shows an error; err is an ApiError, an Error or a string.
export function showError(key, err) {
  if (err && err.code === 'unavailable' && err.status === 0) {
    key = 'network'; // one message however many requests failed
    err = 'cannot reach the layerlab server; retrying';
  }
  let text;
  if (err && typeof err.describe === 'function') text = err.describe();
  else if (err && err.message) text = err.message;
  else text = String(err);
  if (messages.get(key)?.text === text) return;
  messages.set(key, { text, kind: 'error' });
  render();
}

// Shows a message that is not an error (e.g. the outcome of an action).
export function showNotice(key, text) {
  messages.set(key, { text: String(text), kind: 'info' });
  render();
  setTimeout(() => {
    if (messages.get(key)?.kind === 'info') {
      messages.delete(key);
      render();
    }
  }, 10000);
}

// Clears key's message; any success also means the server is reachable again.
export function clearError(key) {
  const a = messages.delete(key);
  const b = messages.delete('network');
  if (a || b) render();
}

export function clearAllErrors() {
  if (messages.size) {
    messages.clear();
    render();
  }
}
