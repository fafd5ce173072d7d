/**
 * Behaviour-changing defaults, in one place. Options are layered from least to most specific:
 * these constants, then environment variables, then per-session input.
 */

/** Most model calls a single turn may make before it ends with `success: false`. */
export const DEFAULT_MAX_ITERATIONS = 50;

/** Task queue the worker polls and the client starts sessions on (`LOOPWRIGHT_TASK_QUEUE`). */
export const DEFAULT_TASK_QUEUE = 'loopwright';

/** Temporal namespace used when `TEMPORAL_NAMESPACE` is not set. */
export const DEFAULT_NAMESPACE = 'default';

/** A session with no message for this long ends by itself (a workflow timer, so it costs nothing while waiting). */
export const DEFAULT_IDLE_TIMEOUT = '24 hours';

/** Longest a single tool argument is shown in logs before it is cut. */
export const LOG_ARGUMENT_LIMIT = 200;
