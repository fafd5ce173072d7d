/**
 * Delegation between agents: an agent hands a task to another agent of its bundle (`delegate_task`),
 * which runs as a child session workflow. Pure data, shared by the workflow, the worker and clients.
 */

// Declared in the settings table (common/settings/session-settings.ts), with their doc text.
export type { DelegatedBy, DelegationSettings, SubagentSpec } from './settings/session-settings';

/** Sessions that may delegate (the `delegate_task` tool, child sessions, forwarded approvals). */
export const DELEGATION_PATCH = 'loopwright-delegation';

// Kept with the other defaults (the settings table reads them there).
export { DEFAULT_DELEGATION_MAX_CHILDREN, DEFAULT_DELEGATION_MAX_DEPTH } from './defaults';

/** An agent a session may delegate to, as agent initialisation found it. */
export interface DelegateAgent {
  /** The id a session asks for (`bmm/pm` in installed and source trees). */
  id: string;
  name: string;
  title: string;
}

/** What a `delegate_task` call returns to the model. */
export interface DelegationResult {
  success: boolean;
  agent: string;
  /** The child's final reply (null when it gave none). */
  response: string | null;
  /** How the child's turn ended (`completed`, `max_iterations`, ...), or `refused` when no child was started. */
  status: string;
  usage?: { promptTokens: number; completionTokens: number; totalTokens: number };
  workflowId?: string;
  error?: string;
}
