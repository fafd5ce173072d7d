/**
 * A `loopwright worker` in its own process, for tests that kill workers the hard way.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';

const BIN = path.resolve(__dirname, '../../bin/loopwright.js');

/** A worker process and its captured output. */
export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves when the process has exited. */
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Start `loopwright worker` and wait until it polls. */
export async function startWorkerProcess(env: Record<string, string>, timeoutMs = 60_000): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [BIN, 'worker'], {
    // A worker killed with SIGKILL holds its sessions' next steps for the sticky timeout (10 s by
    // default) before another worker may take them; tests that kill workers need not wait that long.
    env: { ...process.env, LOOPWRIGHT_STICKY_TIMEOUT: '1s', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const started = Date.now();
  while (!/Worker polling/.test(output)) {
    if (child.exitCode !== null) throw new Error(`worker exited early (${child.exitCode}):\n${output}`);
    if (Date.now() - started > timeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`worker did not start within ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    output: () => output,
    exited,
    kill: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** A `loopwright worker` of the end-to-end tests: the test server and fake model, a task queue and a state folder of its own. */
export function startCliWorker(options: { address: string; baseURL: string; taskQueue: string; stateDir: string }): Promise<WorkerProcess> {
  return startWorkerProcess({
    TEMPORAL_ADDRESS: options.address,
    OPENAI_BASE_URL: options.baseURL,
    OPENAI_API_KEY: 'test',
    LOOPWRIGHT_TASK_QUEUE: options.taskQueue,
    LOOPWRIGHT_STATE_DIR: options.stateDir,
  });
}

/**
 * A client interceptor giving the workflows a client starts a workflow task timeout of `seconds`
 * (the server's default is 10 s): a worker killed in the middle of a workflow task (a local activity
 * runs inside one) is noticed that much sooner, as a short heartbeat timeout does for an activity.
 */
export function shortWorkflowTasks(seconds: number): WorkflowClientInterceptor {
  return {
    startWithDetails: (input, next) => next({ ...input, options: { ...input.options, workflowTaskTimeout: msToTs(seconds * 1000) } }),
  };
}
