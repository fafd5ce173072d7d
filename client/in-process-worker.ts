/**
 * `loopwright run` and friends start a worker inside the command when no long-lived worker serves
 * the task queue, so one command runs a whole session.
 */
import { temporal } from '@temporalio/proto';
import type { Worker } from '@temporalio/worker';
import { createWorker } from '../worker/create-worker';
import type { ActivitiesOptions } from '../activities/session-activities';
import { onExitCleanup } from './exit-on-signal';
import { installRuntimeLogging } from './runtime-logging';
import type { TemporalSession } from './temporal-session';

/** Identity prefix of workers that live only as long as one command; they do not count as "a worker is polling". */
export const EPHEMERAL_WORKER_PREFIX = 'loopwright-cli-';

/** A long poll lasts about a minute, so a live worker has polled within this window. */
const POLLER_FRESH_MS = 75_000;

/** Whether a long-lived worker (not a command's own) has polled the task queue recently. */
export async function hasLongLivedWorker(session: TemporalSession, now = Date.now()): Promise<boolean> {
  const response = await session.client.workflowService.describeTaskQueue({
    namespace: session.namespace,
    taskQueue: { name: session.taskQueue },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return (response.pollers ?? []).some((poller) => {
    if ((poller.identity ?? '').startsWith(EPHEMERAL_WORKER_PREFIX)) return false;
    const seconds = Number(poller.lastAccessTime?.seconds ?? 0);
    return now - seconds * 1000 < POLLER_FRESH_MS;
  });
}

/** A worker running in this process until `stop()`. */
export interface RunningWorker {
  worker: Worker;
  stop(): Promise<void>;
}

/** Start a worker in this process and keep it running in the background. */
export async function startInProcessWorker(
  session: TemporalSession,
  activityOptions?: ActivitiesOptions,
): Promise<RunningWorker> {
  // The command prints the outcome itself; the worker's retry warnings and stack traces would bury
  // it (LOOPWRIGHT_LOG_LEVEL=WARN shows them).
  installRuntimeLogging('ERROR');
  const connection = await session.nativeConnection();
  const worker = await createWorker({
    connection,
    namespace: session.namespace,
    taskQueue: session.taskQueue,
    activityOptions,
    overrides: { identity: `${EPHEMERAL_WORKER_PREFIX}${process.pid}` },
  });
  const running = worker.run();
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      try {
        await running;
      } finally {
        unregister();
        await connection.close();
      }
    })());
  // On Ctrl-C or SIGTERM the command line stops this worker (for a few seconds at most) before exiting.
  const unregister = onExitCleanup(stop);
  return { worker, stop };
}

/**
 * Run `fn` with a worker available: an in-process one when no long-lived worker polls the queue
 * (or always, with `force`).
 */
export async function withWorker<T>(
  session: TemporalSession,
  options: { force?: boolean; activityOptions?: ActivitiesOptions; onStart?: () => void },
  fn: () => Promise<T>,
): Promise<T> {
  const needed = options.force || !(await hasLongLivedWorker(session));
  if (!needed) return fn();
  options.onStart?.();
  const running = await startInProcessWorker(session, options.activityOptions);
  try {
    return await fn();
  } finally {
    await running.stop();
  }
}
