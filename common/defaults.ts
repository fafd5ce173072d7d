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

/** A run continues as new once it added this many history bytes (Temporal warns at 10 MB). */
export const DEFAULT_MAX_HISTORY_BYTES = 4 * 1024 * 1024;

/** A run continues as new once it added this many history events (Temporal warns at 10,240). */
export const DEFAULT_MAX_HISTORY_EVENTS = 4_000;

/** Largest user message a session takes (UTF-8 bytes); larger ones are refused before anything is recorded. */
export const MAX_USER_MESSAGE_BYTES = 512 * 1024;

/** Largest transcript a turn sends to the model (UTF-8 bytes of its JSON); past it the turn fails and says so. */
export const MAX_TRANSCRIPT_BYTES = 16 * 1024 * 1024;

/** Context window assumed when neither the session nor the model server says (tokens). */
export const DEFAULT_CONTEXT_WINDOW = 32_768;

/** Compact the model's view once the next prompt would pass this share of the window less the output reserve. */
export const DEFAULT_COMPACT_AT = 0.8;

/** Latest exchanges kept whole by compaction. */
export const DEFAULT_KEEP_RECENT = 3;

/** Longest summary a compaction asks for (tokens). */
export const DEFAULT_SUMMARY_TOKENS = 1024;

/** Times a reply cut off at the output limit is continued. */
export const DEFAULT_MAX_CONTINUATIONS = 2;

/** Share of a budget at which the model and the user are warned. */
export const DEFAULT_BUDGET_WARN_AT = 0.8;
