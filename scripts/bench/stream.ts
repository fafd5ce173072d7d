/**
 * Live output (streamed replies, `modelSettings: { stream: true }`): what it costs and how soon a
 * reader sees the reply. One Loopwright worker in this process on the bench's dev server, and a
 * fake model in this process answering every call with the same text of about 2,000 characters,
 * streamed 8 characters every 20 ms (about 5 s a reply) when asked to stream. A fresh session per
 * turn, one reply per turn.
 *
 * 1. First character: a reader in this process follows each streamed turn (`SessionHandle.follow()`,
 *    polling every 25 ms, started before the message is sent); the time from the fake server
 *    writing the reply's first content chunk (RecordedRequest.firstChunkAt) to the reader's first
 *    `text` event. The path in between: the model activity's openai client, the heartbeat with the
 *    reply so far, the dev server, the reader's state query and `describe()`.
 * 2. History: the run's history after a streamed turn against an unstreamed one (the stream goes
 *    through heartbeats, which history does not keep), counted as the history part counts it.
 * 3. CPU per reply: process.cpuUsage() (every thread of this process: the worker, its Core threads,
 *    and also the fake server and the client) around streamed and unstreamed turns without a reader,
 *    in alternating order, with the dev server's CPU beside it; and, to tell the worker's share, this
 *    process at rest and the fake server streaming the same reply to a bare reader (node:http).
 */
import http from 'node:http';
import { LoopwrightClient, type SessionHandle } from '../../client/session-client';
import { startFakeOpenAI, text, type FakeOpenAI } from '../../fake-model/server';
import { createWorker } from '../../worker/create-worker';
import type { BenchServer } from './bench-server';
import type { CleanupStack } from './cleanup-stack';
import { benchWorkflowBundle, waitUntilReady, withTimeout } from './durable-loop';
import { measureHistory, type HistoryFigures } from './history-size';
import { median, summarize, type SampleSummary } from './stats';
import { replyText, summarizeReader, type TimedEvent } from './stream-reader';
import { bytes, ms, textTable } from './text-table';

/** Goal: the reader's first character at most this long after the server's first chunk, at the median. */
export const FIRST_TEXT_TARGET_MS = 150;
/** Goal: a streamed turn's history at most this many times the unstreamed one's (protobuf bytes). */
export const STREAM_HISTORY_RATIO_TARGET = 1.5;

export interface StreamBenchOptions {
  server: BenchServer;
  bundlePath: string;
  agentId: string;
  model: string;
  turnTimeoutMs: number;
  /** Streamed turns followed by a reader (default 20). */
  replies?: number;
  /** Rounds of one streamed and one unstreamed turn without a reader, for CPU (default 5). */
  cpuRounds?: number;
  replyChars?: number;
  chunkChars?: number;
  intervalMs?: number;
  /** The reader's `follow()` interval (default 25 ms). */
  followIntervalMs?: number;
  progress?: (line: string) => void;
}

/** CPU and wall time of one kind of turn, per reply (ms). */
export interface StreamCpuPath {
  wallMs: SampleSummary;
  cpuMs: SampleSummary;
  /** The dev server's CPU over the same turns (undefined where /proc cannot tell). */
  serverCpuMs?: SampleSummary;
}

export interface StreamFigures {
  replyChars: number;
  chunkChars: number;
  intervalMs: number;
  /** Chunks the server writes per streamed reply (role, content pieces, finish, usage). */
  chunksPerReply: number;
  followIntervalMs: number;
  /** Server's first content chunk to the reader's first character, over the followed replies. */
  firstText: SampleSummary;
  /** Followed replies whose first text came while the reply was written (from the heartbeat). */
  liveReplies: number;
  /** `text` events per followed reply before `reply_done`. */
  liveTextEvents: SampleSummary;
  /** Followed replies the reader put together exactly as the turn's response. */
  exactReplies: number;
  restarts: number;
  /** Streamed turn wall time, send to result, of the followed turns. */
  streamedTurnMs: SampleSummary;
  history: { streamed: HistoryFigures; unstreamed: HistoryFigures; turns: { streamed: number; unstreamed: number }; protoRatio: number; eventsRatio: number };
  cpu: {
    rounds: number;
    unstreamed: StreamCpuPath;
    streamed: StreamCpuPath;
    /** Median of the round-by-round differences, streamed - unstreamed (this process). */
    pairedDifferenceMs: number;
    /** This process and the dev server at rest (worker polling), CPU ms per second. */
    restCpuMsPerSecond: number;
    restServerCpuMsPerSecond?: number;
    /** The fake server streaming the reply to a bare reader in this process (node:http, bytes discarded; no worker involved). */
    bareStream: { wallMs: SampleSummary; cpuMs: SampleSummary };
  };
}

const cpuNowMs = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** Runs the turns; the fake model and the worker are stopped on `cleanup` (and, when all went well, at the end). */
export async function measureStream(options: StreamBenchOptions, cleanup: CleanupStack): Promise<StreamFigures> {
  const replies = options.replies ?? 20;
  const cpuRounds = options.cpuRounds ?? 5;
  const replyChars = options.replyChars ?? 2000;
  const chunkChars = options.chunkChars ?? 8;
  const intervalMs = options.intervalMs ?? 20;
  const followIntervalMs = options.followIntervalMs ?? 25;
  const reply = replyText(replyChars);
  const fake = await startFakeOpenAI({ responder: () => text(reply), streaming: { chunkChars, intervalMs } });
  cleanup.push('stream fake model server', () => fake.close());
  options.progress?.('stream: starting a Loopwright worker in this process');
  const taskQueue = `loopwright-bench-stream-${process.pid}`;
  const [workflowBundle, connection] = await Promise.all([benchWorkflowBundle(), options.server.nativeConnection()]);
  const worker = await createWorker({
    connection,
    taskQueue,
    workflowBundle,
    activityOptions: { model: { baseURL: fake.baseURL, apiKey: 'bench-key', defaultModel: options.model } },
  });
  const running = worker.run();
  const stopWorker = async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
  };
  cleanup.push('stream worker', stopWorker);
  const loopwright = new LoopwrightClient(options.server.client, taskQueue);
  const serverCpu = () => options.server.cpuMs();

  /** A fresh session, initialised, and the number of its next turn. */
  const ready = async (stream: boolean) => {
    const session = await loopwright.start({
      bundlePath: options.bundlePath,
      agentId: options.agentId,
      context: { window: 10_000_000 },
      ...(stream ? { modelSettings: { stream: true } } : {}),
    });
    await waitUntilReady(session, options.turnTimeoutMs);
    return { session, turn: (await session.state()).turn + 1 };
  };
  /** Send the message, timed; checks the turn made one call that answered the reply (streamed when asked). */
  const send = async (session: SessionHandle, stream: boolean) => {
    const before = fake.requests.length;
    const wallStarted = performance.now();
    const cpuStarted = cpuNowMs();
    const serverStarted = serverCpu();
    const result = await withTimeout(session.send('stream bench: answer'), options.turnTimeoutMs, 'stream bench turn');
    const cpuMs = cpuNowMs() - cpuStarted;
    const serverEnded = serverCpu();
    const wallMs = performance.now() - wallStarted;
    const calls = fake.requests.slice(before);
    const streamed = calls.filter((r) => r.body?.stream === true);
    if (!result.success || result.response !== reply || calls.length !== 1 || streamed.length !== (stream ? 1 : 0)) {
      throw new Error(
        `stream bench turn (stream ${stream}) did not get the one reply: ${result.status}, ${calls.length} model calls (${streamed.length} streamed), ` +
          `response of ${result.response?.length ?? 0} chars${result.error ? `: ${result.error}` : ''}`,
      );
    }
    const serverCpuMs = serverStarted === undefined || serverEnded === undefined ? undefined : serverEnded - serverStarted;
    return { wallMs, cpuMs, serverCpuMs, request: calls[0]! };
  };
  const history = async (session: SessionHandle) => measureHistory(await session.workflow.fetchHistory());
  const finish = async (session: SessionHandle) => {
    await session.end();
    await withTimeout(session.result(), options.turnTimeoutMs, 'session end');
  };

  /** A streamed turn with a reader following it from before the message. */
  const followedTurn = async () => {
    const { session, turn } = await ready(true);
    const abort = new AbortController();
    const reading = (async () => {
      const events: TimedEvent[] = [];
      for await (const event of session.follow({ turn, intervalMs: followIntervalMs, signal: abort.signal })) events.push({ at: Date.now(), event });
      return events;
    })();
    try {
      const sent = await send(session, true);
      const seen = summarizeReader(await withTimeout(reading, options.turnTimeoutMs, 'stream bench reader'));
      if (seen.firstTextAt === undefined || sent.request.firstChunkAt === undefined || !seen.ended) {
        throw new Error(`stream bench reader saw no text or no end (first chunk at ${sent.request.firstChunkAt}, ${seen.textEvents} text events)`);
      }
      const figures = { ...sent, seen, firstTextMs: seen.firstTextAt - sent.request.firstChunkAt, history: await history(session) };
      await finish(session);
      return figures;
    } finally {
      abort.abort();
    }
  };
  /** A turn without a reader, for CPU. */
  const plainTurn = async (stream: boolean) => {
    const { session } = await ready(stream);
    const sent = await send(session, stream);
    const figures = { ...sent, history: await history(session) };
    await finish(session);
    return figures;
  };

  options.progress?.(`stream: 1 warm-up, then ${replies} streamed turns of ${replyChars} characters (${chunkChars} every ${intervalMs} ms), followed by a reader`);
  await followedTurn();
  await plainTurn(false);
  const followed = [];
  for (let i = 0; i < replies; i++) followed.push(await followedTurn());

  options.progress?.(`stream: ${cpuRounds} rounds of an unstreamed and a streamed turn without a reader, for CPU; this process at rest; the bare stream`);
  const cpuTurns: Record<'streamed' | 'unstreamed', Awaited<ReturnType<typeof plainTurn>>[]> = { streamed: [], unstreamed: [] };
  for (let i = 0; i < cpuRounds; i++) {
    // Alternate which goes first.
    for (const stream of i % 2 === 0 ? [false, true] : [true, false]) cpuTurns[stream ? 'streamed' : 'unstreamed'].push(await plainTurn(stream));
  }
  const rest = await atRest(2_000, serverCpu);
  // One untimed run first: the first request of a reader pays for loading and warming up its code.
  const bare = [];
  for (let i = 0; i <= Math.min(3, cpuRounds); i++) {
    const run = await bareStream(fake, options.model);
    if (i > 0) bare.push(run);
  }
  await stopWorker();
  await fake.close();

  const cpuPath = (turns: { wallMs: number; cpuMs: number; serverCpuMs?: number }[]): StreamCpuPath => {
    const server = turns.map((t) => t.serverCpuMs).filter((v): v is number => v !== undefined);
    return {
      wallMs: summarize(turns.map((t) => t.wallMs)),
      cpuMs: summarize(turns.map((t) => t.cpuMs)),
      ...(server.length === turns.length ? { serverCpuMs: summarize(server) } : {}),
    };
  };
  const streamedHistories = [...followed, ...cpuTurns.streamed].map((t) => t.history);
  const unstreamedHistories = cpuTurns.unstreamed.map((t) => t.history);
  const streamedHistory = medianHistory(streamedHistories);
  const unstreamedHistory = medianHistory(unstreamedHistories);
  return {
    replyChars,
    chunkChars,
    intervalMs,
    chunksPerReply: followed[0]?.request.streamedChunks ?? 0,
    followIntervalMs,
    firstText: summarize(followed.map((t) => t.firstTextMs)),
    liveReplies: followed.filter((t) => t.seen.firstTextLive).length,
    liveTextEvents: summarize(followed.map((t) => t.seen.liveTextEvents)),
    exactReplies: followed.filter((t) => t.seen.joined === reply).length,
    restarts: followed.reduce((sum, t) => sum + t.seen.restarts, 0),
    streamedTurnMs: summarize(followed.map((t) => t.wallMs)),
    history: {
      streamed: streamedHistory,
      unstreamed: unstreamedHistory,
      turns: { streamed: streamedHistories.length, unstreamed: unstreamedHistories.length },
      protoRatio: streamedHistory.protoBytes / unstreamedHistory.protoBytes,
      eventsRatio: streamedHistory.events / unstreamedHistory.events,
    },
    cpu: {
      rounds: cpuRounds,
      unstreamed: cpuPath(cpuTurns.unstreamed),
      streamed: cpuPath(cpuTurns.streamed),
      pairedDifferenceMs: median(cpuTurns.streamed.map((t, i) => t.cpuMs - cpuTurns.unstreamed[i]!.cpuMs)),
      restCpuMsPerSecond: rest.cpuMsPerSecond,
      ...(rest.serverCpuMsPerSecond === undefined ? {} : { restServerCpuMsPerSecond: rest.serverCpuMsPerSecond }),
      bareStream: { wallMs: summarize(bare.map((b) => b.wallMs)), cpuMs: summarize(bare.map((b) => b.cpuMs)) },
    },
  };
}

/** The history with the median protobuf size (the histories of one kind differ by a few bytes at most). */
function medianHistory(histories: HistoryFigures[]): HistoryFigures {
  const sorted = [...histories].sort((a, b) => a.protoBytes - b.protoBytes);
  return sorted[(sorted.length - 1) >> 1]!;
}

/** CPU of this process and of the dev server per second while nothing runs but the worker's polling. */
async function atRest(forMs: number, serverCpu: () => number | undefined) {
  const cpuStarted = cpuNowMs();
  const serverStarted = serverCpu();
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, forMs));
  const seconds = (performance.now() - started) / 1000;
  const serverEnded = serverCpu();
  return {
    cpuMsPerSecond: (cpuNowMs() - cpuStarted) / seconds,
    serverCpuMsPerSecond: serverStarted === undefined || serverEnded === undefined ? undefined : (serverEnded - serverStarted) / seconds,
  };
}

/** The fake server streams the reply to a bare reader (node:http, the bytes discarded): its cost without any worker. */
async function bareStream(fake: FakeOpenAI, model: string) {
  const started = performance.now();
  const cpuStarted = cpuNowMs();
  const url = new URL(`${fake.baseURL}/chat/completions`);
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'stream bench: answer' }], stream: true, stream_options: { include_usage: true } });
  const received = await new Promise<{ status: number; bytes: number }>((resolve, reject) => {
    const request = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json' } }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, bytes }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
  if (received.status !== 200 || received.bytes === 0) throw new Error(`stream bench: the bare stream failed (${received.status}, ${received.bytes} bytes)`);
  return { wallMs: performance.now() - started, cpuMs: cpuNowMs() - cpuStarted };
}

/** The figures as text. */
export function formatStream(f: StreamFigures): string {
  const met = (ok: boolean) => (ok ? 'met' : 'not met');
  const row = (label: string, s: SampleSummary, digits: number) => [label, ms(s.median, digits), ms(s.p95, digits), ms(s.min, digits), ms(s.max, digits)];
  const { cpu } = f;
  const restOverWall = cpu.restCpuMsPerSecond * ((cpu.streamed.wallMs.median - cpu.unstreamed.wallMs.median) / 1000);
  const bareNet = cpu.bareStream.cpuMs.median - cpu.restCpuMsPerSecond * (cpu.bareStream.wallMs.median / 1000);
  const difference = cpu.streamed.cpuMs.median - cpu.unstreamed.cpuMs.median;
  const server = (p: StreamCpuPath) => (p.serverCpuMs ? ms(p.serverCpuMs.median, 0) : '-');
  const history = (label: string, h: HistoryFigures, turns: number) => [label, String(turns), String(h.events), bytes(h.protoBytes), bytes(h.jsonBytes), bytes(h.payloadBytes)];
  return [
    `8. Live output: a reply of ${bytes(f.replyChars)} characters streamed ${f.chunkChars} characters every ${f.intervalMs} ms by the fake model` +
      ` (${f.chunksPerReply} chunks, a streamed turn ${ms(f.streamedTurnMs.median / 1000, 2)} s), one reply per turn, a fresh session per turn, worker in this process`,
    `   First character at a reader: follow() in this process (every ${f.followIntervalMs} ms, started before the message), ms from the fake server writing` +
      ` the first content chunk to the reader's first text event, over ${f.firstText.runs} replies`,
    textTable(['figure', 'median', 'p95', 'min', 'max'], [row('first character, ms', f.firstText, 1), row('text events while written, per reply', f.liveTextEvents, 0)]),
    `   Target: <= ${FIRST_TEXT_TARGET_MS} ms at the median (${met(f.firstText.median <= FIRST_TEXT_TARGET_MS)}). First text while the reply was written:` +
      ` ${f.liveReplies}/${f.firstText.runs} replies; joined exactly into the response: ${f.exactReplies}/${f.firstText.runs}; restarts: ${f.restarts}.`,
    '',
    `   History of the run after the turn (initialisation + one one-reply turn, fetched before the session ends; median of the turns of each kind)`,
    textTable(
      ['turn', 'turns', 'events', 'protobuf bytes', 'JSON bytes', 'payload bytes'],
      [
        history('unstreamed', f.history.unstreamed, f.history.turns.unstreamed),
        history('streamed', f.history.streamed, f.history.turns.streamed),
        ['streamed / unstreamed', '', `${f.history.eventsRatio.toFixed(2)}x`, `${f.history.protoRatio.toFixed(2)}x`, '', ''],
      ],
    ),
    `   Target: streamed within ${STREAM_HISTORY_RATIO_TARGET}x of unstreamed (protobuf bytes): ${met(f.history.protoRatio <= STREAM_HISTORY_RATIO_TARGET)}.`,
    '',
    `   CPU per reply (no reader): ${cpu.rounds} unstreamed and ${cpu.rounds} streamed turns in alternating order; ms, median (min..max)`,
    textTable(
      ['turn', 'wall ms', 'this process CPU ms*', 'dev server CPU ms'],
      [
        ['unstreamed', ms(cpu.unstreamed.wallMs.median, 0), `${ms(cpu.unstreamed.cpuMs.median, 1)} (${ms(cpu.unstreamed.cpuMs.min, 1)}..${ms(cpu.unstreamed.cpuMs.max, 1)})`, server(cpu.unstreamed)],
        ['streamed', ms(cpu.streamed.wallMs.median, 0), `${ms(cpu.streamed.cpuMs.median, 1)} (${ms(cpu.streamed.cpuMs.min, 1)}..${ms(cpu.streamed.cpuMs.max, 1)})`, server(cpu.streamed)],
        [
          'streamed - unstreamed',
          '',
          `${ms(difference, 1)} (round by round: ${ms(cpu.pairedDifferenceMs, 1)})`,
          cpu.streamed.serverCpuMs && cpu.unstreamed.serverCpuMs ? ms(cpu.streamed.serverCpuMs.median - cpu.unstreamed.serverCpuMs.median, 0) : '-',
        ],
      ],
    ),
    `   *  process.cpuUsage() of this process, all threads: the worker (activities, workflow tasks, Core), and also the fake model server and the bench's client,` +
      ` which run in this process too. Of the difference, about ${ms(restOverWall, 1)} ms is this process at rest over the longer wall time` +
      ` (${ms(cpu.restCpuMsPerSecond, 1)} ms CPU/s with nothing running${cpu.restServerCpuMsPerSecond === undefined ? '' : `; dev server ${ms(cpu.restServerCpuMsPerSecond, 1)} ms/s`}),` +
      ` and about ${ms(bareNet, 1)} ms the fake server writing the stream to a bare reader (node:http, bytes discarded: ${ms(cpu.bareStream.cpuMs.median, 1)} ms over` +
      ` ${ms(cpu.bareStream.wallMs.median, 0)} ms, less rest), which leaves about ${ms(difference - restOverWall - bareNet, 1)} ms per streamed reply` +
      ` for the worker: reading, parsing and joining the chunks, the heartbeats.`,
  ].join('\n');
}
