/**
 * Builds a Loopwright worker: the session workflow plus the activities, on one task queue. Used by
 * `loopwright worker`, by `loopwright run` when no worker is polling, and by the tests.
 */
import { Client } from '@temporalio/client';
import { type NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { SessionActivities } from '../common/activity-types';
import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE } from '../common/defaults';
import { createActivities, type ActivitiesOptions } from '../activities/session-activities';
import { createBatchActivities } from '../activities/batch-activities';
import { createEvalActivities } from '../activities/eval/eval-activities';
import type { Scorer } from '../activities/eval/scorers';
import { createGrader } from '../activities/eval/grader';
import type { CustomTool } from '../activities/tools/custom-tool';
import { resolveWorkerSizing, sizingOptions, WorkerSizingError, type WorkerSizing } from './worker-sizing';
import { msToNumber } from '@temporalio/common/lib/time';
import { filesQueue } from '../common/files-host';
import { localHostId } from './host-id';
import { dataConverterFromEnv } from '../codec/encryption-codec';
import { prebuiltWorkflowBundle, WORKFLOWS_PATH } from './workflow-bundle';
import { installTracing, tracingClientInterceptors, tracingFromEnv, type TracingOptions, tracingWorkerOptions } from './tracing';
import { buildIdOf, type DeploymentOptions, deploymentVersion, versionedWorkerOptions, type WorkflowCode } from './deployment';

/** How to build a worker. */
export interface CreateWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  /** Ready-made activities (tests); otherwise built from `activityOptions`. */
  activities?: SessionActivities;
  activityOptions?: ActivitiesOptions;
  /** Custom tools (`defineTool`) offered to every session of this worker (added to `activityOptions.tools`). */
  tools?: readonly CustomTool[];
  /** Custom scorers (`defineScorer`) the eval workflow may run on its cases (`loopwright eval --scorer`). */
  scorers?: readonly Scorer[];
  /**
   * A pre-built workflow bundle (tests bundle once per file); otherwise the one `npm run build`
   * prebuilt into dist/, or, running from the sources, one bundled from workflows/ at start-up.
   */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Payload conversion (default: the encryption codec when LOOPWRIGHT_CODEC_KEY(_FILE) is set). */
  dataConverter?: WorkerOptions['dataConverter'];
  /** Capacity; anything left out comes from LOOPWRIGHT_* variables, then defaults (see worker-sizing.ts). */
  sizing?: Partial<WorkerSizing>;
  /**
   * OpenTelemetry traces: where spans go, or false for none. Default: from the OTEL_* variables
   * (see tracing.ts), off when they ask for nothing.
   */
  tracing?: TracingOptions | false;
  /** This machine's host id (default LOOPWRIGHT_HOST_ID, else the host name): the worker also serves the files of sessions that name it. */
  hostId?: string;
  /**
   * Worker Deployment Versioning: the worker joins this deployment (default name `loopwright`) as
   * this build (default: the package version and a hash of its workflow bundle), and every session
   * it starts is pinned to the build until it moves to the current one at a turn boundary. Off when
   * absent: the worker is unversioned (see docs/guides/deployment.md, "Versioned deploys").
   */
  deployment?: DeploymentOptions;
  /** Extra worker options (identity, ...); they win over `sizing`. */
  overrides?: Partial<WorkerOptions>;
}

export { WORKFLOWS_PATH };

/** Create (not run) a worker for Loopwright sessions. */
export async function createWorker(options: CreateWorkerOptions): Promise<Worker> {
  const namespace = options.namespace ?? DEFAULT_NAMESPACE;
  // Activities read session transcripts through a client on the worker's own connection.
  const dataConverter = options.dataConverter ?? dataConverterFromEnv();
  const tracing = options.tracing === undefined ? await tracingFromEnv() : options.tracing || undefined;
  if (tracing) await installTracing(tracing);
  const client = new Client({
    connection: options.connection,
    namespace,
    ...(dataConverter ? { dataConverter } : {}),
    ...(tracing ? { interceptors: await tracingClientInterceptors() } : {}),
  });
  const code = workflowCode(options.workflowBundle, tracing !== undefined);
  const taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
  const hostId = options.hostId ?? localHostId();
  const activities = {
    // The batch workflow's file and follow-up activities (see workflows/batch/batch.ts).
    ...createBatchActivities({ client }),
    // The eval workflow's activities, and the eval session's recorded turns (see workflows/eval/);
    // its grader calls the model on this worker's model settings.
    ...createEvalActivities({ client, scorers: options.scorers ?? [], grader: createGrader(options.activityOptions?.model) }),
    ...(options.activities ?? createActivities({ client, hostId, ...options.activityOptions, tools: [...(options.activityOptions?.tools ?? []), ...(options.tools ?? [])] })),
  };
  // The build's traced bundle includes the interceptors; a bundle given by the caller is checked.
  const traced = tracing ? await tracingWorkerOptions(tracing, code, WORKFLOWS_PATH, options.workflowBundle === undefined) : {};
  const versioned = options.deployment
    ? versionedWorkerOptions(deploymentVersion(options.deployment, () => buildIdOf(loadedCode(code, traced), WORKFLOWS_PATH, { traced: tracing !== undefined })))
    : {};
  const worker = await Worker.create({
    connection: options.connection,
    namespace,
    ...(dataConverter ? { dataConverter } : {}),
    taskQueue,
    ...code,
    activities,
    // Heartbeats carry a streamed model reply to readers in batches of STREAM_BATCH_MS (100 ms;
    // common/stream-types.ts), and carry cancellation back to a running model call. A throttle of
    // 100 ms lets each batch out when it is sent (a longer one would hold batches back to one per
    // interval) and means an interrupt aborts the HTTP request within about a heartbeat: about
    // 100 ms while a reply streams, and about the keep-alive interval (1 s) otherwise.
    maxHeartbeatThrottleInterval: '100 milliseconds',
    defaultHeartbeatThrottleInterval: '100 milliseconds',
    shutdownGraceTime: '10 seconds',
    ...sizingOptions(resolveWorkerSizing(options.sizing, process.env, { traced: tracing !== undefined })),
    ...stickyTimeout(process.env),
    ...traced,
    ...versioned,
    ...options.overrides,
  });
  // The same activities on this host's files queue, for sessions whose files live here.
  const files = await Worker.create({
    connection: options.connection,
    namespace,
    ...(dataConverter ? { dataConverter } : {}),
    taskQueue: filesQueue(taskQueue, hostId),
    activities,
    interceptors: { activity: worker.options.interceptors.activity },
    maxHeartbeatThrottleInterval: '100 milliseconds',
    defaultHeartbeatThrottleInterval: '100 milliseconds',
    shutdownGraceTime: '10 seconds',
    // The same build as the session worker: a pinned session's file activities go to its own build.
    ...versioned,
    ...(options.overrides?.identity ? { identity: `${options.overrides.identity}@files` } : {}),
  });
  return withFilesWorker(worker, files);
}

/**
 * The session worker, which also runs and stops the files worker beside it: `run()` runs both and
 * settles when both have stopped; `shutdown()` stops both. Callers keep one Worker to handle.
 */
function withFilesWorker(worker: Worker, files: Worker): Worker {
  const run = worker.run.bind(worker);
  const shutdown = worker.shutdown.bind(worker);
  const stopFiles = (): void => {
    if (files.getState() === 'RUNNING') files.shutdown();
  };
  worker.run = async () => {
    const filesRunning = files.run();
    try {
      await run();
    } finally {
      stopFiles();
      await filesRunning;
    }
  };
  worker.shutdown = () => {
    shutdown();
    stopFiles();
  };
  return worker;
}

function workflowCode(given: WorkerOptions['workflowBundle'], traced: boolean): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  const workflowBundle = given ?? prebuiltWorkflowBundle({ traced });
  return workflowBundle ? { workflowBundle } : { workflowsPath: WORKFLOWS_PATH };
}

/** The workflow code the worker loads: the tracing options may swap the bundle for the sources. */
function loadedCode(code: WorkflowCode, traced: Partial<WorkerOptions>): WorkflowCode {
  return 'workflowsPath' in traced ? { workflowBundle: traced.workflowBundle, workflowsPath: traced.workflowsPath } : code;
}

/** A logger for `bundleWorkflowCode` that drops webpack's info chatter and keeps warnings and errors. */
export const bundlerLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => process.stderr.write(`${message}\n`),
  error: (message: string) => process.stderr.write(`${message}\n`),
};

/**
 * `LOOPWRIGHT_STICKY_TIMEOUT`: how long a session's next step waits for the worker that holds it in
 * its cache before any worker takes it (a duration such as `2s`, or milliseconds; the SDK's 10 s
 * when unset). A worker killed without shutting down holds its sessions' steps that long; a shorter
 * value moves them sooner, at the price of a replay elsewhere when a busy worker answers late.
 */
export function stickyTimeout(env: NodeJS.ProcessEnv): Pick<WorkerOptions, 'stickyQueueScheduleToStartTimeout'> {
  const raw = env.LOOPWRIGHT_STICKY_TIMEOUT?.trim();
  if (!raw) return {};
  let ms = NaN;
  try {
    ms = msToNumber(/^\d+$/.test(raw) ? Number(raw) : (raw as `${number}s`));
  } catch {
    // not a duration: refused below
  }
  if (!Number.isFinite(ms) || ms < 1) throw new WorkerSizingError(`LOOPWRIGHT_STICKY_TIMEOUT must be milliseconds or a duration such as 2s, got "${raw}"`);
  return { stickyQueueScheduleToStartTimeout: ms };
}
