// A refresher that runs an async function at most once per interval, never two at a time,
// and always once more after the last request (so the final state is always shown).

export function refresher(fn, interval = 1000) {
  let last = 0;
  let timer = null;
  let running = false;
  let pending = false;
  let stopped = false;

  async function run() {
    timer = null;
    if (stopped) return;
    if (running) {
      pending = true;
      return;
    }
    running = true;
    pending = false;
    last = performance.now();
    try {
      await fn();
    } catch (err) {
      console.error('layerlab: refresh failed', err);
    } finally {
      running = false;
      if (pending && !stopped) request();
    }
  }

  function request() {
    if (stopped) return;
    if (running) {
      pending = true;
      return;
    }
    if (timer) return;
    const wait = Math.max(0, last + interval - performance.now());
    timer = setTimeout(run, wait);
  }

  return {
    request,
    // Runs now (or right after the current run).
    now() {
      clearTimeout(timer);
      timer = null;
      if (running) pending = true;
      else return run();
      return undefined;
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
