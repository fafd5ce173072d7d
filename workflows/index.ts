/**
 * Entry point of the workflow bundle: only workflow functions are exported here.
 *
 * @module loopwright/workflows
 */
export { agentSession } from './session/session';
export { agentBatch } from './batch/batch';
export { agentEval } from './eval/eval';
