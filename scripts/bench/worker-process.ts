/**
 * A `loopwright worker` in a child process, so the bench can read its CPU time and memory apart
 * from the dev server's and its own. Started the way test/support/worker-process.ts does it (wait
 * for "Worker polling"), stopped with SIGTERM (SIGKILL when it lingers) through the clean-up stack.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { CleanupStack } from './cleanup-stack';
import { processCpuMs, processMemory, resetPeakRss, type ProcessMemory } from './proc-stats';
import { sleep } from './pool';

const BIN = path.resolve(__dirname, '../../bin/loopwright.js');
/** Output kept for error messages: the tail only, so a chatty worker cannot grow the bench's memory. */
const OUTPUT_TAIL_CHARS = 16 * 1024;

/** Settings of the child worker. */
export interface WorkerProcessOptions {
  temporalAddress: string;
  taskQueue: string;
  modelBaseURL: string;
  model: string;
  /** More environment (LOOPWRIGHT_ACTIVITY_SLOTS, LOOPWRIGHT_MAX_CACHED_SESSIONS, ...). */
  env?: Record<string, string>;
  /** Longest wait for "Worker polling". */
  startTimeoutMs?: number;
}

/** A running child worker. */
export interface BenchWorkerProcess {
  pid: number;
  /** From spawn until the worker said it polls (ts-node, workflow bundling, connection). */
  startupMs: number;
  /** The environment the bench set for it (beyond its own). */
  env: Record<string, string>;
  cpuMs(): number;
  memory(): ProcessMemory;
  /** Reset the peak RSS to the current RSS; false when the kernel refused. */
  resetPeak(): boolean;
  /** Throws (with the output's tail) when the worker has exited. */
  assertAlive(): void;
  output(): string;
  stop(): Promise<void>;
}

/** Start `node bin/loopwright.js worker` and wait until it polls; its stop goes onto `cleanup`. */
export async function startWorkerProcess(options: WorkerProcessOptions, cleanup: CleanupStack): Promise<BenchWorkerProcess> {
  const env: Record<string, string> = {
    TEMPORAL_ADDRESS: options.temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    LOOPWRIGHT_TASK_QUEUE: options.taskQueue,
    OPENAI_BASE_URL: options.modelBaseURL,
    OPENAI_API_KEY: 'bench-key',
    LOOPWRIGHT_MODEL: options.model,
    // At INFO the worker logs every model and tool call; the bench would measure its logging.
    LOOPWRIGHT_LOG_LEVEL: 'WARN',
    ...options.env,
  };
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, 'worker'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let polling = false;
  const append = (data: Buffer) => {
    output += data.toString();
    polling ||= /Worker polling/.test(output);
    if (output.length > 2 * OUTPUT_TAIL_CHARS) output = output.slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = () => stopChild(child, exited);
  cleanup.push(`worker process ${child.pid ?? '?'}`, stop);

  const timeoutMs = options.startTimeoutMs ?? 120_000;
  while (!polling) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`worker process exited early (${child.exitCode ?? child.signalCode}):\n${output.slice(-4000)}`);
    }
    if (performance.now() - started > timeoutMs) throw new Error(`worker process did not poll within ${timeoutMs} ms:\n${output.slice(-4000)}`);
    await sleep(50);
  }
  const pid = child.pid!;
  const assertAlive = () => {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`worker process ${pid} exited (${child.exitCode ?? child.signalCode}):\n${output.slice(-4000)}`);
    }
  };
  return {
    pid,
    startupMs: performance.now() - started,
    env,
    cpuMs: () => (assertAlive(), processCpuMs(pid)),
    memory: () => (assertAlive(), processMemory(pid)),
    resetPeak: () => resetPeakRss(pid),
    assertAlive,
    output: () => output,
    stop,
  };
}

/** SIGTERM (the SDK shuts the worker down gracefully), SIGKILL after 20 s. */
async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const killed = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve();
    }, 20_000);
  });
  await Promise.race([exited, killed]);
  clearTimeout(timer);
  await exited;
}
