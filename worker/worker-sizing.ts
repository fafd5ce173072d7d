/**
 * How many sessions one worker serves at once, as options with defaults and environment overrides.
 * Activities (model calls, tools) are I/O-bound and cheap to hold open, so a worker gets enough
 * activity slots for every active session's model call plus its parallel tool calls; the workflow
 * cache keeps sessions warm between turns and is never turned off (0 would replay every history on
 * every task).
 */
import type { WorkerOptions } from '@temporalio/worker';

/** A worker's capacity. */
export interface WorkerSizing {
  /** Sessions running a turn at the same time (default 200; LOOPWRIGHT_ACTIVE_SESSIONS). */
  activeSessions: number;
  /** Tool calls one model reply may run at once (default 4; LOOPWRIGHT_PARALLEL_TOOLS). */
  parallelTools: number;
  /** Activity slots (default activeSessions x (1 + parallelTools); LOOPWRIGHT_ACTIVITY_SLOTS). */
  activitySlots: number;
  /** Workflow tasks run at once (default 40; LOOPWRIGHT_WORKFLOW_TASK_SLOTS). */
  workflowTaskSlots: number;
  /**
   * Sessions kept in the workflow cache (default 1,000, or 250 when tracing is on; at least 2;
   * LOOPWRIGHT_MAX_CACHED_SESSIONS). A cached session costs about 0.4 MB, about 2.2 MB with tracing
   * on (OpenTelemetry then lives in each session's workflow context); one that was evicted is
   * replayed from its history when it next gets a message, so idle sessions beyond the cache cost
   * nothing but that replay.
   */
  cachedSessions: number;
}

const ENV: Record<keyof WorkerSizing, string> = {
  activeSessions: 'LOOPWRIGHT_ACTIVE_SESSIONS',
  parallelTools: 'LOOPWRIGHT_PARALLEL_TOOLS',
  activitySlots: 'LOOPWRIGHT_ACTIVITY_SLOTS',
  workflowTaskSlots: 'LOOPWRIGHT_WORKFLOW_TASK_SLOTS',
  cachedSessions: 'LOOPWRIGHT_MAX_CACHED_SESSIONS',
};

/** Thrown for a sizing value that is not a whole number in range; names the setting. */
export class WorkerSizingError extends Error {
  override readonly name = 'WorkerSizingError';
}

/** Default cache sizes: with tracing on, 250 cached sessions take about as much memory as 1,000 without. */
export const DEFAULT_CACHED_SESSIONS = 1_000;
export const DEFAULT_CACHED_SESSIONS_TRACED = 250;

/** Sizing from `options`, then the environment, then defaults (`traced`: the worker traces workflows). */
export function resolveWorkerSizing(options: Partial<WorkerSizing> = {}, env: NodeJS.ProcessEnv = process.env, defaults: { traced?: boolean } = {}): WorkerSizing {
  const pick = (key: keyof WorkerSizing, fallback: number, min: number): number => {
    const explicit = options[key];
    const raw = explicit ?? (env[ENV[key]] === undefined || env[ENV[key]] === '' ? undefined : Number(env[ENV[key]]));
    if (raw === undefined) return fallback;
    if (!Number.isInteger(raw) || raw < min) {
      const where = explicit !== undefined ? key : `${ENV[key]} (${key})`;
      throw new WorkerSizingError(`${where} must be a whole number >= ${min}, got ${String(explicit ?? env[ENV[key]])}`);
    }
    return raw;
  };
  const activeSessions = pick('activeSessions', 200, 1);
  const parallelTools = pick('parallelTools', 4, 1);
  return {
    activeSessions,
    parallelTools,
    activitySlots: pick('activitySlots', activeSessions * (1 + parallelTools), 1 + parallelTools),
    workflowTaskSlots: pick('workflowTaskSlots', 40, 2),
    cachedSessions: pick('cachedSessions', defaults.traced ? DEFAULT_CACHED_SESSIONS_TRACED : DEFAULT_CACHED_SESSIONS, 2),
  };
}

/** The Temporal worker options for `sizing`. */
export function sizingOptions(sizing: WorkerSizing): Partial<WorkerOptions> {
  return {
    maxConcurrentActivityTaskExecutions: sizing.activitySlots,
    maxConcurrentWorkflowTaskExecutions: Math.min(sizing.workflowTaskSlots, sizing.cachedSessions),
    maxCachedWorkflows: sizing.cachedSessions,
  };
}
