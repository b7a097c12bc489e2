// Server-Sent Events from /api/v1/events with reconnection.
//
// EventSource retries by itself after a dropped connection, but gives up for good when the
// server answers with an error status (readyState CLOSED); then we reconnect ourselves with
// a growing delay. Whenever the stream comes back after a break, listeners get a synthetic
// `resync` event, since whatever happened meanwhile was not streamed.

const TYPES = ['trial', 'epoch', 'worker', 'study', 'resync'];

export class EventStream {
  // url: the events URL (e.g. /api/v1/events?study=3).
  // onState(state): 'connecting' | 'live' | 'offline', for a status indicator.
  constructor(url, { onState } = {}) {
    this.url = url;
    this.onState = onState || (() => {});
    this.handlers = new Map();
    this.source = null;
    this.timer = null;
    this.delay = 1000;
    this.hadBreak = false;
    this.closed = false;
    this.state = '';
  }

  on(type, fn) {
    if (!this.handlers.has(type)) this.handlers.set(type, new Set());
    this.handlers.get(type).add(fn);
    return this;
  }

  emit(type, data) {
    for (const fn of this.handlers.get(type) || []) {
      try {
        fn(data);
      } catch (err) {
        console.error(`layerlab: ${type} handler failed`, err);
      }
    }
  }

  setState(s) {
    if (s !== this.state) {
      this.state = s;
      this.onState(s);
    }
  }

  start() {
    if (this.closed || this.source) return this;
    this.setState('connecting');
    let src;
    try {
      src = new EventSource(this.url);
    } catch (err) {
      this.scheduleReconnect();
      return this;
    }
    this.source = src;
    src.onopen = () => {
      this.delay = 1000;
      this.setState('live');
      if (this.hadBreak) {
        this.hadBreak = false;
        this.emit('resync', { reason: 'reconnected' });
      }
    };
    src.onerror = () => {
      this.hadBreak = true;
      if (src.readyState === EventSource.CLOSED) {
        src.close();
        if (this.source === src) this.source = null;
        this.scheduleReconnect();
      } else {
        this.setState('connecting'); // the browser retries by itself
      }
    };
    for (const type of TYPES) {
      src.addEventListener(type, (ev) => {
        let data = {};
        if (ev.data) {
          try {
            data = JSON.parse(ev.data);
          } catch {
            return; // not JSON: ignore the event
          }
        }
        this.emit(type, data);
      });
    }
    return this;
  }

  scheduleReconnect() {
    if (this.closed) return;
    this.setState('offline');
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.start();
    }, this.delay);
    this.delay = Math.min(this.delay * 2, 15000);
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.source) this.source.close();
    this.source = null;
    this.handlers.clear();
  }
}
