/**
 * `loopwright serve`'s event streams (`serve` part): events per second delivered to many clients
 * watching one session, and the serve process's memory with many open streams. One worker in this
 * process on the bench's dev server, the fake model in this process, `loopwright serve` in a process
 * of its own (its pid read for /proc figures), clients as plain HTTP connections of this process.
 *
 * - live: `clients` clients watch one session while it runs `turns` turns of `calls` small
 *   read_file calls each and a streamed reply; the figure is every event every client received,
 *   over the time from the first to the last, and how far apart the clients got each turn's end;
 * - replay: as many new clients resume that session from its first event id at once (the whole
 *   history again: the fan-out's own speed, not the session's);
 * - memory: the serve process's RSS with no stream open, then with `streams` streams open on an
 *   idle session (each waiting for the next turn).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { LoopwrightClient } from '../../client/session-client';
import { startFakeOpenAI, text, toolCalls, type RecordedRequest, type Step } from '../../fake-model/server';
import { createWorker } from '../../worker/create-worker';
import { findFreePort } from '../../test/support/temporal-server';
import type { BenchServer } from './bench-server';
import type { CleanupStack } from './cleanup-stack';
import { benchWorkflowBundle, waitUntilReady } from './durable-loop';
import { processMemory } from './proc-stats';
import { replyText } from './stream-reader';
import { bytes, textTable } from './text-table';

const BIN = path.resolve(__dirname, '../../bin/loopwright.js');

export interface ServeBenchOptions {
  server: BenchServer;
  bundlePath: string;
  agentId: string;
  /** A small file the tool calls read, as a `read_file` path (`{bundle-root}/config.yaml`). */
  file: string;
  model: string;
  turnTimeoutMs: number;
  /** Clients watching the session (default 100). */
  clients?: number;
  /** Turns watched (default 5), each with `calls` tool calls (default 40) and a reply. */
  turns?: number;
  calls?: number;
  /** Streams open for the memory figure (default 1000). */
  streams?: number;
  progress?: (line: string) => void;
}

export interface ServeFigures {
  clients: number;
  turns: number;
  calls: number;
  /** Events one client received over the turns. */
  eventsPerClient: number;
  /** Live: every client's events over the time from the first to the last. */
  liveEventsPerSecond: number;
  /** Live: the largest gap between the first and the last client receiving a turn's RUN_FINISHED. */
  liveEndSpreadMs: number;
  /** Replay: every client's events over the time the last one took. */
  replayEventsPerSecond: number;
  replayMs: number;
  streams: number;
  rssIdleBytes: number;
  rssWithStreamsBytes: number;
}

/** One streaming client: counts events as they arrive. */
interface Watcher {
  events: number;
  ends: number[];
  firstAt?: number;
  lastAt?: number;
  firstId?: string;
  request: http.ClientRequest;
}

function watch(url: string, lastEventId?: string, onEnd?: () => void): Watcher {
  const watcher: Watcher = { events: 0, ends: [], request: undefined as unknown as http.ClientRequest };
  const headers: Record<string, string> = { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) };
  watcher.request = http.get(url, { agent: false, headers }, (res) => {
    let buffer = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (!block.includes('\ndata: ')) continue;
        const now = Date.now();
        watcher.events += 1;
        watcher.firstAt ??= now;
        watcher.lastAt = now;
        watcher.firstId ??= block.slice(4, block.indexOf('\n'));
        if (block.includes('"type":"RUN_FINISHED"')) {
          watcher.ends.push(now);
          onEnd?.();
        }
      }
    });
  });
  watcher.request.on('error', () => undefined);
  return watcher;
}

/** A `loopwright serve` process (no worker of its own). */
async function startServeProcess(env: NodeJS.ProcessEnv, port: number, cleanup: CleanupStack): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', String(port), '--no-worker'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  cleanup.push('loopwright serve (serve part)', async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`loopwright serve exited early:\n${output}`);
    if (
      await fetch(`${url}/api/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { url, child };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`loopwright serve did not answer:\n${output}`);
}

async function until(test: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`serve bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function measureServe(options: ServeBenchOptions, cleanup: CleanupStack): Promise<ServeFigures> {
  const clients = options.clients ?? 100;
  const turns = options.turns ?? 5;
  const calls = options.calls ?? 40;
  const streams = options.streams ?? 1000;
  const reply = replyText(400);
  // A user message gets `calls` reads; their results get the reply.
  const respond = (request: RecordedRequest): Step => {
    const last = request.body?.messages?.at(-1);
    if (last?.role !== 'user') return text(reply);
    return toolCalls(Array.from({ length: calls }, (_, i) => ({ name: 'read_file', arguments: { file_path: options.file }, id: `call_${Date.now()}_${i}` })));
  };
  const fake = await startFakeOpenAI({ responder: respond, streaming: { chunkChars: 16, intervalMs: 5 } });
  cleanup.push('serve-part fake model server', () => fake.close());
  const taskQueue = `loopwright-bench-serve-${process.pid}`;
  const [workflowBundle, connection] = await Promise.all([benchWorkflowBundle(), options.server.nativeConnection()]);
  const worker = await createWorker({ connection, taskQueue, workflowBundle, activityOptions: { model: { baseURL: fake.baseURL, apiKey: 'bench-key', defaultModel: options.model } } });
  const running = worker.run();
  cleanup.push('serve-part worker', async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
  });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TEMPORAL_ADDRESS: options.server.address,
    LOOPWRIGHT_TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: fake.baseURL,
    OPENAI_API_KEY: 'bench-key',
  };
  options.progress?.('serve: starting loopwright serve');
  const serve = await startServeProcess(env, await findFreePort(), cleanup);
  const loopwright = new LoopwrightClient(options.server.client, taskQueue);
  const session = await loopwright.start({ bundlePath: options.bundlePath, agentId: options.agentId, context: { window: 10_000_000 }, modelSettings: { stream: true } });
  await waitUntilReady(session, options.turnTimeoutMs);
  const eventsUrl = `${serve.url}/api/sessions/${encodeURIComponent(session.workflowId)}/events`;

  options.progress?.(`serve: ${clients} clients watch ${turns} turns of ${calls} tool calls and a streamed reply`);
  const live = Array.from({ length: clients }, () => watch(eventsUrl));
  await new Promise((r) => setTimeout(r, 500));
  for (let turn = 1; turn <= turns; turn++) {
    const sent = await fetch(`${serve.url}/api/sessions/${encodeURIComponent(session.workflowId)}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: `serve bench ${turn}` }),
    });
    if (sent.status !== 202) throw new Error(`serve bench: sending answered ${sent.status}: ${await sent.text()}`);
    await until(() => live.every((w) => w.ends.length >= turn), options.turnTimeoutMs, `turn ${turn} at every client`);
  }
  for (const w of live) w.request.destroy();
  const liveEvents = live.reduce((n, w) => n + w.events, 0);
  const liveSpan = Math.max(...live.map((w) => w.lastAt!)) - Math.min(...live.map((w) => w.firstAt!));
  let spread = 0;
  for (let turn = 0; turn < turns; turn++) {
    const ends = live.map((w) => w.ends[turn]!);
    spread = Math.max(spread, Math.max(...ends) - Math.min(...ends));
  }

  options.progress?.(`serve: ${clients} clients resume from the session's first event at once`);
  const firstId = live[0]!.firstId!;
  const replayStart = Date.now();
  const replay = Array.from({ length: clients }, () => watch(eventsUrl, firstId));
  // Resumed after the first event: every event but that one, every turn.
  await until(() => replay.every((w) => w.ends.length >= turns), options.turnTimeoutMs, 'the replay at every client');
  const replayMs = Math.max(...replay.map((w) => w.ends[turns - 1]!)) - replayStart;
  const replayEvents = replay.reduce((n, w) => n + w.events, 0);
  for (const w of replay) w.request.destroy();

  options.progress?.(`serve: memory with ${streams} open streams`);
  await new Promise((r) => setTimeout(r, 1000));
  const idle = processMemory(serve.child.pid!).rssBytes;
  const open: Watcher[] = [];
  for (let i = 0; i < streams; i++) open.push(watch(eventsUrl));
  await new Promise((r) => setTimeout(r, 2000));
  const withStreams = processMemory(serve.child.pid!).rssBytes;
  for (const w of open) w.request.destroy();
  await session.end();
  return {
    clients,
    turns,
    calls,
    eventsPerClient: Math.round(liveEvents / clients),
    liveEventsPerSecond: Math.round(liveEvents / (liveSpan / 1000)),
    liveEndSpreadMs: spread,
    replayEventsPerSecond: Math.round(replayEvents / (replayMs / 1000)),
    replayMs,
    streams,
    rssIdleBytes: idle,
    rssWithStreamsBytes: withStreams,
  };
}

export function formatServe(figures: ServeFigures): string {
  return [
    `Event streams of loopwright serve (${figures.clients} clients on one session; ${figures.turns} turns of ${figures.calls} tool calls and a streamed reply, ${figures.eventsPerClient} events a client)`,
    textTable(
      ['figure', 'value'],
      [
        ['events/s delivered, live (all clients)', String(figures.liveEventsPerSecond)],
        ["largest gap between clients at a turn's end", `${figures.liveEndSpreadMs} ms`],
        ['events/s delivered, all clients resuming from the first event', String(figures.replayEventsPerSecond)],
        ['time for the last of them to get everything', `${figures.replayMs} ms`],
        ['serve RSS, no stream open', bytes(figures.rssIdleBytes)],
        [`serve RSS, ${figures.streams} streams open`, bytes(figures.rssWithStreamsBytes)],
        ['per open stream', bytes(Math.round((figures.rssWithStreamsBytes - figures.rssIdleBytes) / figures.streams))],
      ],
    ),
  ].join('\n');
}
