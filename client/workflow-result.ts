/**
 * A workflow's result, waited for across a server's brief outage. The SDK's `result()` long-polls
 * the workflow's history; a cluster whose history host is restarting answers that poll with
 * DEADLINE_EXCEEDED, or UNAVAILABLE while no host serves it, although the workflow runs on and
 * will finish. Such an answer is polled again, until `patienceMs` has passed with nothing but such
 * answers, and then thrown: a server that stays away is an error the caller hears about.
 */
import { ServiceError, type WorkflowHandle } from '@temporalio/client';

/** gRPC status codes of a server that did not answer in time, or not at all. */
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_UNAVAILABLE = 14;

/** How long waiting goes on through such answers by default: longer than a history host takes to restart and take its shards back. */
export const RESULT_PATIENCE_MS = 120_000;

/** Whether `err` is the server saying it could not answer now (not a failure of the workflow, not a cancellation of ours). */
function serverAway(err: unknown): boolean {
  if (!(err instanceof ServiceError)) return false;
  const code = (err.cause as { code?: unknown } | undefined)?.code;
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
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
}
