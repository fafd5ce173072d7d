/**
 * Waiting for a workflow's result through a server's brief outage (client/workflow-result.ts): the
 * answers a restarting cluster gives a result long-poll are polled again, any other error is
 * thrown at once, and a server that stays away is thrown once the patience is spent.
 */
import { ServiceError, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { workflowResult } from '../../../client/workflow-result';

/** The error the SDK throws when the server answers a history poll with gRPC status `code`. */
function grpcError(code: number): ServiceError {
  return new ServiceError('Failed to get Workflow execution history', { cause: Object.assign(new Error(`status ${code}`), { code }) });
}

/** A handle whose `result()` gives each of `outcomes` in turn (an Error is thrown), counting the calls. */
function handleGiving(outcomes: unknown[]): { handle: WorkflowHandle; calls: () => number } {
  let calls = 0;
  const handle = {
    result: async () => {
      const outcome = outcomes[Math.min(calls++, outcomes.length - 1)];
      if (outcome instanceof Error) throw outcome;
      return outcome;
    },
  } as unknown as WorkflowHandle;
  return { handle, calls: () => calls };
}

test('DEADLINE_EXCEEDED and UNAVAILABLE answers are polled again until the result comes', async () => {
  const { handle, calls } = handleGiving([grpcError(4), grpcError(14), grpcError(4), { ok: 3 }]);
  await expect(workflowResult(handle, { pauseMs: 1 })).resolves.toEqual({ ok: 3 });
  expect(calls()).toBe(4);
});

test('any other error is thrown at once: the workflow failed, or the server refused the call', async () => {
  const failed = new WorkflowFailedError('Workflow execution failed', undefined, 'NON_RETRYABLE_FAILURE');
  const first = handleGiving([failed, { ok: 1 }]);
  await expect(workflowResult(first.handle, { pauseMs: 1 })).rejects.toBe(failed);
  expect(first.calls()).toBe(1);
  const notFound = grpcError(5);
  const second = handleGiving([notFound, { ok: 1 }]);
  await expect(workflowResult(second.handle, { pauseMs: 1 })).rejects.toBe(notFound);
  expect(second.calls()).toBe(1);
});

test('a server that stays away is thrown once the patience is spent', async () => {
  const away = grpcError(14);
  const { handle, calls } = handleGiving([away]);
  await expect(workflowResult(handle, { patienceMs: 30, pauseMs: 5 })).rejects.toBe(away);
  expect(calls()).toBeGreaterThan(1);
});
