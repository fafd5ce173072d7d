/**
 * Scale on a real cluster against the dev server (`npm run bench -- --only cluster`): on each
 * server in turn (the PostgreSQL-backed cluster of scripts/cluster, then a file-backed dev server
 * as `loopwright server` runs it), four `loopwright worker` processes share one task queue; many
 * sessions are started and left waiting (idle), a thousand more are started and initialised, and
 * then all of those get a message at once: a turn of a few model calls of 200 ms each (the active
 * sessions). Per server: how fast sessions start, the CPU of workers and server at rest, turns per
 * second, each turn's latency (send to reply), worker and server CPU per model iteration, and the
 * database's growth per session.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { LoopwrightClient, type SessionHandle } from '../../client/session-client';
import { spawnDevServer } from '../../client/server/dev-server';
import { findTemporalCli } from '../../client/server/find-temporal';
import { startFakeOpenAI } from '../../fake-model/server';
import { freePort, provisionClusterTools, TemporalCluster } from '../cluster/temporal-cluster';
import { benchTurnMessage, delayedBenchResponder } from './bench-responder';
import type { CleanupStack } from './cleanup-stack';
import { waitUntilInitialised } from './idle-sessions';
import { mapWithLimit, range, sleep } from './pool';
import { processCpuMs, processTreeCpuMs } from './proc-stats';
import { quantile, summarize, type SampleSummary } from './stats';
import { bytes, ms, textTable } from './text-table';
import { startWorkerProcess, type BenchWorkerProcess } from './worker-process';

/** What the cluster part is asked for. */
export interface ClusterScaleInput {
  bundlePath: string;
  agentId: string;
  /** A file the active turns read (a path the bundle resolves). */
  file: string;
  model: string;
  idleSessions: number;
  activeSessions: number;
  workers: number;
  /** Model calls per active turn, each but the last asking for read_file. */
  iterations: number;
  modelLatencyMs: number;
  /** How long workers and server are watched with every session waiting. */
  restSeconds: number;
  /** Sessions being started at once. */
  startParallelism: number;
  progress(line: string): void;
}

/** The figures of one server. */
export interface ScaleFigures {
  server: 'cluster' | 'dev server';
  /** What the server is: processes and persistence. */
  describe: string;
  workers: number;
  /** Idle plus active sessions started and initialised, and how fast. */
  started: number;
  rampMs: number;
  sessionsPerSecond: number;
  /** CPU over the rest period with every session waiting: all workers together, and the server (with PostgreSQL). */
  rest: { seconds: number; workerCpuMs: number; serverCpuMs: number };
  active: {
    sessions: number;
    iterationsPerTurn: number;
    /** The first send to the last reply. */
    wallMs: number;
    turnsPerSecond: number;
    iterationsPerSecond: number;
    /** Each turn from its send to its reply. */
    turnMs: SampleSummary;
    turnP99Ms: number;
    idealTurnMs: number;
    workerCpuMsPerIteration: number;
    serverCpuMsPerIteration: number;
    failures: number;
    firstFailure?: string;
  };
  /** The database on disk before the sessions and after them, and the growth per session. */
  databaseBytesBefore: number;
  databaseBytesAfter: number;
  databaseBytesPerSession: number;
  /** Peak RSS of the busiest worker. */
  workerPeakRssBytes: number;
}

export interface ClusterScaleFigures {
  idleSessions: number;
  activeSessions: number;
  workers: number;
  modelLatencyMs: number;
  servers: ScaleFigures[];
}

/** One server under test: its address, its CPU so far, its database's size on disk, how to stop it. */
interface Target {
  name: ScaleFigures['server'];
  describe: string;
  address: string;
  cpuMs(): number;
  databaseBytes(): number;
  stop(): Promise<void>;
}

/** Longest wait for one active turn, on a loaded two-core machine. */
const TURN_TIMEOUT_MS = 15 * 60_000;

/** Run the part on the cluster, then on the dev server. */
export async function measureClusterScale(input: ClusterScaleInput, cleanup: CleanupStack): Promise<ClusterScaleFigures> {
  const fake = await startFakeOpenAI({ responder: delayedBenchResponder(input.modelLatencyMs) });
  cleanup.push('cluster part: fake model server', () => fake.close());
  const servers: ScaleFigures[] = [];
  for (const start of [startClusterTarget, startDevTarget]) {
    const target = await start(input, cleanup);
    try {
      servers.push(await measureTarget(input, target, fake.baseURL, cleanup));
    } finally {
      await target.stop();
    }
    // The fake keeps every request; nothing here reads them.
    fake.reset();
    fake.setResponder(delayedBenchResponder(input.modelLatencyMs));
  }
  return { idleSessions: input.idleSessions, activeSessions: input.activeSessions, workers: input.workers, modelLatencyMs: input.modelLatencyMs, servers };
}

async function startClusterTarget(input: ClusterScaleInput, cleanup: CleanupStack): Promise<Target> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-bench-cluster-'));
  const cluster = new TemporalCluster(dir);
  const stop = async () => {
    await cluster.destroy().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  cleanup.push('cluster part: the cluster', stop);
  input.progress('cluster: starting the cluster (PostgreSQL, frontend, two history hosts, matching, worker)');
  await cluster.start(provisionClusterTools(), (line) => input.progress(`cluster: ${line}`));
  const pids = () => cluster.status().flatMap((p) => (p.pid !== undefined && p.running ? [{ name: p.name, pid: p.pid }] : []));
  return {
    name: 'cluster',
    describe: 'Temporal 1.32 from its Go module: frontend, 2 history hosts (8 shards), matching, worker service; PostgreSQL 15 for persistence and SQL visibility',
    address: cluster.address,
    // PostgreSQL's backends are its postmaster's children: the tree's CPU, reaped children included.
    cpuMs: () => pids().reduce((sum, p) => sum + (p.name === 'postgres' ? processTreeCpuMs(p.pid) : processCpuMs(p.pid)), 0),
    databaseBytes: () => folderBytes(path.join(cluster.postgres.dataDir, 'base')),
    stop,
  };
}

async function startDevTarget(input: ClusterScaleInput, cleanup: CleanupStack): Promise<Target> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-bench-dev-'));
  input.progress('cluster: starting a file-backed dev server, as `loopwright server` runs it');
  const server = await spawnDevServer({ cliPath: findTemporalCli().path, stateDir: dir, port: await freePort(), detached: false });
  const stop = async () => {
    await server.stop().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  cleanup.push('cluster part: the dev server', stop);
  return {
    name: 'dev server',
    describe: 'temporal server start-dev, one process, SQLite file (write-ahead log, no fsync per commit)',
    address: server.address,
    cpuMs: () => processCpuMs(server.pid),
    databaseBytes: () => ['', '-wal'].reduce((sum, suffix) => sum + fileBytes(server.dbFile + suffix), 0),
    stop,
  };
}

async function measureTarget(input: ClusterScaleInput, target: Target, modelBaseURL: string, cleanup: CleanupStack): Promise<ScaleFigures> {
  const tag = target.name === 'cluster' ? 'cluster' : 'dev';
  const taskQueue = `loopwright-bench-scale-${tag}-${process.pid}`;
  input.progress(`cluster: ${target.name}: starting ${input.workers} worker processes`);
  const workers: BenchWorkerProcess[] = [];
  for (let i = 0; i < input.workers; i++) {
    workers.push(
      await startWorkerProcess({ temporalAddress: target.address, taskQueue, modelBaseURL, model: input.model, env: { LOOPWRIGHT_ACTIVITY_SLOTS: '1000' }, startTimeoutMs: 300_000 }, cleanup),
    );
  }
  const workerCpu = () => workers.reduce((sum, w) => sum + w.cpuMs(), 0);
  const connection = await Connection.connect({ address: target.address });
  try {
    const client = new Client({ connection });
    const loopwright = new LoopwrightClient(client, taskQueue);
    const databaseBytesBefore = target.databaseBytes();

    // Every session started and initialised: the idle ones first, then the ones that will get a message.
    const total = input.idleSessions + input.activeSessions;
    const active: SessionHandle[] = [];
    let ready = 0;
    let lastReport = performance.now();
    const rampStarted = performance.now();
    await mapWithLimit(range(total), input.startParallelism, async (i) => {
      const session = await loopwright.start({ bundlePath: input.bundlePath, agentId: input.agentId, workflowId: `bench-scale-${tag}-${process.pid}-${i}` });
      const runId = (session.workflow as Partial<WorkflowHandleWithFirstExecutionRunId>).firstExecutionRunId;
      await waitUntilInitialised(client, session.workflowId, runId, 600_000);
      if (i >= input.idleSessions) active.push(session);
      ready++;
      if (performance.now() - lastReport > 30_000) {
        lastReport = performance.now();
        for (const w of workers) w.assertAlive();
        input.progress(`cluster: ${target.name}: ${ready}/${total} sessions ready after ${((lastReport - rampStarted) / 1000).toFixed(0)} s`);
      }
    });
    const rampMs = performance.now() - rampStarted;

    input.progress(`cluster: ${target.name}: ${total} sessions waiting; watching for ${input.restSeconds} s`);
    const restWorker = workerCpu();
    const restServer = target.cpuMs();
    const restStarted = performance.now();
    await sleep(input.restSeconds * 1000);
    const rest = { seconds: (performance.now() - restStarted) / 1000, workerCpuMs: workerCpu() - restWorker, serverCpuMs: target.cpuMs() - restServer };

    input.progress(`cluster: ${target.name}: a message to each of ${active.length} sessions at once (${input.iterations} model calls of ${input.modelLatencyMs} ms)`);
    for (const w of workers) w.resetPeak();
    const message = benchTurnMessage(input.iterations, input.file);
    const cpuBefore = { worker: workerCpu(), server: target.cpuMs() };
    const durations: number[] = [];
    const failures: string[] = [];
    const activeStarted = performance.now();
    await Promise.all(
      active.map(async (session) => {
        const sent = performance.now();
        try {
          const turn = await withDeadline(session.send(message), TURN_TIMEOUT_MS, session.workflowId);
          if (turn.status !== 'completed' || turn.iterations !== input.iterations) failures.push(`${session.workflowId}: turn ${turn.status} after ${turn.iterations} iterations`);
          else durations.push(performance.now() - sent);
        } catch (err) {
          failures.push(`${session.workflowId}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }),
    );
    const wallMs = performance.now() - activeStarted;
    const iterations = durations.length * input.iterations;
    const workerCpuMs = workerCpu() - cpuBefore.worker;
    const serverCpuMs = target.cpuMs() - cpuBefore.server;
    if (durations.length === 0) throw new Error(`cluster: ${target.name}: every active turn failed; first: ${failures[0] ?? '?'}`);
    const databaseBytesAfter = target.databaseBytes();
    return {
      server: target.name,
      describe: target.describe,
      workers: input.workers,
      started: total,
      rampMs,
      sessionsPerSecond: total / (rampMs / 1000),
      rest,
      active: {
        sessions: active.length,
        iterationsPerTurn: input.iterations,
        wallMs,
        turnsPerSecond: durations.length / (wallMs / 1000),
        iterationsPerSecond: iterations / (wallMs / 1000),
        turnMs: summarize(durations),
        turnP99Ms: quantile(durations, 0.99),
        idealTurnMs: input.iterations * input.modelLatencyMs,
        workerCpuMsPerIteration: workerCpuMs / iterations,
        serverCpuMsPerIteration: serverCpuMs / iterations,
        failures: failures.length,
        ...(failures.length > 0 ? { firstFailure: failures[0] } : {}),
      },
      databaseBytesBefore,
      databaseBytesAfter,
      databaseBytesPerSession: (databaseBytesAfter - databaseBytesBefore) / total,
      workerPeakRssBytes: Math.max(...workers.map((w) => w.memory().peakRssBytes)),
    };
  } finally {
    await connection.close();
    await Promise.all(workers.map((w) => w.stop()));
  }
}

function withDeadline<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no reply within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

function fileBytes(file: string): number {
  return fs.existsSync(file) ? fs.statSync(file).size : 0;
}

/** Bytes of the files under `dir` (`du`; PostgreSQL's data folder is its own user's, readable by root and by it). */
function folderBytes(dir: string): number {
  const out = execFileSync('du', ['-sb', dir], { encoding: 'utf8', timeout: 60_000 });
  return Number(out.split(/\s/)[0]);
}

/** The part's table: the cluster's figures beside the dev server's. */
export function formatClusterScale(f: ClusterScaleFigures): string {
  const [a, b] = f.servers;
  const column = (s: ScaleFigures | undefined, pick: (s: ScaleFigures) => string) => (s ? pick(s) : '-');
  const rows: [string, (s: ScaleFigures) => string][] = [
    ['sessions started and initialised', (s) => `${s.started} in ${(s.rampMs / 1000).toFixed(0)} s (${s.sessionsPerSecond.toFixed(1)}/s)`],
    [
      'CPU at rest, all sessions waiting: workers / server',
      (s) => `${((100 * s.rest.workerCpuMs) / (s.rest.seconds * 1000)).toFixed(1)} % / ${((100 * s.rest.serverCpuMs) / (s.rest.seconds * 1000)).toFixed(1)} % of a core`,
    ],
    ['active turns per second', (s) => s.active.turnsPerSecond.toFixed(1)],
    ['model iterations per second', (s) => s.active.iterationsPerSecond.toFixed(1)],
    ['turn latency p50 / p99 (ideal), ms', (s) => `${ms(s.active.turnMs.median, 0)} / ${ms(s.active.turnP99Ms, 0)} (${ms(s.active.idealTurnMs, 0)})`],
    ['worker CPU per iteration, all workers (ms)', (s) => ms(s.active.workerCpuMsPerIteration, 1)],
    ['server CPU per iteration (ms)', (s) => ms(s.active.serverCpuMsPerIteration, 1)],
    ['database growth per session', (s) => `${bytes(Math.round(s.databaseBytesPerSession))} bytes`],
    ['busiest worker peak RSS, active phase', (s) => `${(s.workerPeakRssBytes / 2 ** 20).toFixed(0)} MiB`],
    ['failed turns', (s) => `${s.active.failures}${s.active.firstFailure ? ` (first: ${s.active.firstFailure})` : ''}`],
  ];
  return [
    `Cluster: ${f.idleSessions} idle and ${f.activeSessions} active sessions across ${f.workers} worker processes; each active session gets one message, a turn of ${a?.active.iterationsPerTurn ?? '?'} model calls of ${f.modelLatencyMs} ms, all at once`,
    ...f.servers.map((s) => `  ${s.server}: ${s.describe}`),
    textTable(
      ['measure', a?.server ?? 'cluster', b?.server ?? 'dev server'],
      rows.map(([label, pick]) => [label, column(a, pick), column(b, pick)]),
    ),
  ].join('\n');
}
