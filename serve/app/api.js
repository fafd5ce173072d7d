/**
 * The HTTP API of `loopwright serve` (serve/API.md), as the page calls it: JSON in and out,
 * same-origin cookies (the token cookie, when the server needs one). Every state-changing request
 * is a POST with `Content-Type: application/json`, which the server's CSRF rule requires (a form
 * on another site cannot send it without a preflight the server refuses).
 */

/** A refusal or failure the server answered with `{error: {type, message, field?}}`. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} type
   * @param {string} message
   * @param {string} [field]
   */
  constructor(status, type, message, field) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.type = type;
    this.field = field;
  }
}

/**
 * @param {string} path under /api, e.g. `/sessions`
 * @param {RequestInit} [init]
 * @returns {Promise<any>}
 */
async function request(path, init = {}) {
  let res;
  try {
    res = await fetch(`/api${path}`, { credentials: 'same-origin', ...init, headers: { accept: 'application/json', ...init.headers } });
  } catch (err) {
    throw new ApiError(0, 'Unreachable', `the server did not answer (${err instanceof Error ? err.message : String(err)})`);
  }
  const text = await res.text();
  let body;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    const error = body && typeof body === 'object' && body.error ? body.error : {};
    throw new ApiError(res.status, error.type ?? `HTTP ${res.status}`, error.message ?? (text.slice(0, 200) || res.statusText), error.field);
  }
  return body;
}

/**
 * GET a path with query parameters (undefined ones left out).
 * @param {string} path
 * @param {Record<string, string | number | undefined>} [query]
 */
export function get(path, query = {}) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(key, String(value));
  const qs = params.toString();
  return request(qs ? `${path}?${qs}` : path);
}

/**
 * POST a JSON body.
 * @param {string} path
 * @param {unknown} [body]
 */
export function post(path, body = {}) {
  return request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/**
 * Path of one session's resource.
 * @param {string} id
 * @param {string} [rest] e.g. `messages`
 */
export function sessionPath(id, rest) {
  return `/sessions/${encodeURIComponent(id)}${rest ? `/${rest}` : ''}`;
}
