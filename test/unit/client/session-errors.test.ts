/**
 * Which of the server's answers to an update the session client reads as "ask again"
 * (client/session-errors.ts): its own deadline, a failed workflow task, an update no worker
 * processed; and nothing else with the same code.
 */
import { ServiceError, WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { serverDeadline, unprocessedUpdate, workflowTaskFailed } from '../../../client/session-errors';

/** The error the SDK throws for an update the server answered with gRPC status `code` and `details`. */
function updateError(code: number, details: string): ServiceError {
  return new ServiceError('Workflow Update failed', { cause: Object.assign(new Error(`${code} ${details}`), { code, details }) });
}

const TASK_FAILED = 'Unable to perform workflow execution update due to unexpected workflow task failure.';

test('a failed workflow task (FAILED_PRECONDITION with the server text) is asked again; other answers with that code, or that text with another code, are not', () => {
  expect(workflowTaskFailed(updateError(9, TASK_FAILED))).toBe(true);
  expect(workflowTaskFailed(updateError(9, 'Workflow Update is not allowed on this namespace'))).toBe(false);
  expect(workflowTaskFailed(updateError(3, TASK_FAILED))).toBe(false);
  expect(workflowTaskFailed(new Error(TASK_FAILED))).toBe(false);
});

test("the server's deadline is asked again, a cancellation of ours is not; an update no worker processed is made again", () => {
  const deadline = new WorkflowUpdateRPCTimeoutOrCancelledError('Timeout', { cause: Object.assign(new Error('deadline'), { code: 4 }) });
  const cancelled = new WorkflowUpdateRPCTimeoutOrCancelledError('Cancelled', { cause: Object.assign(new Error('cancelled'), { code: 1 }) });
  expect(serverDeadline(deadline)).toBe(true);
  expect(serverDeadline(cancelled)).toBe(false);
  expect(serverDeadline(updateError(9, TASK_FAILED))).toBe(false);
  const unprocessed = new WorkflowUpdateFailedError('Workflow Update failed', ApplicationFailure.create({ message: "Workflow Update is rejected because it wasn't processed by worker." }));
  expect(unprocessedUpdate(unprocessed)).toBe(true);
  expect(unprocessedUpdate(new WorkflowUpdateFailedError('Workflow Update failed', ApplicationFailure.create({ message: 'busy' })))).toBe(false);
});
