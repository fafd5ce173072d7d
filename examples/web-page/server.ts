/**
 * The web page's own server: it serves public/ and forwards /api/ to `loopwright serve`, so the
 * page and the API share one origin (`loopwright serve` refuses requests that change something from
 * any other origin) and the token of a serve that has one stays on this server, never in the page.
 *   LOOPWRIGHT_SERVE_URL  where `loopwright serve` listens (default http://127.0.0.1:8787)
 *   LOOPWRIGHT_SERVE_TOKEN  its token, when it has one
 *   PORT  this server's port on 127.0.0.1 (default 8790; 0 picks a free one)
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

const upstream = new URL(process.env.LOOPWRIGHT_SERVE_URL ?? 'http://127.0.0.1:8787');
const token = process.env.LOOPWRIGHT_SERVE_TOKEN;
const files: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
};

const server = http.createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://localhost');
  if (url.pathname.startsWith('/api/')) return forward(request, response);
  const entry = files[url.pathname];
  if (!entry || request.method !== 'GET') return void response.writeHead(404).end();
  response.writeHead(200, { 'content-type': entry.type, 'cache-control': 'no-store' });
  fs.createReadStream(path.join(__dirname, 'public', entry.file)).pipe(response);
});

/** Forward an API request and stream its answer back (the event stream included) until either side hangs up. */
function forward(request: http.IncomingMessage, response: http.ServerResponse): void {
  // This server guards its own origin as `loopwright serve` guards its: a request that changes something must come from this page.
  const origin = request.headers.origin;
  if (request.method !== 'GET' && origin !== undefined && origin !== `http://${request.headers.host}`) return void response.writeHead(403).end();
  const headers: http.OutgoingHttpHeaders = { host: upstream.host };
  for (const name of ['accept', 'content-type', 'content-length', 'last-event-id']) if (request.headers[name] !== undefined) headers[name] = request.headers[name];
  if (token) headers.authorization = `Bearer ${token}`;
  const outgoing = http.request({ hostname: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers }, (answer) => {
    response.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(response);
  });
  outgoing.on('error', (error) => {
    if (!response.headersSent) response.writeHead(502, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: { type: 'BadGateway', message: `loopwright serve at ${upstream.origin}: ${error.message}` } }));
  });
  // A page that goes away closes its event stream upstream too.
  response.on('close', () => outgoing.destroy());
  request.pipe(outgoing);
}

server.listen(Number(process.env.PORT ?? 8790), '127.0.0.1', () => {
  console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}/ (API: ${upstream.origin})`);
});
