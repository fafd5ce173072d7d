/**
 * Batch runs (`agentBatch`): a batch of 1,000 one-shot sessions (each one model call, a fake model
 * with zero latency in this process) read from a JSONL file, served by one worker process and then
 * by two on the same task queue (each a `loopwright worker` child process). Wall time from start to
 * summary, sessions per second, and the CPU the workers and the dev server spent per session.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BatchSummary } from '../../common/batch-types';
import { LoopwrightClient } from '../../client/session-client';
import { startFakeOpenAI, text } from '../../fake-model/server';
import type { BenchServer } from './bench-server';
import type { CleanupStack } from './cleanup-stack';
import { textTable } from './text-table';
import { startWorkerProcess } from './worker-process';
import { type BatchKillFigures, formatBatchKill } from './batch-kill';

export interface BatchBenchOptions {
  server: BenchServer;
  bundlePath: string;
  agentId: string;
  model: string;
  /** Sessions in the batch (default 1,000). */
  items?: number;
  /** Sessions at once (default 32). */
  concurrency?: number;
  /** Worker process counts to measure (default 1 and 2). */
  workerCounts?: number[];
  /** Longest wait for one batch. */
  timeoutMs?: number;
  progress?: (line: string) => void;
}

/** One batch, on `workers` worker processes. */
export interface BatchRunFigures {
  workers: number;
  items: number;
  concurrency: number;
  ok: number;
  runs: number;
  wallSeconds: number;
  sessionsPerSecond: number;
  /** CPU of all worker processes over the batch, per session (ms). */
  workerCpuMsPerSession: number;
  /** The dev server's CPU over the batch, per session (ms); undefined where /proc cannot tell. */
  serverCpuMsPerSession?: number;
  /** The model calls the fake server answered (one per session). */
  modelCalls: number;
}

export interface BatchBenchFigures {
  runs: BatchRunFigures[];
  /** The same batch with its worker killed part-way (batch-kill.ts). */
  kill?: BatchKillFigures;
}

export async function measureBatch(options: BatchBenchOptions, cleanup: CleanupStack): Promise<BatchBenchFigures> {
  const items = options.items ?? 1_000;
  const concurrency = options.concurrency ?? 32;
  const fake = await startFakeOpenAI({ responder: () => text('done') });
  cleanup.push('batch fake model', () => fake.close());
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopwright-bench-batch-'));
  cleanup.push('batch temp folder', () => fs.rmSync(dir, { recursive: true, force: true }));
  const runs: BatchRunFigures[] = [];
  for (const workers of options.workerCounts ?? [1, 2]) {
    const taskQueue = `bench-batch-${process.pid}-${workers}`;
    const processes = await Promise.all(
      Array.from({ length: workers }, () =>
        startWorkerProcess({ temporalAddress: options.server.address, taskQueue, modelBaseURL: fake.baseURL, model: options.model, env: { LOOPWRIGHT_ACTIVITY_SLOTS: '200' } }, cleanup),
      ),
    );
    const loopwright = new LoopwrightClient(options.server.client, taskQueue);
    // Warm-up: a few sessions so each worker has loaded everything before the clock starts.
    const warm = path.join(dir, `warm-${workers}.jsonl`);
    fs.writeFileSync(warm, Array.from({ length: 4 * workers }, (_, i) => JSON.stringify(`warm ${i}`)).join('\n'));
    await (await loopwright.startBatch({ bundlePath: options.bundlePath, agentId: options.agentId, inputPath: warm, concurrency: 4 * workers })).result();

    const input = path.join(dir, `items-${workers}.jsonl`);
    fs.writeFileSync(input, Array.from({ length: items }, (_, i) => JSON.stringify({ message: `bench item ${i}`, id: `item-${i}` })).join('\n'));
    const calls = fake.requests.length;
    const cpu = () => processes.reduce((sum, p) => sum + p.cpuMs(), 0);
    const workerCpu = cpu();
    const serverCpu = options.server.cpuMs();
    const started = performance.now();
    const batch = await loopwright.startBatch({ bundlePath: options.bundlePath, agentId: options.agentId, inputPath: input, concurrency });
    const timer = setInterval(() => {
      batch.state().then(
        (s) => options.progress?.(`batch, ${workers} worker(s): ${s.ok + s.failed}/${s.total}`),
        () => undefined,
      );
    }, 10_000);
    let summary: BatchSummary;
    try {
      summary = await withTimeout(batch.result(), options.timeoutMs ?? 15 * 60_000);
    } finally {
      clearInterval(timer);
    }
    const wallSeconds = (performance.now() - started) / 1000;
    const workerCpuMs = cpu() - workerCpu;
    const serverCpuAfter = options.server.cpuMs();
    runs.push({
      workers,
      items,
      concurrency,
      ok: summary.ok,
      runs: summary.runs,
      wallSeconds,
      sessionsPerSecond: summary.ok / wallSeconds,
      workerCpuMsPerSession: workerCpuMs / items,
      ...(serverCpu !== undefined && serverCpuAfter !== undefined ? { serverCpuMsPerSession: (serverCpuAfter - serverCpu) / items } : {}),
      modelCalls: fake.requests.length - calls,
    });
    await Promise.all(processes.map((p) => p.stop()));
  }
  return { runs };
}

export function formatBatch(figures: BatchBenchFigures): string {
  const rows = figures.runs.map((r) => [
    String(r.workers),
    `${r.ok}/${r.items}`,
    String(r.concurrency),
    String(r.runs),
    `${r.wallSeconds.toFixed(1)} s`,
    r.sessionsPerSecond.toFixed(1),
    `${r.workerCpuMsPerSession.toFixed(1)} ms`,
    r.serverCpuMsPerSession === undefined ? '-' : `${r.serverCpuMsPerSession.toFixed(1)} ms`,
    String(r.modelCalls),
  ]);
  const table = `Batch runs: one-shot sessions of one zero-latency model call each, as children of agentBatch\n${textTable(
    ['workers', 'ok', 'concurrency', 'batch runs', 'wall', 'sessions/s', 'worker CPU/session', 'server CPU/session', 'model calls'],
    rows,
  )}`;
  return figures.kill ? `${table}\n\n${formatBatchKill(figures.kill)}` : table;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the batch did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
