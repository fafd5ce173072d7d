/** Entry point of the workflow bundle: only workflow functions are exported here. */
export { agentSession } from './session';
export { agentBatch } from './batch';
