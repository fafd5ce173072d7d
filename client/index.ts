/**
 * `loopwright`: the typed client. Start sessions, send messages, answer approvals and read state
 * on your own Temporal `Client`:
 *
 *   const loopwright = new LoopwrightClient(client, 'loopwright');
 *   const session = await loopwright.start({ bundlePath, agentId: 'pm' });
 *   const turn = await session.send('Draft the PRD');
 */
export { LoopwrightClient, SessionHandle, SessionRejectedError, type StartSessionOptions, type SessionSummary } from './session-client';
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
} from '../workflows/definitions';
export * from '../common/session-types';
export * from '../common/messages';
export * from '../common/failure-types';
export { DEFAULT_TASK_QUEUE, DEFAULT_NAMESPACE, DEFAULT_MAX_ITERATIONS, MAX_USER_MESSAGE_BYTES } from '../common/defaults';
