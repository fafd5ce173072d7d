/**
 * `loopwright`: the typed client. Start sessions, send messages, answer approvals and read state
 * on your own Temporal `Client`:
 *
 *   const loopwright = new LoopwrightClient(client, 'loopwright');
 *   const session = await loopwright.start({ bundlePath, agentId: 'pm' });
 *   const turn = await session.send('Draft the PRD');
 *
 * @module loopwright
 */
export { LoopwrightClient, SessionHandle, SessionRejectedError, type StartSessionOptions, type SessionSummary } from './session-client';
export { BatchHandle, BatchInputError, defaultOutputPath, type StartBatchOptions, type BatchResultLine, type BatchState, type BatchSummary } from './batch-client';
export { LoopwrightSchedules, type CreateScheduleOptions, type ScheduleLine } from './schedule-client';
export { startEval, resolveEvalSources, EvalHandle, EvalSourceError, type StartEvalOptions, type EvalCaseReport, type EvalReport, type EvalState, type EvalSummary } from './eval-client';
export { exportSession, type ExportOptions } from './session-export';
export { EVAL_WORKFLOW } from '../common/eval/eval-types';
export { BATCH_WORKFLOW } from '../common/batch-types';
export { batchStateQuery } from '../workflows/batch/batch-definitions';
export {
  SESSION_WORKFLOW,
  interruptSignal,
  endSignal,
  stateQuery,
  messagesQuery,
  transcriptPageQuery,
  sendUpdate,
  awaitTurnUpdate,
  approveUpdate,
  denyUpdate,
  extendUpdate,
  compactUpdate,
  budgetUpdate,
} from '../common/contract/session-definitions';
export * from '../common/session-types';
export * from '../common/messages';
export * from '../common/failure-types';
export { DEFAULT_MAX_OUTPUT_TOKENS, type ModelSettings, type TokenLimitParameter } from '../common/model-call';
export {
  DEFAULT_TASK_QUEUE,
  DEFAULT_NAMESPACE,
  DEFAULT_MAX_ITERATIONS,
  MAX_USER_MESSAGE_BYTES,
  DEFAULT_CONTEXT_WINDOW,
  DEFAULT_COMPACT_AT,
  DEFAULT_KEEP_RECENT,
  DEFAULT_SUMMARY_TOKENS,
  DEFAULT_MAX_CONTINUATIONS,
  DEFAULT_BUDGET_WARN_AT,
} from '../common/defaults';
