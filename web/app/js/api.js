// The management API (contract section 6 and issue 4) over fetch, with the session cookie.

export const BASE = '/api/v1';

// A problem+json answer (RFC 9457): status, code, detail and, for 422, field errors.
export class ApiError extends Error {
  constructor(status, problem) {
    const p = problem && typeof problem === 'object' ? problem : {};
    super(p.detail || p.title || `The server answered HTTP ${status}.`);
    this.status = status;
    this.code = p.code || `http_${status}`;
    this.title = p.title || `HTTP ${status}`;
    this.detail = p.detail || '';
    this.errors = Array.isArray(p.errors) ? p.errors : [];
  }
}

async function readBody(response) {
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

// Sends a request below /api/v1 and returns the parsed JSON (null for an empty body).
// Throws ApiError for any status other than 2xx, and for a network failure (status 0).
export async function api(method, path, { body, headers } = {}) {
  // X-Toolgate-CSRF: the edge refuses cookie-signed state changes without it (cross-site forgery).
  const init = { method, credentials: 'same-origin', headers: { Accept: 'application/json', 'X-Toolgate-CSRF': '1', ...headers } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(BASE + path, init);
  } catch {
    throw new ApiError(0, { title: 'Network error', detail: 'Toolgate could not be reached; check your connection and retry.' });
  }
  const data = await readBody(response);
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

// Query string from an object, leaving out empty values.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}

// Every page of a list ({items, next_cursor}), up to `max` items.
export async function listAll(path, max = 1000) {
  const items = [];
  let cursor = '';
  const sep = path.includes('?') ? '&' : '?';
  do {
    const page = await api('GET', `${path}${sep}limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    items.push(...(page.items || []));
    cursor = page.next_cursor || '';
  } while (cursor && items.length < max);
  return items;
}

// "Try it": invokes with the browser session instead of an API key. The custom header is what
// the edge requires before it accepts a session here (a cross-site form cannot send it).
// Resolves to {httpStatus, data, headers} whatever the status; network failures throw ApiError.
export async function invokeWithSession(functionId, version, event, envKeys) {
  const headers = { 'Content-Type': 'application/json', 'X-Toolgate-CSRF': '1' };
  if (envKeys) headers['X-Env-Keys'] = envKeys;
  const path = version
    ? `/functions/${encodeURIComponent(functionId)}/${encodeURIComponent(version)}/invoke`
    : `/functions/${encodeURIComponent(functionId)}/invoke`;
  let response;
  try {
    response = await fetch(BASE + path, { method: 'POST', credentials: 'same-origin', headers, body: JSON.stringify({ event }) });
  } catch {
    throw new ApiError(0, { title: 'Network error', detail: 'Toolgate could not be reached; check your connection and retry.' });
  }
  return { httpStatus: response.status, data: await readBody(response), headers: response.headers };
}

// A random Idempotency-Key (crypto.getRandomValues works on plain http too).
export function idempotencyKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
