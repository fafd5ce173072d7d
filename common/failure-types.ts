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
