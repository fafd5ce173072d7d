/**
 * Live output end to end: the fake model streams its reply slowly, and
 * - a second process follows the turn through its own Temporal client and sees the reply in pieces
 *   before the turn ends, joined exactly into the final reply;
 * - `loopwright chat` on a pseudo-terminal (util-linux `script`) shows the reply while it is still
 *   being written, and not twice;
 * - a worker killed mid-stream: the call is made again on a new worker, the follower is told the
 *   reply starts over, and the final text is the one reply, once.
 * The fake model holds a stream half written (`holdAfterChunks`) while a test looks at the partial
 * reply, then lets it go (the hold's `release`), instead of writing the whole reply slowly. The tests
 * that need no worker of their own share one worker process and its task queue. The tests run at
 * the same time (`test.concurrent`): each sends its own message, which the fake model streams at
 * that test's pace and holds until that test lets it go.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { LoopwrightClient } from '../../client/session-client';
import type { SessionEvent } from '../../client/session-events';
import type { ChatMessage } from '../../common/messages';
import { type FakeOpenAI, type RecordedRequest, type Step, type StreamRate, startFakeOpenAI, text, toolCalls } from '../../fake-model/server';
import { copyExampleBundle } from '../support/session-harness';
import { startTestTemporal, type TestTemporal } from '../support/temporal-server';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { BIN, cliEnvironment } from './cli-runner';

jest.setTimeout(120_000);

const REPO = path.resolve(__dirname, '../..');
const WORDS = Array.from({ length: 40 }, (_, i) => `word${i + 1}`).join(' ');

let server: TestTemporal;
let fake: FakeOpenAI;
let connection: Connection;
let client: Client;
let bundleCopy: ReturnType<typeof copyExampleBundle>;
let stateDir: string;
const workers: WorkerProcess[] = [];
/** The task queue of the shared worker process. */
const SHARED_QUEUE = 'live-shared';
/** The task queue of the worker the crash test kills, started with the shared one. */
const CRASH_QUEUE = 'live-crash';
let crashWorker: Promise<WorkerProcess>;

/** Four characters every 20 ms: the forty words take about 1.2 s to write. */
const PACE: StreamRate = { chunkChars: 4, intervalMs: 20 };

/** The pace (and hold) of a test's message, where it is not PACE. */
const rates = new Map<string, StreamRate>();

/** The text of a request's last user message, and how many assistant replies followed it. */
function lastUserMessage(request: RecordedRequest): { said: string; step: number } {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  return { said: String(messages[lastUser]?.content ?? ''), step: messages.slice(lastUser).filter((m) => m.role === 'assistant').length };
}

/** The model calls made for the message `said`. */
function requestsSaying(said: string): RecordedRequest[] {
  return fake.requests.filter((r) => lastUserMessage(r).said === said);
}

/** `read then answer` reads the config first; anything else gets the forty words; each at its message's pace. */
function respond(request: RecordedRequest): Step {
  const { said, step } = lastUserMessage(request);
  const stream = rates.get(said) ?? PACE;
  if (said === 'read then answer' && step === 0) return toolCalls([{ id: 'call_read', name: 'read_file', arguments: { file_path: '{bundle-root}/config.yaml' } }], { stream });
  return text(WORDS, { stream });
}

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-live-'));
  [server, fake] = await Promise.all([startTestTemporal(), startFakeOpenAI({ responder: respond })]);
  connection = await Connection.connect({ address: server.address });
  client = new Client({ connection });
  bundleCopy = copyExampleBundle('lw-live-bundle-');
  crashWorker = worker(CRASH_QUEUE);
  crashWorker.catch(() => undefined);
  await worker(SHARED_QUEUE);
}, 120_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await connection?.close();
  await fake?.close();
  await server?.stop();
  bundleCopy?.cleanup();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

function workerEnv(taskQueue: string): Record<string, string> {
  return { TEMPORAL_ADDRESS: server.address, LOOPWRIGHT_TASK_QUEUE: taskQueue, OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: 'test-key' };
}

async function worker(taskQueue: string): Promise<WorkerProcess> {
  const started = await startWorkerProcess(workerEnv(taskQueue));
  workers.push(started);
  return started;
}

/** Waits (25 ms a look, up to `timeoutMs`) until `ready()`, else fails naming `what` and showing `context()`. */
async function until(ready: () => boolean, what: string, context: () => string = () => '', timeoutMs = 30_000): Promise<void> {
  const started = Date.now();
  while (!ready()) {
    if (Date.now() - started > timeoutMs) throw new Error(`never saw ${what}\n${context()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Streams stop after the role chunk and nine pieces of text (the first seven words) until released. */
const HALF_WRITTEN = { chunkChars: 4, intervalMs: 0, holdAfterChunks: 10 };

/** Hold the streams of the message `said` half written until `release()`. */
function holdHalfWritten(said: string): { release(): void } {
  let release: () => void = () => undefined;
  rates.set(said, { ...HALF_WRITTEN, release: new Promise<void>((resolve) => (release = resolve)) });
  return { release: () => release() };
}

/** The follower process: its events as they come. */
function follower(taskQueue: string, workflowId: string) {
  const child = spawn(process.execPath, [path.join(REPO, 'test/support/follow-session.js'), server.address, taskQueue, workflowId], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events: (SessionEvent & { at: number })[] = [];
  let buffer = '';
  let stderr = '';
  let ready: () => void = () => undefined;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  child.stdout!.on('data', (d: Buffer) => {
    buffer += d.toString();
    for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
      const event = JSON.parse(buffer.slice(0, i)) as { type: string };
      buffer = buffer.slice(i + 1);
      if (event.type === 'ready') ready();
      else if (event.type !== 'end') events.push(event as SessionEvent & { at: number });
    }
  });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { events, isReady, exited, stderr: () => stderr, kill: () => child.kill('SIGKILL') };
}

test.concurrent('a second process follows a streamed turn: tool events, the reply in pieces before the turn ends, joined exactly', async () => {
  const lw = new LoopwrightClient(client, SHARED_QUEUE);
  const session = await lw.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator', modelSettings: { stream: true } });
  const follow = follower(SHARED_QUEUE, session.workflowId);
  await follow.isReady;
  const result = await session.send('read then answer');
  expect(result).toMatchObject({ success: true, response: WORDS });
  expect(await follow.exited).toBe(0);
  const types = follow.events.map((e) => e.type);
  expect(types).toEqual(expect.arrayContaining(['iteration', 'tool_started', 'tool_finished', 'text', 'reply_done', 'turn_ended']));
  expect(types.indexOf('tool_finished')).toBeLessThan(types.indexOf('text'));
  const texts = follow.events.filter((e): e is Extract<SessionEvent, { type: 'text' }> & { at: number } => e.type === 'text');
  // Several pieces, in order, with offsets that join without gaps, into exactly the reply.
  expect(texts.length).toBeGreaterThan(3);
  let joined = '';
  for (const piece of texts) {
    expect(piece.offset).toBe(joined.length);
    joined += piece.text;
  }
  expect(joined).toBe(WORDS);
  // The first pieces arrived before the reply was complete on the reader's side.
  const ended = follow.events.find((e) => e.type === 'turn_ended')!;
  expect(texts[0]!.at).toBeLessThan(ended.at);
  expect(texts[0]!.text.length).toBeLessThan(WORDS.length);
  expect(requestsSaying('read then answer').at(-1)!.body!.stream).toBe(true);
  await session.end();
});

test.concurrent('chat on a pseudo-terminal shows the reply while it is being written, and once', async () => {
  // On the shared worker's queue: the command shows what the session's model call streams, whichever worker runs it.
  const taskQueue = SHARED_QUEUE;
  const message = 'hello (chat)';
  const hold = holdHalfWritten(message);
  const env = cliEnvironment({ TEMPORAL_ADDRESS: server.address, OPENAI_BASE_URL: fake.baseURL, LOOPWRIGHT_TASK_QUEUE: taskQueue, LOOPWRIGHT_STATE_DIR: stateDir });
  const command = [process.execPath, BIN, 'chat', bundleCopy.bundle, 'facilitator'].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  // util-linux script gives the command a terminal and copies what it shows to our pipe.
  const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: stateDir, env: { ...env, TERM: 'dumb', COLUMNS: '200' }, stdio: ['pipe', 'pipe', 'pipe'] });
  let screen = '';
  child.stdout!.on('data', (d: Buffer) => (screen += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const waitFor = (test: () => boolean, what: string): Promise<void> => until(test, what, () => `the screen:\n${screen}`);
  try {
    await waitFor(() => screen.includes('> '), 'the prompt');
    child.stdin!.write(`${message}\r`);
    // A few words are on the screen while the last one is not yet written (the stream is held).
    await waitFor(() => screen.includes('word3 '), 'the first words');
    const partial = screen;
    expect(partial).not.toContain('word40');
    hold.release();
    await waitFor(() => screen.includes('word40'), 'the last word');
    await waitFor(() => screen.lastIndexOf('> ') > screen.indexOf('word40'), 'the prompt after the reply');
    // The reply is shown once, not again when the turn ends.
    expect(screen.split('word20 ').length - 1).toBe(1);
    child.stdin!.write('/end\r');
    expect(await exited).toBe(0);
  } finally {
    child.kill('SIGKILL');
  }
});

test.concurrent('chat --id on a session whose turn is running follows that turn live, then prompts', async () => {
  // The reply stays half written until the chat process has joined the turn and shown part of it.
  const message = 'hello (chat --id)';
  const hold = holdHalfWritten(message);
  const session = await new LoopwrightClient(client, SHARED_QUEUE).start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator', modelSettings: { stream: true } });
  const turn = session.send(message);
  await until(() => requestsSaying(message)[0]?.streamedChunks === HALF_WRITTEN.holdAfterChunks, 'the reply held half written');
  const env = cliEnvironment({ TEMPORAL_ADDRESS: server.address, OPENAI_BASE_URL: fake.baseURL, LOOPWRIGHT_TASK_QUEUE: SHARED_QUEUE, LOOPWRIGHT_STATE_DIR: stateDir });
  const command = [process.execPath, BIN, 'chat', '--id', session.workflowId].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: stateDir, env: { ...env, TERM: 'dumb', COLUMNS: '200' }, stdio: ['pipe', 'pipe', 'pipe'] });
  let screen = '';
  let partial: string | undefined;
  child.stdout!.on('data', (d: Buffer) => {
    screen += d.toString();
    if (partial === undefined && /word\d+ /.test(screen)) partial = screen;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  try {
    await until(
      () => partial !== undefined,
      'part of the reply on the screen',
      () => `the screen:\n${screen}`,
    );
    hold.release();
    await expect(turn).resolves.toMatchObject({ success: true, response: WORDS });
    for (let i = 0; i < 400 && !(screen.includes('word40') && screen.lastIndexOf('> ') > screen.indexOf('word40')); i++) await new Promise((r) => setTimeout(r, 25));
    // Part of the reply was on the screen before its end, then the prompt came; nothing was refused.
    expect(partial).toBeDefined();
    expect(partial).not.toContain('word40');
    expect(screen.lastIndexOf('> ')).toBeGreaterThan(screen.indexOf('word40'));
    expect(screen).not.toContain('Rejected');
    child.stdin!.write('/end\r');
    expect(await exited).toBe(0);
  } finally {
    child.kill('SIGKILL');
  }
});

test.concurrent('run on a pseudo-terminal prints the reply while it is being written, and once', async () => {
  const message = 'hello (run)';
  const hold = holdHalfWritten(message);
  const env = cliEnvironment({ TEMPORAL_ADDRESS: server.address, OPENAI_BASE_URL: fake.baseURL, LOOPWRIGHT_TASK_QUEUE: SHARED_QUEUE, LOOPWRIGHT_STATE_DIR: stateDir });
  const command = [process.execPath, BIN, 'run', bundleCopy.bundle, 'facilitator', message, '--once'].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: stateDir, env: { ...env, TERM: 'dumb', COLUMNS: '200' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let screen = '';
  let partial: string | undefined;
  child.stdout!.on('data', (d: Buffer) => {
    screen += d.toString();
    if (partial === undefined && screen.includes('word3 ')) partial = screen;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  try {
    await until(
      () => partial !== undefined,
      'the first words',
      () => `the screen:\n${screen}`,
    );
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  hold.release();
  const code = await exited;
  expect(code).toBe(0);
  expect(partial).toBeDefined();
  expect(partial).not.toContain('word40');
  expect(screen).toContain('word40');
  expect(screen.split('word20 ').length - 1).toBe(1);
});

test.concurrent('a worker killed mid-stream: the call is made again, the follower is told the reply starts over, the final text comes once', async () => {
  const taskQueue = CRASH_QUEUE;
  const first = await crashWorker;
  const message = 'hello (crash)';
  const hold = holdHalfWritten(message);
  const lw = new LoopwrightClient(client, taskQueue);
  const session = await lw.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator', modelSettings: { stream: true }, timeouts: { modelHeartbeat: '2 seconds' } });
  const events: SessionEvent[] = [];
  const following = (async () => {
    for await (const event of session.follow({ intervalMs: 25 })) events.push(event);
  })();
  const turn = session.send(message);
  // The model call runs on the first worker; the second one starts meanwhile.
  await until(
    () => requestsSaying(message).length >= 1,
    'the model call',
    () => '',
    20_000,
  );
  const second = worker(taskQueue);
  // Kill the worker once some of the reply was shown (the stream is held half written).
  for (let i = 0; i < 800 && !events.some((e) => e.type === 'text'); i++) await new Promise((r) => setTimeout(r, 25));
  expect(events.some((e) => e.type === 'text')).toBe(true);
  await first.kill('SIGKILL');
  await second;
  // The call made again (after the heartbeat timeout) is held too, until the follower was told the reply starts over.
  await until(() => requestsSaying(message).length >= 2, 'the call made again');
  await until(
    () => events.some((e) => e.type === 'restart'),
    'the restart event',
    () => JSON.stringify(events),
  );
  hold.release();
  await expect(turn).resolves.toMatchObject({ success: true, response: WORDS });
  await following;
  const restart = events.findIndex((e) => e.type === 'restart');
  expect(restart).toBeGreaterThan(0);
  // After the restart the text is the whole reply, from offset 0, once.
  const after = events.slice(restart + 1).filter((e): e is Extract<SessionEvent, { type: 'text' }> => e.type === 'text');
  expect(after[0]!.offset).toBe(0);
  expect(after.map((e) => e.text).join('')).toBe(WORDS);
  expect(requestsSaying(message).length).toBe(2);
  await session.end();
});

test.concurrent('an interrupt stops a stream at once: the HTTP request is cancelled and the next message works', async () => {
  // Held after the role chunk and four pieces of two characters, never released: the stream cannot end before the interrupt.
  const message = 'hello (interrupt)';
  const again = 'again (interrupt)';
  rates.set(message, { chunkChars: 2, intervalMs: 0, holdAfterChunks: 5, release: new Promise<void>(() => undefined) });
  rates.set(again, { chunkChars: 64, intervalMs: 0 });
  const lw = new LoopwrightClient(client, SHARED_QUEUE);
  const session = await lw.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator', modelSettings: { stream: true } });
  const events: SessionEvent[] = [];
  const following = (async () => {
    for await (const event of session.follow({ intervalMs: 25 })) events.push(event);
  })();
  const turn = session.send(message);
  for (let i = 0; i < 800 && !events.some((e) => e.type === 'text'); i++) await new Promise((r) => setTimeout(r, 25));
  await session.interrupt('enough');
  await expect(turn).resolves.toMatchObject({ status: 'interrupted' });
  await until(
    () => requestsSaying(message)[0]?.aborted === true,
    'the model call aborted',
    () => '',
    10_000,
  );
  await following;
  // The stream had not ended when it was stopped.
  expect(requestsSaying(message)[0]!.streamedChunks ?? 0).toBeLessThan(WORDS.length / 2);
  await expect(session.send(again)).resolves.toMatchObject({ success: true, response: WORDS });
  await session.end();
});
