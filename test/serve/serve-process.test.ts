/**
 * `loopwright serve` as the process a user runs, with workers in processes of their own, on a real
 * dev server and the streaming fake model:
 * - the serve process killed mid-turn and started again: the client reconnects with its last event
 *   id and gets the rest of the turn, nothing lost or repeated;
 * - a worker killed mid-stream: the model call is made again, readers are told the reply starts
 *   over, and the text a reader keeps is the reply once;
 * - no environment value, key or token is in any answer;
 * - any host but a loopback address needs a token; the printed link carries it.
 * The tests run at the same time (`test.concurrent`), each with its own message, which the fake
 * model answers at that test's pace, and its own serve process.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type FakeOpenAI, type RecordedRequest, type Step, startFakeOpenAI, text } from '../../fake-model/server';
import type { ChatMessage } from '../../common/messages';
import { copyExampleBundle } from '../support/session-harness';
import { findFreePort, startTestTemporal, type TestTemporal } from '../support/temporal-server';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { cliEnvironment, type RunningCli, runCli, startCli } from '../e2e/cli-runner';
import { api } from './serve-harness';
import { openEvents, replyTexts, type SseMessage, types } from './sse-reader';

jest.setTimeout(180_000);

const WORDS = Array.from({ length: 40 }, (_, i) => `word${i + 1}`).join(' ');
const SECRET_KEY = 'sk-serve-test-SECRET-5f1c0d2e';
const TOKEN = 'serve-token-SECRET-8a7b6c';

let server: TestTemporal;
let fake: FakeOpenAI;
let bundleCopy: ReturnType<typeof copyExampleBundle>;
let stateDir: string;
const workers: WorkerProcess[] = [];
const serves: RunningCli[] = [];
/** The task queue of the worker process the tests share (the one that kills its worker has its own). */
const SHARED_QUEUE = 'serve-shared';
/** That worker, started with the file and awaited by the tests that need it, beside their serve process. */
let sharedWorker: Promise<WorkerProcess>;

/** The text of a request's last user message. */
function lastUserMessage(request: RecordedRequest): string {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  return String(messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
}

/** The model calls made for the message `said`. */
function requestsSaying(said: string): RecordedRequest[] {
  return fake.requests.filter((r) => lastUserMessage(r) === said);
}

/** A test's own message and how its calls are answered (`attempt` counts them from 1). */
const replies = new Map<string, (attempt: number) => Step>();

/** A user message gets the forty words, at the pace its test set; nothing else is asked. */
function respond(request: RecordedRequest): Step {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const said = lastUserMessage(request);
  const reply = replies.get(said);
  if (reply) return reply(requestsSaying(said).length);
  return messages.length > 0 ? text(WORDS) : text('');
}

/** A promise and what settles it: a stream held until the test lets it go. */
function gate(): { promise: Promise<void>; open(): void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-serve-proc-'));
  [server, fake] = await Promise.all([startTestTemporal(), startFakeOpenAI({ responder: respond })]);
  bundleCopy = copyExampleBundle('lw-serve-proc-bundle-');
  sharedWorker = worker(SHARED_QUEUE);
  sharedWorker.catch(() => undefined);
}, 120_000);

afterAll(async () => {
  for (const serve of serves) serve.kill();
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await fake?.close();
  await server?.stop();
  bundleCopy?.cleanup();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

function env(taskQueue: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...cliEnvironment({ TEMPORAL_ADDRESS: server.address, OPENAI_BASE_URL: fake.baseURL, LOOPWRIGHT_TASK_QUEUE: taskQueue, LOOPWRIGHT_STATE_DIR: stateDir }),
    OPENAI_API_KEY: SECRET_KEY,
    ...extra,
  };
}

async function worker(taskQueue: string): Promise<WorkerProcess> {
  const started = await startWorkerProcess({ TEMPORAL_ADDRESS: server.address, LOOPWRIGHT_TASK_QUEUE: taskQueue, OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: SECRET_KEY });
  workers.push(started);
  return started;
}

/** Start `loopwright serve` and wait for the link it prints. */
async function serve(args: string[], taskQueue: string, extra: Record<string, string> = {}): Promise<{ process: RunningCli; link: string }> {
  const running = startCli(['serve', '--no-worker', ...args], env(taskQueue, extra), { timeoutMs: 170_000 });
  serves.push(running);
  for (let i = 0; i < 600; i++) {
    const line = running
      .stdout()
      .split('\n')
      .find((l) => l.startsWith('http://'));
    if (line) return { process: running, link: line.trim() };
    if (running.child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`serve did not print its link:\n${running.stdout()}\n${running.stderr()}`);
}

async function readySession(base: string, settings: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<string> {
  const created = await api(base, 'POST', '/api/sessions', { bundlePath: bundleCopy.bundle, agentId: 'facilitator', modelSettings: { stream: true }, ...settings }, headers);
  expect(created.status).toBe(201);
  const id = String(created.body.id);
  for (let i = 0; i < 400; i++) {
    if ((await api(base, 'GET', `/api/sessions/${id}`, undefined, headers)).body.status === 'waiting_for_user') return id;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('session never ready');
}

const finished = (messages: SseMessage[]) => messages.some((m) => m.event.type === 'RUN_FINISHED');

/** Resolves once the fake model got a call for `said`. */
async function waitForRequest(said: string, timeoutMs = 60_000): Promise<void> {
  const started = Date.now();
  while (requestsSaying(said).length === 0) {
    if (Date.now() - started > timeoutMs) throw new Error(`the fake model saw no request saying "${said}" within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test.concurrent('serve process: killed mid-turn and started again, the stream resumes from the last event id with nothing lost or repeated', async () => {
  const taskQueue = SHARED_QUEUE;
  // The reply stops after 40 of its 68 chunks until released: the turn is still writing when the
  // serve process is back.
  const message = 'hello (restart)';
  const held = gate();
  replies.set(message, () => text(WORDS, { stream: { chunkChars: 4, intervalMs: 20, holdAfterChunks: 40, release: held.promise } }));
  const port = await findFreePort();
  const [, first] = await Promise.all([sharedWorker, serve(['--port', String(port)], taskQueue)]);
  const base = `http://127.0.0.1:${port}`;
  expect(first.link).toBe(`${base}/`);
  const id = await readySession(base);
  const before = await openEvents(`${base}/api/sessions/${id}/events`);
  await api(base, 'POST', `/api/sessions/${id}/messages`, { text: message });
  await before.waitFor((m) => m.filter((e) => e.event.type === 'TEXT_MESSAGE_CONTENT').length >= 3, 60_000, 'some text');
  first.process.child.kill('SIGKILL');
  await first.process.done;
  await before.ended;
  const lastId = before.lastId()!;
  expect(finished(before.messages)).toBe(false);
  await serve(['--port', String(port)], taskQueue);
  const after = await openEvents(`${base}/api/sessions/${id}/events`, { lastEventId: lastId });
  held.open();
  await after.waitFor(finished, 60_000, 'RUN_FINISHED');
  after.close();
  const joined = [...before.messages, ...after.messages];
  expect(replyTexts(joined).get(`${id}:t1:r1`)).toBe(WORDS);
  const all = types(joined);
  expect(all.filter((t) => t === 'RUN_STARTED')).toHaveLength(1);
  expect(all.filter((t) => t === 'TEXT_MESSAGE_START')).toHaveLength(1);
  expect(all.filter((t) => t === 'TEXT_MESSAGE_END')).toHaveLength(1);
  expect(all.filter((t) => t === 'RUN_FINISHED')).toHaveLength(1);
  // No restart was needed: the text simply went on from where it stopped.
  expect(all).not.toContain('CUSTOM:loopwright.reply_restarted');
  expect(after.messages[0]!.event.type).not.toBe('RUN_STARTED');
  await api(base, 'POST', `/api/sessions/${id}/end`, {});
});

test.concurrent('serve process: a worker killed mid-stream: the call is made again, readers drop the old text, the reply is kept once', async () => {
  const taskQueue = 'serve-retry';
  // The first call stops after 40 of its 68 chunks and is never let go: its worker dies while it is
  // still writing, whatever the machine's pace. The call made again streams the whole reply.
  const message = 'hello (retry)';
  const never = gate();
  replies.set(message, (attempt) => text(WORDS, { stream: attempt === 1 ? { chunkChars: 4, intervalMs: 20, holdAfterChunks: 40, release: never.promise } : { chunkChars: 4, intervalMs: 15 } }));
  const port = await findFreePort();
  const [doomed] = await Promise.all([worker(taskQueue), serve(['--port', String(port)], taskQueue)]);
  const base = `http://127.0.0.1:${port}`;
  const id = await readySession(base, { timeouts: { modelHeartbeat: '2 seconds' } });
  const events = await openEvents(`${base}/api/sessions/${id}/events`);
  await api(base, 'POST', `/api/sessions/${id}/messages`, { text: message });
  // The model call runs on the first worker; the second one starts meanwhile.
  await waitForRequest(message);
  const second = worker(taskQueue);
  await events.waitFor((m) => m.filter((e) => e.event.type === 'TEXT_MESSAGE_CONTENT').length >= 2, 60_000, 'some text');
  expect(finished(events.messages)).toBe(false);
  await doomed.kill('SIGKILL');
  never.open();
  await second;
  await events.waitFor(finished, 90_000, 'RUN_FINISHED');
  events.close();
  const all = types(events.messages);
  const restarted = all.indexOf('CUSTOM:loopwright.reply_restarted');
  expect(restarted).toBeGreaterThan(0);
  // What an AG-UI reader keeps: the reply once, not the old attempt's words before it.
  expect(replyTexts(events.messages).get(`${id}:t1:r1`)).toBe(WORDS);
  expect(all.filter((t) => t === 'TEXT_MESSAGE_START')).toHaveLength(1);
  expect(requestsSaying(message).length).toBe(2);
  await api(base, 'POST', `/api/sessions/${id}/end`, {});
});

test.concurrent('serve process: no environment value, API key or token appears in any answer', async () => {
  const taskQueue = SHARED_QUEUE;
  const message = 'hello (secrets)';
  const port = await findFreePort();
  await Promise.all([sharedWorker, serve(['--port', String(port), '--token', TOKEN], taskQueue, { MY_SECRET_SETTING: 'env-value-SECRET-33' })]);
  const base = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${TOKEN}` };
  const id = await readySession(base, {}, auth);
  const events = await openEvents(`${base}/api/sessions/${id}/events`, { headers: auth });
  await api(base, 'POST', `/api/sessions/${id}/messages`, { text: message }, auth);
  await events.waitFor(finished, 60_000, 'RUN_FINISHED');
  events.close();
  const answers: string[] = [JSON.stringify(events.messages)];
  const paths = [
    '/api/health',
    `/api/agents?bundlePath=${encodeURIComponent(bundleCopy.bundle)}`,
    '/api/sessions',
    `/api/sessions/${id}`,
    `/api/sessions/${id}/messages?from=0`,
    `/api/sessions/${id}/turns/1`,
    '/api/batches',
    '/api/schedules',
    '/api/openapi.json',
    '/api/sessions/nothing',
    '/api/no-route',
    '/',
  ];
  for (const p of paths) {
    const answer = await api(base, 'GET', p, undefined, auth);
    answers.push(`${JSON.stringify([...answer.headers])}${answer.text}`);
  }
  // Errors too: a refused token, a bad body.
  answers.push((await api(base, 'GET', '/api/health', undefined, { authorization: 'Bearer wrong' })).text);
  answers.push((await api(base, 'POST', '/api/sessions', { bundlePath: '/nonexistent', agentId: 'x' }, auth)).text);
  const all = answers.join('\n');
  for (const secret of [SECRET_KEY, TOKEN, 'env-value-SECRET-33', fake.baseURL]) expect(all).not.toContain(secret);
  await api(base, 'POST', `/api/sessions/${id}/end`, {}, auth);
});

test.concurrent('serve process: another host than loopback refuses to start without a token; with one, the link carries it', async () => {
  const refused = await runCli(['serve', '--host', '0.0.0.0', '--port', '0', '--no-worker'], env('serve-host'));
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('without a token');
  const port = await findFreePort();
  const { link } = await serve(['--host', '0.0.0.0', '--port', String(port)], 'serve-host', { LOOPWRIGHT_SERVE_TOKEN: TOKEN });
  expect(link).toBe(`http://${os.hostname()}:${port}/?token=${TOKEN}`);
  expect((await api(`http://127.0.0.1:${port}`, 'GET', '/api/health')).status).toBe(401);
  expect((await api(`http://127.0.0.1:${port}`, 'GET', '/api/health', undefined, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
});
