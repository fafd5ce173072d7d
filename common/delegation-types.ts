/**
 * Delegation between agents: an agent hands a task to another agent of its bundle (`delegate_task`),
 * which runs as a child session workflow. Pure data, shared by the workflow, the worker and clients.
 */

/** Sessions that may delegate (the `delegate_task` tool, child sessions, forwarded approvals). */
export const DELEGATION_PATCH = 'loopwright-delegation';

/** Default deepest chain of delegations (a session at depth 0 may start children at 1 and grandchildren at 2). */
export const DEFAULT_DELEGATION_MAX_DEPTH = 2;

/** Default most delegations one turn may make. */
export const DEFAULT_DELEGATION_MAX_CHILDREN = 8;

/** Who a session may delegate to, and how far. */
export interface DelegationSettings {
  /** Offer `delegate_task` when the agent has someone to call (default true). */
  enabled?: boolean;
  /**
   * The agents that may be called, by id or `*` pattern (`bmm/*`); default the agent's `delegates:`
   * in bundle.yaml, else every other agent of the bundle. An agent never calls itself.
   */
  agents?: string[];
  /** Deepest chain of delegations (default 2; 0 refuses every call). */
  maxDepth?: number;
  /** Most delegations per turn (default 8). */
  maxChildren?: number;
}

/** An agent a session may delegate to, as agent initialisation found it. */
export interface DelegateAgent {
  /** The id a session asks for (`bmm/pm` in installed and source trees). */
  id: string;
  name: string;
  title: string;
}

/** Set on a child session by its parent: who started it, for which call, and how deep it is. */
export interface DelegatedBy {
  workflowId: string;
  /** The parent's `delegate_task` call. */
  callId: string;
  /** The parent's agent id. */
  agent: string;
  /** 1 for a child of a top session, 2 for a grandchild, ... */
  depth: number;
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
