/**
 * How the client reads a session's and the server's refusals: a message the session would refuse
 * (refused before it is sent), an update's refusal as a SessionRejectedError, and the answers that
 * mean "try again" (the run moved on, the server's deadline passed, the update reached no workflow, the
 * workflow task carrying it failed).
 */
import { ServiceError, WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { MAX_USER_MESSAGE_BYTES } from '../common/defaults';
import { CONTINUED_AS_NEW, TOO_LARGE } from '../common/failure-types';
import { utf8Length } from '../common/transcript';
import { GRPC_DEADLINE_EXCEEDED, GRPC_FAILED_PRECONDITION, grpcCode } from './grpc-status';

/** The session refused a message (`busy`, empty, too large, or the session is ending); `message` says why. */
export class SessionRejectedError extends Error {
  override name = 'SessionRejectedError';
  /** The failure type when the session gave one (e.g. `LoopwrightTooLarge`). */
  readonly type: string | undefined;
  constructor(message: string, options: { cause?: unknown; type?: string } = {}) {
    super(message, { cause: options.cause });
    this.type = options.type;
  }
}

/** Refuse, before anything is sent, a message the session would refuse (or the server could not take). */
export function checkMessageSize(message: string): void {
  const bytes = utf8Length(message);
  if (bytes > MAX_USER_MESSAGE_BYTES) {
    throw new SessionRejectedError(`The message is ${bytes} bytes, over the limit of ${MAX_USER_MESSAGE_BYTES} bytes; send a shorter message or put the text in a file the agent can read`, {
      type: TOO_LARGE,
    });
  }
}

/** The `{ turn }` of a LoopwrightContinuedAsNew failure, or undefined for any other error. */
export function continuedTurn(err: unknown): { turn?: number } | undefined {
  if (!(err instanceof WorkflowUpdateFailedError) || !(err.cause instanceof ApplicationFailure)) return undefined;
  if (err.cause.type !== CONTINUED_AS_NEW) return undefined;
  const details = err.cause.details?.[0] as { turn?: unknown } | undefined;
  return typeof details?.turn === 'number' ? { turn: details.turn } : {};
}

/** An update call the server answered with DEADLINE_EXCEEDED (not one this process cancelled). */
export function serverDeadline(err: unknown): boolean {
  return err instanceof WorkflowUpdateRPCTimeoutOrCancelledError && grpcCode(err) === GRPC_DEADLINE_EXCEEDED;
}

/**
 * The server's answer that the workflow task carrying the update failed before the update was taken
 * (WorkflowNotReady, gRPC FAILED_PRECONDITION: "Unable to perform workflow execution update due to
 * unexpected workflow task failure."), seen when a history host dies while a worker completes that
 * task. The server dropped the update; one made again under the same id is taken at most once (the
 * server answers for it if it was taken after all), so asking again is safe. Other answers with that
 * code are not read as this one (they may not pass by themselves).
 */
export function workflowTaskFailed(err: unknown): boolean {
  return err instanceof ServiceError && grpcCode(err) === GRPC_FAILED_PRECONDITION && /workflow task failure/i.test(String((err.cause as { details?: unknown } | undefined)?.details ?? ''));
}

/**
 * The server's rejection of an update that reached a worker in a workflow task the worker completed
 * without answering it (its text, from the server's update registry: it has no type). The workflow
 * never ran the update, so making it again cannot apply it twice. Seen rarely, when the first
 * workflow task after a worker change carried the update.
 */
const UNPROCESSED_UPDATE = "wasn't processed by worker";

export function unprocessedUpdate(err: unknown): boolean {
  return err instanceof WorkflowUpdateFailedError && (err.cause?.message ?? '').includes(UNPROCESSED_UPDATE);
}

/** An update's refusal (`busy`, empty message, ...) as a SessionRejectedError; other errors as they are. */
export function rejection(err: unknown): unknown {
  if (err instanceof WorkflowUpdateFailedError && err.cause) {
    const type = err.cause instanceof ApplicationFailure ? (err.cause.type ?? undefined) : undefined;
    return new SessionRejectedError(err.cause.message, { cause: err, type });
  }
  return err;
}
