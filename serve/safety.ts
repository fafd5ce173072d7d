/**
 * What keeps `loopwright serve` safe to leave running, checked on every request before its body is
 * read:
 *
 * - **Host.** On a loopback address only the names of this machine are answered (`127.0.0.1`,
 *   `localhost`, `[::1]` with the port), so a web page whose name was pointed at 127.0.0.1 (DNS
 *   rebinding) cannot talk to the API from the browser.
 * - **Token.** With a token, every request needs `Authorization: Bearer <token>` or the cookie set
 *   when a page is opened with `?token=<token>` (HttpOnly, SameSite=Strict; the page is then
 *   reloaded without the token in its address).
 * - **Cross-site requests.** A request that changes something (any method but GET and HEAD) needs
 *   `Content-Type: application/json`, which a form or a plain cross-site fetch cannot send without
 *   the browser asking first (and we never say yes), and, when it carries an `Origin`, this
 *   server's own; `Sec-Fetch-Site: cross-site` is refused for the API.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorResponse, ApiError } from './api-error';

/** The cookie that carries the token for the page. */
export const TOKEN_COOKIE = 'loopwright_token';

/** Options of {@link installSafety}. */
export interface SafetyOptions {
  /** Required of every request when set. */
  token?: string;
  /** `Host` header values answered (lower case), asked per request; undefined: any (a token then guards the server). */
  hosts?: () => readonly string[] | undefined;
}

/** The Host values a server bound to `host:port` answers when it is a loopback address; undefined for any other. */
export function loopbackHosts(host: string, port: number): string[] | undefined {
  const loopback = host === '127.0.0.1' || host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
  if (!loopback) return undefined;
  const names = new Set(['127.0.0.1', 'localhost', '[::1]', host.includes(':') && !host.startsWith('[') ? `[${host}]` : host]);
  return [...names].map((name) => `${name}:${port}`);
}

/** Install the checks as the first hook of every request. */
export function installSafety(app: FastifyInstance, options: SafetyOptions): void {
  const token = options.token;
  const tokenDigest = token !== undefined ? digest(token) : undefined;
  const matches = (given: string | undefined): boolean => given !== undefined && tokenDigest !== undefined && timingSafeEqual(digest(given), tokenDigest);

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const api = request.url === '/api' || request.url.startsWith('/api/') || request.url.startsWith('/api?');
    const host = (request.headers.host ?? '').toLowerCase();
    const hosts = options.hosts?.();
    if (hosts && !hosts.includes(host)) return refuse(reply, new ApiError(403, 'Forbidden', `This server answers requests for ${hosts[0]} only`));
    if (token !== undefined) {
      const url = new URL(request.url, 'http://x');
      const offered = url.searchParams.get('token');
      if (!api && request.method === 'GET' && offered !== null) {
        if (!matches(offered)) return refuse(reply, new ApiError(401, 'Unauthorized', 'Wrong token'));
        url.searchParams.delete('token');
        const rest = url.searchParams.toString();
        // The token goes into an HttpOnly cookie and out of the address bar and the history.
        void reply
          .code(303)
          .header('set-cookie', `${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`)
          .header('location', `${url.pathname}${rest ? `?${rest}` : ''}`)
          .header('cache-control', 'no-store')
          .send();
        return reply;
      }
      if (!matches(bearer(request)) && !matches(cookie(request, TOKEN_COOKIE))) {
        return refuse(reply, new ApiError(401, 'Unauthorized', 'This server needs its token: open the link loopwright serve printed, or send Authorization: Bearer <token>'));
      }
    }
    if (api && request.headers['sec-fetch-site'] === 'cross-site') return refuse(reply, new ApiError(403, 'Forbidden', 'Cross-site requests are refused'));
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/json') return refuse(reply, new ApiError(415, 'UnsupportedMediaType', 'Send the request body as Content-Type: application/json'));
      const origin = request.headers.origin;
      if (origin !== undefined && !sameOrigin(origin, host)) return refuse(reply, new ApiError(403, 'Forbidden', `Requests from ${origin} are refused`));
    }
    return undefined;
  });
}

function refuse(reply: FastifyReply, error: ApiError): FastifyReply {
  const { status, body } = errorResponse(error);
  void reply.code(status).header('cache-control', 'no-store').send(body);
  return reply;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const match = header ? /^Bearer\s+(.+)$/i.exec(header) : null;
  return match ? match[1]!.trim() : undefined;
}

/** A cookie's value (one name; the header parsed as RFC 6265 says, no more). */
export function cookie(request: Pick<FastifyRequest, 'headers'>, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at < 0 || part.slice(0, at).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Whether `origin` is this server as the request's Host names it. */
function sameOrigin(origin: string, host: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host.toLowerCase() === host;
  } catch {
    return false;
  }
}
