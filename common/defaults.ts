/**
 * Behaviour-changing defaults, in one place. Options are layered from least to most specific:
 * these constants, then environment variables, then per-session input.
 */

/** Model used when neither the session nor `LOOPWRIGHT_MODEL` names one. */
export const DEFAULT_MODEL = 'gpt-4o-mini';

/**
 * Longest reply, in tokens, a model call asks for unless the session says otherwise: room for a long
 * document (about 6,000 words), and a stop for a model that runs away.
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 8192;

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

/** Price of a prompt token read from the provider's cache, as a share of the input price, unless a price names it (Anthropic's: a tenth). */
export const DEFAULT_CACHE_READ_PRICE_FACTOR = 0.1;

/** Price of a prompt token written to the provider's cache, as a share of the input price, unless a price names it (Anthropic's five-minute cache: 1.25). */
export const DEFAULT_CACHE_WRITE_PRICE_FACTOR = 1.25;

/** Longest one model call may take, retries aside (`timeouts.modelCall`). */
export const DEFAULT_MODEL_CALL_TIMEOUT = '10 minutes';

/** A model call whose worker sends no heartbeat for this long is retried elsewhere (`timeouts.modelHeartbeat`). */
export const DEFAULT_MODEL_HEARTBEAT_TIMEOUT = '30 seconds';

/** Longest one tool call may take (`timeouts.tool`). */
export const DEFAULT_TOOL_TIMEOUT = '1 minute';

/** Longest one command may run (`commands.timeout`). */
export const DEFAULT_COMMAND_TIMEOUT = '2 minutes';

/** A tool call whose worker sends no heartbeat for this long is retried elsewhere (`timeouts.toolHeartbeat`). */
export const DEFAULT_TOOL_HEARTBEAT_TIMEOUT = '10 seconds';

/** Share of a turn's iterations at which the model is told once (`iterationWarning`; 0 turns it off). */
export const DEFAULT_ITERATION_WARNING = 0.8;

/** A turn ends `stuck` when the same call fails with the same error this many times (`maxRepeatedFailures`). */
export const DEFAULT_MAX_REPEATED_FAILURES = 3;

/** Attempts (act, then verify) a turn makes at most before it ends with the failed report. */
export const DEFAULT_VERIFY_ATTEMPTS = 3;

/** Default deepest chain of delegations (a session at depth 0 may start children at 1 and grandchildren at 2). */
export const DEFAULT_DELEGATION_MAX_DEPTH = 2;

/** Default most delegations one turn may make. */
export const DEFAULT_DELEGATION_MAX_CHILDREN = 8;
