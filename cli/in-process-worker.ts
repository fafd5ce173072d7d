/**
 * `loopwright run` and friends start a worker inside the command when no long-lived worker serves
 * the task queue, so one command runs a whole session.
 */
import { filesQueue } from '../common/files-host';
import { localHostId } from '../worker/host-id';
import { temporal } from '@temporalio/proto';
import type { WorkflowHandle } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import type { ActivitiesOptions } from '../activities/session-activities';
import { onExitCleanup } from './exit-on-signal';
import { closeNativeConnection, type TemporalSession } from './temporal-session';

/** Identity prefix of workers that live only as long as one command; they do not count as "a worker is polling". */
export const EPHEMERAL_WORKER_PREFIX = 'loopwright-cli-';

/** A long poll lasts about a minute, so a live worker has polled within this window. */
const POLLER_FRESH_MS = 75_000;

/**
 * Whether a long-lived worker (not a command's own) has polled the task queue recently, and, for
 * the sessions this machine starts (their files are here), this host's files queue too.
 */
export async function hasLongLivedWorker(session: TemporalSession, now = Date.now()): Promise<boolean> {
  const fresh = async (name: string, type: temporal.api.enums.v1.TaskQueueType): Promise<boolean> => {
    const response = await session.client.workflowService.describeTaskQueue({ namespace: session.namespace, taskQueue: { name }, taskQueueType: type });
    return (response.pollers ?? []).some((poller) => {
      if ((poller.identity ?? '').startsWith(EPHEMERAL_WORKER_PREFIX)) return false;
      const seconds = Number(poller.lastAccessTime?.seconds ?? 0);
      return now - seconds * 1000 < POLLER_FRESH_MS;
    });
  };
  let host: string | undefined;
  try {
    host = localHostId();
  } catch {
    host = undefined;
  }
  // Both queues asked at once: the answer is needed before anything else the command does.
  const [workflows, files] = await Promise.all([
    fresh(session.taskQueue, temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW),
    host === undefined ? Promise.resolve(true) : fresh(filesQueue(session.taskQueue, host), temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY),
  ]);
  return workflows && files;
}

/** A worker running in this process until `stop()`. */
export interface RunningWorker {
  worker: Worker;
  stop(): Promise<void>;
}

/** Start a worker in this process and keep it running in the background. */
export async function startInProcessWorker(session: TemporalSession, activityOptions?: ActivitiesOptions): Promise<RunningWorker> {
  // Loaded here, not at the top: the worker, the activities and the openai client take a few hundred
  // milliseconds to load, which commands that find a worker polling (status, send, ...) never pay.
  const [{ createWorker }, { flushTracing }, { installRuntimeLogging }, { closeDefaultMcpPool }] = await Promise.all([
    import('../worker/create-worker'),
    import('../worker/tracing'),
    import('./runtime-logging'),
    import('../activities/mcp/default-pool'),
  ]);
  // The command prints the outcome itself; the worker's retry warnings and stack traces would bury
  // it (LOOPWRIGHT_LOG_LEVEL=WARN shows them).
  installRuntimeLogging('ERROR');
  const connection = await session.nativeConnection();
  const { loadToolModules, toolModulesFromEnv } = await import('../worker/tool-modules');
  const tools = await loadToolModules(toolModulesFromEnv());
  const { loadScorerModules, scorerModulesFromEnv } = await import('../worker/scorer-modules');
  const scorers = await loadScorerModules(scorerModulesFromEnv());
  const worker = await createWorker({
    connection,
    namespace: session.namespace,
    taskQueue: session.taskQueue,
    activityOptions,
    tools,
    scorers,
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
        await closeDefaultMcpPool();
        await closeNativeConnection(connection);
        // The worker's last spans leave now, not when the batch timer would have sent them.
        await flushTracing();
      }
    })());
  // On Ctrl-C or SIGTERM the command line stops this worker (for a few seconds at most) before exiting.
  const unregister = onExitCleanup(stop);
  return { worker, stop };
}

/** A session's work that no worker has picked up for this long means no live worker serves the queue. */
export const STALL_MS = 3_000;

/** Options of {@link withWorker}. */
export interface WithWorkerOptions {
  force?: boolean;
  activityOptions?: ActivitiesOptions;
  /** Called when this command starts a worker of its own, with the reason. */
  onStart?: (reason: string) => void;
  /**
   * The session the command waits on. When a long-lived worker seemed to poll but the session's
   * workflow task or activity stays unclaimed for STALL_MS (the worker died or hangs), the command
   * runs a worker of its own instead of waiting in silence.
   */
  watch?: WorkflowHandle;
  /** For queries, which leave no trace to watch: run a worker here when `fn` has not answered in STALL_MS. */
  startIfSlow?: boolean;
}

/**
 * Run `fn` with a worker available: an in-process one when no long-lived worker polls the queue
 * (or always, with `force`), or as soon as the watched session's work stays unclaimed.
 */
export async function withWorker<T>(session: TemporalSession, options: WithWorkerOptions, fn: () => Promise<T>): Promise<T> {
  if (options.force) {
    options.onStart?.('no worker was polling');
    const running = await startInProcessWorker(session, options.activityOptions);
    try {
      return await fn();
    } finally {
      await running.stop();
    }
  }
  let running: Promise<RunningWorker> | undefined;
  let stopped = false;
  // A worker that fails to start here (or a failed check) ends the command with its error instead of leaving it waiting.
  let failStart: (err: unknown) => void = () => undefined;
  const startFailed = new Promise<never>((_, reject) => {
    failStart = reject;
  });
  startFailed.catch(() => undefined);
  const startHere = (reason: string): void => {
    if (running || stopped) return;
    options.onStart?.(reason);
    running = startInProcessWorker(session, options.activityOptions);
    running.catch(failStart);
  };
  // The check goes on while `fn` already waits: a session's work (a start, an update, a result)
  // waits in its queue until a worker takes it, so the command loses nothing by not waiting first.
  // The check's own failure (an unreachable server) ends the command with its error, as before.
  const checked = hasLongLivedWorker(session).then(
    (found) => {
      if (!found) startHere('no worker was polling');
    },
    (err: unknown) => failStart(err),
  );
  const watch = options.watch;
  const check = async (): Promise<void> => {
    if (!watch || running || stopped) return;
    const stall = await unclaimedWork(watch).catch(() => undefined);
    if (!stall || running || stopped) return;
    startHere(`${stall} for ${STALL_MS / 1000} s: no live worker took it`);
  };
  const timer = watch ? setInterval(() => void check(), 1_000) : undefined;
  const slow = options.startIfSlow ? setTimeout(() => startHere(`no worker answered within ${STALL_MS / 1000} s`), STALL_MS) : undefined;
  try {
    // A query, though, needs a worker polling when it is asked: for those the answer comes first.
    if (options.startIfSlow) await checked;
    return await Promise.race([fn(), startFailed]);
  } finally {
    stopped = true;
    if (timer) clearInterval(timer);
    if (slow) clearTimeout(slow);
    await checked;
    if (running) await (await running).stop();
  }
}

/** What of the session's work has waited longer than STALL_MS for a worker, if anything. */
export async function unclaimedWork(handle: WorkflowHandle, now = Date.now()): Promise<string | undefined> {
  const { raw } = await handle.describe();
  const since = (time: { seconds?: unknown; nanos?: number | null } | null | undefined): number => (time ? now - (Number(time.seconds ?? 0) * 1000 + Math.floor((time.nanos ?? 0) / 1e6)) : 0);
  const task = raw.pendingWorkflowTask;
  if (task && task.state === temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED && since(task.scheduledTime) > STALL_MS) {
    return "the session's workflow task waited";
  }
  for (const activity of raw.pendingActivities ?? []) {
    // Between retries an activity is SCHEDULED too, waiting on purpose: count from its next attempt.
    const waiting = (activity.attempt ?? 1) > 1 ? since(activity.nextAttemptScheduleTime ?? activity.lastAttemptCompleteTime) : since(activity.scheduledTime);
    if (activity.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED && waiting > STALL_MS) {
      return `the ${activity.activityType?.name ?? 'activity'} call waited`;
    }
  }
  return undefined;
}
