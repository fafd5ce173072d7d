/**
 * The safety of `loopwright serve` over real HTTP (a server with a token, on 127.0.0.1):
 * - the token: bearer, or the HttpOnly SameSite=Strict cookie set when the page is opened with
 *   ?token= (then redirected without it); nothing else gets in;
 * - Host names other than this machine's are refused (DNS rebinding);
 * - cross-site requests: a change needs Content-Type: application/json and, with an Origin, this
 *   server's own; Sec-Fetch-Site: cross-site is refused;
 * - bodies over 1 MiB, and messages over the session's limit, are refused;
 * - a client that sends its headers or body too slowly is cut off;
 * - a client that does not read its event stream is dropped once its unsent events pass the bound,
 *   while another client gets every event and the server keeps answering.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { text, toolCalls } from '../../fake-model/server';
import { MAX_USER_MESSAGE_BYTES } from '../../common/defaults';
import { api, useServeSuite } from './serve-harness';
import { openEvents } from './sse-reader';

jest.setTimeout(120_000);

const TOKEN = 'the-token-9f8e';
const suite = useServeSuite({ token: TOKEN, streamLimits: { maxBufferedBytes: 64 * 1024 }, headersTimeoutMs: 500, requestTimeoutMs: 1_000, timeoutCheckMs: 250 });
const auth = { authorization: `Bearer ${TOKEN}` };

/** A raw HTTP exchange on a socket: what the server sent before it closed (or `waitMs` passed). */
function raw(port: number, request: string, waitMs = 5_000): Promise<{ data: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let data = '';
    socket.on('data', (d) => (data += d.toString()));
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ data, closed: false });
    }, waitMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ data, closed: true });
    });
    socket.on('error', () => undefined);
  });
}

const port = () => Number(new URL(suite.serve.base).port);

test('safety: with a token, requests need the bearer or the cookie the page sets; the token never stays in the address', async () => {
  const { base } = suite.serve;
  expect((await api(base, 'GET', '/api/health')).status).toBe(401);
  expect((await api(base, 'GET', '/api/health')).body.error!.type).toBe('Unauthorized');
  expect((await api(base, 'GET', '/api/health', undefined, { authorization: 'Bearer nope' })).status).toBe(401);
  expect((await api(base, 'GET', '/api/health', undefined, auth)).status).toBe(200);
  // Not in an API address (it would end up in logs).
  expect((await api(base, `GET`, `/api/health?token=${TOKEN}`)).status).toBe(401);
  expect((await api(base, 'GET', '/')).status).toBe(401);
  expect((await api(base, 'GET', '/?token=wrong')).status).toBe(401);
  const opened = await api(base, 'GET', `/?token=${TOKEN}&view=x`);
  expect(opened.status).toBe(303);
  expect(opened.headers.get('location')).toBe('/?view=x');
  const cookie = opened.headers.get('set-cookie')!;
  expect(cookie).toMatch(/^loopwright_token=the-token-9f8e;/);
  expect(cookie).toContain('HttpOnly');
  expect(cookie).toContain('SameSite=Strict');
  const jar = { cookie: cookie.split(';')[0]! };
  expect((await api(base, 'GET', '/api/health', undefined, jar)).status).toBe(200);
  expect((await api(base, 'GET', '/', undefined, jar)).status).toBe(200);
  expect((await api(base, 'GET', '/api/health', undefined, { cookie: 'loopwright_token=wrong' })).status).toBe(401);
  // Pages are never framed by another site.
  expect(opened.headers.get('x-frame-options')).toBe('DENY');
});

test('safety: a Host name other than this machine is refused (DNS rebinding)', async () => {
  const evil = await raw(port(), `GET /api/health HTTP/1.1\r\nHost: evil.example:${port()}\r\nAuthorization: Bearer ${TOKEN}\r\nConnection: close\r\n\r\n`);
  expect(evil.data).toMatch(/^HTTP\/1.1 403/);
  const local = await raw(port(), `GET /api/health HTTP/1.1\r\nHost: localhost:${port()}\r\nAuthorization: Bearer ${TOKEN}\r\nConnection: close\r\n\r\n`);
  expect(local.data).toMatch(/^HTTP\/1.1 200/);
});

test('safety: changes need Content-Type: application/json and this origin; cross-site fetches are refused', async () => {
  const { base } = suite.serve;
  const body = JSON.stringify({ bundlePath: suite.bundle, agentId: 'facilitator' });
  const post = (headers: Record<string, string>, payload = body) => fetch(`${base}/api/sessions`, { method: 'POST', headers: { ...auth, ...headers }, body: payload });
  // What a form or a simple cross-site fetch can send.
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) expect((await post({ 'content-type': type })).status).toBe(415);
  expect((await fetch(`${base}/api/sessions/x/end`, { method: 'POST', headers: auth })).status).toBe(415);
  expect((await post({ 'content-type': 'application/json', origin: 'http://evil.example' })).status).toBe(403);
  expect((await post({ 'content-type': 'application/json', origin: 'null' })).status).toBe(403);
  const same = await post({ 'content-type': 'application/json', origin: base });
  expect(same.status).toBe(201);
  const { id } = (await same.json()) as { id: string };
  expect((await api(base, 'GET', '/api/health', undefined, { ...auth, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
  await api(base, 'POST', `/api/sessions/${id}/end`, {}, auth);
});

test('safety: bodies over 1 MiB and messages over the session limit are refused before anything is sent', async () => {
  const { base } = suite.serve;
  const huge = await api(base, 'POST', '/api/sessions', { bundlePath: suite.bundle, agentId: 'facilitator', firstMessage: 'x'.repeat(1100 * 1024) }, auth);
  expect(huge.status).toBe(413);
  expect(huge.body.error!.type).toBe('TooLarge');
  const created = await api(base, 'POST', '/api/sessions', { bundlePath: suite.bundle, agentId: 'facilitator' }, auth);
  const id = String(created.body.id);
  const long = await api(base, 'POST', `/api/sessions/${id}/messages`, { text: 'y'.repeat(MAX_USER_MESSAGE_BYTES + 10) }, auth);
  expect(long.status).toBe(413);
  expect(long.body.error!.type).toBe('LoopwrightTooLarge');
  expect(suite.h.fake.requests).toHaveLength(0);
  await api(base, 'POST', `/api/sessions/${id}/end`, {}, auth);
});

// Only waiting (on the server's timeouts), so it runs beside the file's other tests.
test.concurrent('safety: a client that sends its headers or its body too slowly is cut off', async () => {
  const started = Date.now();
  const [headers, body] = await Promise.all([
    raw(port(), `GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:${port()}\r\n`, 10_000).then((result) => ({ ...result, ms: Date.now() - started })),
    // A body that trickles: one byte, then nothing.
    raw(port(), `POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:${port()}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`, 10_000),
  ]);
  expect(headers.closed).toBe(true);
  expect(headers.ms).toBeLessThan(6_000);
  expect(body.closed).toBe(true);
});

test('safety: a client that does not read its stream holds no one up: another gets everything and the server keeps answering', async () => {
  const { base, context } = suite.serve;
  // Twenty 60 KB tool results in one turn: about 1.2 MB of events for every watcher. The kernel's
  // socket buffers on loopback (about 4 MB) hold that for a client that does not read, so it is not
  // dropped here; the drop at the bound itself is shown on a stream whose socket never drains
  // (test/serve/sse-stream.test.ts), which needs no megabytes of history to make.
  fs.writeFileSync(path.join(suite.bundle, 'big.md'), `${'a line of the big file\n'.repeat(2600)}`);
  const calls = Array.from({ length: 20 }, (_, i) => ({ name: 'read_file', arguments: { file_path: '{bundle-root}/big.md' }, id: `call_${i}` }));
  suite.h.fake.enqueue(toolCalls(calls), text('read them all'));
  const created = await api(base, 'POST', '/api/sessions', { bundlePath: suite.bundle, agentId: 'facilitator', context: { window: 20_000_000 } }, auth);
  const id = String(created.body.id);
  for (let i = 0; i < 200 && (await api(base, 'GET', `/api/sessions/${id}`, undefined, auth)).body.status !== 'waiting_for_user'; i++) await new Promise((r) => setTimeout(r, 50));
  const reader = await openEvents(`${base}/api/sessions/${id}/events`, { headers: auth });
  // The slow client: asks for the stream, then never reads.
  const slow = net.connect(port(), '127.0.0.1');
  await new Promise<void>((resolve) => slow.once('connect', () => resolve()));
  slow.write(`GET /api/sessions/${id}/events HTTP/1.1\r\nHost: 127.0.0.1:${port()}\r\nAuthorization: Bearer ${TOKEN}\r\nAccept: text/event-stream\r\n\r\n`);
  slow.pause();
  for (let i = 0; i < 100 && context.feeds.watchers < 2; i++) await new Promise((r) => setTimeout(r, 20));
  expect(context.feeds.watchers).toBe(2);
  await api(base, 'POST', `/api/sessions/${id}/messages`, { text: 'read everything' }, auth);
  await reader.waitFor((m) => m.some((e) => e.event.type === 'RUN_FINISHED'), 90_000, 'RUN_FINISHED');
  // The server answers while the slow client's stream is backed up, and the reader got every result.
  expect((await api(base, 'GET', '/api/health', undefined, auth)).status).toBe(200);
  expect(reader.messages.filter((m) => m.event.type === 'TOOL_CALL_RESULT')).toHaveLength(20);
  slow.destroy();
  reader.close();
  await api(base, 'POST', `/api/sessions/${id}/end`, {}, auth);
});
