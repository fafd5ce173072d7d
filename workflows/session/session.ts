/**
 * The session workflow: initialise the agent (an activity, so its result is recorded), then run one
 * turn per user message until the session ends. The transcript lives in the run and only grows.
 * Before a run's history gets large it continues as new — between turns, or between two iterations
 * of a long turn — carrying the transcript, counters and the unfinished turn; the workflow id stays
 * the same. The run's state and operations are `SessionRun` (session-run.ts); this file reads as
 * what a session does: check the input, set up, take the first turn, idle.
 */
import { ApplicationFailure } from '@temporalio/workflow';
import { BAD_INPUT } from '../../common/failure-types';
import type { SessionInput, SessionResult } from '../../common/session-types';
import { sessionInputProblem } from '../../common/session-input-schema';
import { installToolHandlers } from './session-tools';
import { installContextHandlers, installControlHandlers, installTurnHandlers } from './session-handlers';
import { SessionRun } from './session-run';
import { BadCarriedStateError, readContinuedSession } from '../../common/continued-contract';
import type { ContinuedSession } from '../../common/continued-types';

/** Run an agent session. See `SessionInput`; signals, queries and updates are in common/contract/session-definitions.ts. */
export async function agentSession(input: SessionInput): Promise<SessionResult> {
  const problem = sessionInputProblem(input);
  if (problem) throw ApplicationFailure.nonRetryable(`Invalid session input: ${problem}`, BAD_INPUT);
  // The input checker above has vouched for every value the run reads; the carried state may come
  // from an earlier build's layout (a session that moved here at a turn boundary).
  const run = new SessionRun(input.continued ? { ...input, continued: carriedState(input.continued) } : input);
  installControlHandlers(run);
  installContextHandlers(run);
  installToolHandlers(run);
  installTurnHandlers(run);
  await run.setup();
  return (await run.firstTurn()) ?? run.idle();
}

/**
 * The carried state in this build's layout. A layout that is not one fails the session; a newer
 * one (NewerCarriedStateError, a plain error) fails only this step, retried until a build that
 * reads it runs the session.
 */
function carriedState(carried: ContinuedSession): ContinuedSession {
  try {
    return readContinuedSession(carried);
  } catch (err) {
    if (err instanceof BadCarriedStateError) throw ApplicationFailure.nonRetryable(`Invalid session input: ${err.message}`, BAD_INPUT);
    throw err;
  }
}
