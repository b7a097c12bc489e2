// Fetch wrapper for the layerlab REST API (/api/v1). Every call resolves to parsed JSON or
// rejects with an ApiError whose message is ready to show: the server's
// {"error": {"code", "message"}} body when there is one, otherwise the HTTP status or the
// network failure.

export const API = '/api/v1';

export class ApiError extends Error {
  constructor(code, message, status = 0, path = '') {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = status;
    this.path = path;
  }
  // "not_found: unknown study 7 (GET /api/v1/studies/7)"
  describe() {
    const where = this.path ? ` (${this.path})` : '';
    return `${this.code}: ${this.message}${where}`;
  }
}

// Builds "?a=1&b=x" from an object, skipping undefined/null/'' values.
export function query(params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    q.set(k, Array.isArray(v) ? v.join(',') : String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

async function request(method, path, { body, headers, signal } = {}) {
  const url = path.startsWith('/') ? path : `${API}/${path}`;
  let res;
  try {
    res = await fetch(url, {
      method, body, signal, cache: 'no-store',
      headers: { Accept: 'application/json', ...(headers || {}) },
    });
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    throw new ApiError('unavailable', 'cannot reach the layerlab server', 0, `${method} ${url}`);
  }
  const text = await res.text();
  let json = null;
  if (text) {
    try { json = JSON.parse(text); } catch { json = null; }
  }
  if (!res.ok) {
    const e = json && json.error;
    if (e && typeof e === 'object') {
      throw new ApiError(e.code || 'error', e.message || res.statusText, res.status, `${method} ${url}`);
    }
    throw new ApiError(`http_${res.status}`, res.statusText || 'request failed', res.status, `${method} ${url}`);
  }
  if (json === null && text) {
    throw new ApiError('internal', 'the server sent a body that is not JSON', res.status, `${method} ${url}`);
  }
  return json;
}

const TOKEN_KEY = 'layerlab-token';

export const get = (path, opts) => request('GET', path, opts);

// POSTs need `Authorization: Bearer TOKEN` when the server has a token: on a 401 the user
// is asked for it once (kept for this browser session) and the request is retried.
export async function post(path, body, opts = {}) {
  const send = () => {
    const token = sessionStorage.getItem(TOKEN_KEY);
    const headers = { ...(opts.headers || {}) };
    if (token) headers.Authorization = `Bearer ${token}`;
    return request('POST', path, { ...opts, body, headers });
  };
  try {
    return await send();
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 401) throw err;
    const token = window.prompt('This server needs an API token for changes. Token:');
    if (!token) throw err;
    sessionStorage.setItem(TOKEN_KEY, token.trim());
    return send();
  }
}

// The endpoints the dashboard reads, so that pages and tests agree on the URLs.
export const endpoints = {
  studies: () => `${API}/studies`,
  study: (id) => `${API}/studies/${encodeURIComponent(id)}`,
  trials: (id, params) => `${API}/studies/${encodeURIComponent(id)}/trials${query(params)}`,
  summary: (id, params) => `${API}/studies/${encodeURIComponent(id)}/summary${query(params)}`,
  columns: (id, params) => `${API}/studies/${encodeURIComponent(id)}/columns${query(params)}`,
  leaderboard: (id, params) => `${API}/studies/${encodeURIComponent(id)}/leaderboard${query(params)}`,
  pareto: (id, params) => `${API}/studies/${encodeURIComponent(id)}/pareto${query(params)}`,
  trial: (id, params) => `${API}/trials/${encodeURIComponent(id)}${query(params)}`,
  trialModel: (id) => `${API}/trials/${encodeURIComponent(id)}/model`,
  workers: (params) => `${API}/workers${query(params)}`,
  throughput: (params) => `${API}/throughput${query(params)}`,
  queue: () => `${API}/queue`,
  events: (params) => `${API}/events${query(params)}`,
};
