/**
 * A workflow's result, waited for across a server's brief outage. The SDK's `result()` long-polls
 * the workflow's history; a cluster whose history host is restarting answers that poll with
 * DEADLINE_EXCEEDED, or UNAVAILABLE while no host serves it, although the workflow runs on and
 * will finish. Such an answer is polled again, until `patienceMs` has passed with nothing but such
 * answers, and then thrown: a server that stays away is an error the caller hears about.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ServiceError, type WorkflowHandle } from '@temporalio/client';
import { GRPC_DEADLINE_EXCEEDED, GRPC_UNAVAILABLE, grpcCode } from './grpc-status';

/** How long waiting goes on through such answers by default: longer than a history host takes to restart and take its shards back. */
export const RESULT_PATIENCE_MS = 120_000;

/** Whether `err` is the server saying it could not answer now (not a failure of the workflow, not a cancellation of ours). */
function serverAway(err: unknown): boolean {
  const code = err instanceof ServiceError ? grpcCode(err) : undefined;
  return code === GRPC_DEADLINE_EXCEEDED || code === GRPC_UNAVAILABLE;
}

/** `handle.result()`, polled again while the server answers DEADLINE_EXCEEDED or UNAVAILABLE, for up to `patienceMs` in a row. */
export async function workflowResult<T>(handle: WorkflowHandle, options: { patienceMs?: number; pauseMs?: number } = {}): Promise<T> {
  const patienceMs = options.patienceMs ?? RESULT_PATIENCE_MS;
  const pauseMs = options.pauseMs ?? 1_000;
  let awaySince: number | undefined;
  for (;;) {
    try {
      return (await handle.result()) as T;
    } catch (err) {
      if (!serverAway(err)) throw err;
      awaySince ??= Date.now();
      if (Date.now() - awaySince >= patienceMs) throw err;
      await sleep(pauseMs);
    }
  }
}
