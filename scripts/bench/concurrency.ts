/**
 * Concurrency: `sessions` sessions at once, each running one turn of a few model calls (200 ms
 * each at the fake model server, every call but the last asking for read_file), all served by one
 * worker in a child process. Per level: wall time against the ideal (iterations x latency, what one
 * session alone would take with a free engine), iterations per second, the worker's CPU time per
 * iteration and its peak RSS.
 */
import { LoopwrightClient } from '../../client/session-client';
import { benchTurnMessage } from './bench-responder';
import type { BenchServer } from './bench-server';
import { withTimeout } from './durable-loop';
import { mapWithLimit, ownCpuMs, range } from './pool';
import { summarize, type SampleSummary } from './stats';
import type { BenchWorkerProcess } from './worker-process';

/** What the concurrency part needs. */
export interface ConcurrencyInput {
  server: BenchServer;
  worker: BenchWorkerProcess;
  /** Task queue the worker polls. */
  taskQueue: string;
  bundlePath: string;
  agentId: string;
  file: string;
  /** Model calls per turn. */
  iterations: number;
  /** Latency of each model call at the fake server. */
  modelLatencyMs: number;
  /** Sessions started at once (the rest wait for a free lane). */
  startParallelism: number;
  /** Called before each level (the bench forgets the fake model's recorded requests there). */
  beforeLevel?(): void;
  progress(line: string): void;
}

/** One level of concurrency. */
export interface ConcurrencyLevel {
  sessions: number;
  iterationsPerSession: number;
  /** iterations x model latency: one session's turn with a free engine. */
  idealMs: number;
  /** First start to last result. */
  wallMs: number;
  wallOverIdeal: number;
  /** First start until the last session was started. */
  startPhaseMs: number;
  /** Each session's start to its result. */
  sessionMs: SampleSummary;
  iterationsPerSecond: number;
  /** Worker process CPU (user + system) over the level. */
  workerCpuMs: number;
  /** Includes each session's start and agent initialisation, spread over its iterations. */
  workerCpuMsPerIteration: number;
  workerPeakRssBytes: number;
  /** CPU over the level of the dev server (absent when the SDK ran it in the bench's process) and of the bench process (client and fake model). */
  serverCpuMs?: number;
  benchCpuMs: number;
  /** False when the peak could not be reset before the level: then it is the peak since the worker started. */
  peakResetBeforeLevel: boolean;
  workerRssAfterBytes: number;
  failures: number;
  firstFailure?: string;
}

/** Goal for the worker's CPU time per iteration. */
export const CPU_PER_ITERATION_TARGET_MS = 5;

let levelCounter = 0;

/** Run `sessions` sessions at once and measure. */
export async function measureConcurrencyLevel(input: ConcurrencyInput, sessions: number, warmup = false): Promise<ConcurrencyLevel> {
  const loopwright = new LoopwrightClient(input.server.client, input.taskQueue);
  const message = benchTurnMessage(input.iterations, input.file);
  const level = ++levelCounter;
  const idealMs = input.iterations * input.modelLatencyMs;
  // Generous: the last sessions queue behind all the others on a two-core machine.
  const timeoutMs = 120_000 + sessions * 300;
  input.beforeLevel?.();
  input.progress(`concurrency${warmup ? ' warm-up' : ''}: ${sessions} sessions at once, ${input.iterations} model calls of ${input.modelLatencyMs} ms each`);

  const peakResetBeforeLevel = input.worker.resetPeak();
  const cpuBefore = input.worker.cpuMs();
  const serverCpuBefore = input.server.cpuMs();
  const benchCpuBefore = ownCpuMs();
  const started = performance.now();
  let lastStarted = started;
  const durations: number[] = [];
  const failures: string[] = [];
  const turns: Promise<void>[] = [];
  await mapWithLimit(range(sessions), input.startParallelism, async (i) => {
    const sessionStarted = performance.now();
    const session = await loopwright.start({
      bundlePath: input.bundlePath,
      agentId: input.agentId,
      workflowId: `bench-concurrency-${process.pid}-${level}-${i}`,
      firstMessage: message,
      oneShot: true,
      maxIterations: input.iterations,
    });
    lastStarted = performance.now();
    turns.push(
      withTimeout(session.result(), timeoutMs, `session ${session.workflowId}`).then(
        (result) => {
          const turn = result.lastTurn;
          if (turn?.status !== 'completed' || turn.iterations !== input.iterations) {
            failures.push(`${session.workflowId}: turn ${turn?.status ?? 'missing'} after ${turn?.iterations ?? 0} iterations`);
          }
          durations.push(performance.now() - sessionStarted);
        },
        (err: unknown) => {
          failures.push(`${session.workflowId}: ${err instanceof Error ? err.message : String(err)}`);
        },
      ),
    );
  });
  await Promise.all(turns);
  const wallMs = performance.now() - started;
  const workerCpuMs = input.worker.cpuMs() - cpuBefore;
  const serverCpuAfter = input.server.cpuMs();
  const benchCpuMs = ownCpuMs() - benchCpuBefore;
  const memory = input.worker.memory();
  const completedIterations = (sessions - failures.length) * input.iterations;
  if (durations.length === 0) throw new Error(`concurrency ${sessions}: every session failed; first: ${failures[0] ?? '?'}`);
  return {
    sessions,
    iterationsPerSession: input.iterations,
    idealMs,
    wallMs,
    wallOverIdeal: wallMs / idealMs,
    startPhaseMs: lastStarted - started,
    sessionMs: summarize(durations),
    iterationsPerSecond: completedIterations / (wallMs / 1000),
    workerCpuMs,
    workerCpuMsPerIteration: workerCpuMs / Math.max(1, completedIterations),
    workerPeakRssBytes: memory.peakRssBytes,
    ...(serverCpuBefore !== undefined && serverCpuAfter !== undefined ? { serverCpuMs: serverCpuAfter - serverCpuBefore } : {}),
    benchCpuMs,
    peakResetBeforeLevel,
    workerRssAfterBytes: memory.rssBytes,
    failures: failures.length,
    ...(failures.length > 0 ? { firstFailure: failures[0] } : {}),
  };
}

/** The concurrency part: its worker and its levels. */
export interface ConcurrencyFigures {
  worker: WorkerFacts;
  modelLatencyMs: number;
  startParallelism: number;
  /** Sessions of the unreported warm-up level run first on the fresh worker. */
  warmupSessions: number;
  levels: ConcurrencyLevel[];
}

/** What the report says about a child worker. */
export interface WorkerFacts {
  startupMs: number;
  /** The Loopwright settings the bench passed (the worker may not honour all of them yet). */
  env: Record<string, string>;
  /** RSS right after it started polling. */
  rssAtStartBytes: number;
}

/** Describe `worker` for the report (only the LOOPWRIGHT_* settings, no addresses or keys). */
export function workerFacts(worker: BenchWorkerProcess, rssAtStartBytes: number): WorkerFacts {
  return {
    startupMs: worker.startupMs,
    env: Object.fromEntries(Object.entries(worker.env).filter(([key]) => key.startsWith('LOOPWRIGHT_') && key !== 'LOOPWRIGHT_TASK_QUEUE')),
    rssAtStartBytes,
  };
}

/** Warm the worker up with `warmupSessions`, then measure each level in turn. */
export async function measureConcurrency(input: ConcurrencyInput, levels: readonly number[], warmupSessions: number, rssAtStartBytes: number): Promise<ConcurrencyFigures> {
  if (warmupSessions > 0) {
    await measureConcurrencyLevel(input, warmupSessions, true);
  }
  const measured: ConcurrencyLevel[] = [];
  for (const sessions of levels) measured.push(await measureConcurrencyLevel(input, sessions));
  return {
    worker: workerFacts(input.worker, rssAtStartBytes),
    modelLatencyMs: input.modelLatencyMs,
    startParallelism: input.startParallelism,
    warmupSessions,
    levels: measured,
  };
}
