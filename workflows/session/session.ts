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

/** Run an agent session. See `SessionInput`; signals, queries and updates are in common/contract/session-definitions.ts. */
export async function agentSession(input: SessionInput): Promise<SessionResult> {
  const problem = sessionInputProblem(input);
  if (problem) throw ApplicationFailure.nonRetryable(`Invalid session input: ${problem}`, BAD_INPUT);
  // The input checker above has vouched for every value the run reads.
  const run = new SessionRun(input);
  installControlHandlers(run);
  installContextHandlers(run);
  installToolHandlers(run);
  installTurnHandlers(run);
  await run.setup();
  return (await run.firstTurn()) ?? run.idle();
}
