/**
 * The reader of the carried state (`ContinuedSession`) a run hands the next: it takes the layout
 * this build writes and every one before, step by step (an idle session may skip builds: it moves
 * from whichever build it was pinned to straight to the current one at its next turn). A newer layout than this build knows (a session handed over by a
 * newer build, e.g. after a rollback) is not guessed at: the session's step fails and is retried
 * until a build that reads it runs it. Pure, for the workflow sandbox.
 */
import { CONTINUED_SESSION_VERSION, type ContinuedSession } from './continued-types';

/** The carried state was written by a newer build than this one; its step is retried until a build that reads it runs it. */
export class NewerCarriedStateError extends Error {
  override readonly name = 'NewerCarriedStateError';
  constructor(readonly version: number) {
    super(
      `The session's carried state has layout ${version}, newer than this build reads (${CONTINUED_SESSION_VERSION}): ` +
        'it was handed over by a newer build; make a build that reads it current again (docs/guides/deployment.md, "Rolling back")',
    );
  }
}

/** The carried state has no layout this or any build writes (not a positive whole number). */
export class BadCarriedStateError extends Error {
  override readonly name = 'BadCarriedStateError';
}

/**
 * One step per layout: from layout `n` to `n + 1`. A build that raises `CONTINUED_SESSION_VERSION`
 * adds the step from the layout before, so every earlier layout reaches this build's.
 */
const STEPS: Record<number, (carried: ContinuedSession) => ContinuedSession> = {
  // Layout 2 is layout 1 with two optional fields: nothing to convert.
  1: (carried) => carried,
};

/** `carried` in this build's layout: any earlier layout brought up step by step, a newer one refused. */
export function readContinuedSession(carried: ContinuedSession): ContinuedSession {
  const written = carried.version ?? 1;
  if (!Number.isInteger(written) || written < 1) throw new BadCarriedStateError(`continued.version: expected a positive whole number, got ${JSON.stringify(carried.version)}`);
  if (written > CONTINUED_SESSION_VERSION) throw new NewerCarriedStateError(written);
  let current = carried;
  for (let version = written; version < CONTINUED_SESSION_VERSION; version++) current = STEPS[version]!(current);
  return { ...current, version: CONTINUED_SESSION_VERSION };
}
