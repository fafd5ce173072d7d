/**
 * Stable `type` strings of the Temporal failures Loopwright raises. Clients match on these, so they
 * never change once published.
 */

/** A one-shot session's turn hit `maxIterations`; details[0] is the partial TurnResult. */
export const MAX_ITERATIONS_EXCEEDED = 'LoopwrightMaxIterationsExceeded';

/** A one-shot session's turn failed (model error that retries could not fix); details[0] is the TurnResult. */
export const TURN_FAILED = 'LoopwrightTurnFailed';

/** Agent initialisation failed (bad bundle, agent file or critical action): fix the bundle. */
export const AGENT_INIT_FAILED = 'LoopwrightAgentInitFailed';

/**
 * The run that held a turn continued as new before the turn finished; the turn goes on in the next
 * run. `details[0]` is `{ turn }`: collect its result with the `awaitTurn` update on the latest run
 * (the typed client does this by itself).
 */
export const CONTINUED_AS_NEW = 'LoopwrightContinuedAsNew';

/** Input the session refuses: a mistyped field, an empty or too large message. */
export const BAD_INPUT = 'LoopwrightBadInput';

/** A message or result is larger than one Temporal payload may safely be; nothing was recorded. */
export const TOO_LARGE = 'LoopwrightTooLarge';

/** The transcript carried into a new run does not match its hash: a bug, never retried. */
export const TRANSCRIPT_MISMATCH = 'LoopwrightTranscriptMismatch';
