import type { ChatMessage, SystemMessage, TokenUsage, ToolDefinition } from './messages';
import type { RuntimeContext } from './runtime-context';

/** Where a session is now; the `state` query returns it. */
export type SessionStatus =
  | 'initializing'
  | 'thinking'
  | 'executing_tool'
  | 'waiting_for_user'
  | 'interrupted'
  | 'completed'
  | 'failed';

/** How a turn ended. */
export type TurnStatus = 'completed' | 'interrupted' | 'max_iterations' | 'failed';

/** Input of the session workflow. */
export interface SessionInput {
  /** Bundle folder (or installed BMAD project) as seen by the worker. */
  bundlePath: string;
  /** Agent id, file name or manifest id within the bundle. */
  agentId: string;
  /** A first user message; the session runs a turn for it right away. */
  firstMessage?: string;
  /** End the session after the first turn (a one-shot run). Requires `firstMessage`. */
  oneShot?: boolean;
  /** Most model calls per turn (default 50). */
  maxIterations?: number;
  /** Model name for this session (else the worker's `LOOPWRIGHT_MODEL`). */
  model?: string;
  /** Folders `save_output` may write to (else the bundle's configured output folder). */
  outputRoots?: string[];
  /** End the session after this long without a message (Temporal duration string, default 24 hours). */
  idleTimeout?: string;
  /** Activity timeouts (Temporal duration strings such as '30 seconds'). */
  timeouts?: SessionTimeouts;
}

/** Activity timeouts of a session; each has a default suited to a hosted model. */
export interface SessionTimeouts {
  /** Longest one model call may take, retries aside (default 10 minutes). */
  modelCall?: string;
  /** A model call whose worker sends no heartbeat for this long is retried elsewhere (default 30 seconds). */
  modelHeartbeat?: string;
  /** Longest one tool call may take (default 1 minute). */
  tool?: string;
}

/** What agent initialisation hands the workflow; recorded in history, so replay never re-reads the bundle. */
export interface InitializeResult {
  agent: AgentSummary;
  /** System prompt first, then one system message per critical action. */
  messages: SystemMessage[];
  context: RuntimeContext;
  tools: ToolDefinition[];
}

/** The parts of an agent the workflow and clients show. */
export interface AgentSummary {
  id: string;
  name: string;
  title: string;
  icon?: string;
  commands: { cmd: string; description: string }[];
}

/** A tool call being executed right now. */
export interface RunningTool {
  id: string;
  name: string;
}

/** The `state` query's answer. */
export interface SessionState {
  status: SessionStatus;
  agent?: AgentSummary;
  /** Number of turns started so far (1-based for the current one). */
  turn: number;
  /** Model calls made in the current (or last) turn. */
  iteration: number;
  maxIterations: number;
  /** Tools executing now (empty unless status is `executing_tool`). */
  runningTools: RunningTool[];
  usage: TokenUsage;
  messageCount: number;
  lastTurn?: TurnSummary;
  /** Set when the session failed. */
  error?: string;
}

/** A turn result without its messages, for status displays. */
export interface TurnSummary {
  turn: number;
  success: boolean;
  status: TurnStatus;
  iterations: number;
  response: string | null;
  error?: string;
}

/** Result of one turn (the `send` update's answer, and a one-shot session's workflow result). */
export interface TurnResult extends TurnSummary {
  /** The messages this turn appended: its user message, then assistant and tool messages. */
  messages: ChatMessage[];
  usage: TokenUsage;
}

/** Result of the session workflow when it ends normally. */
export interface SessionResult {
  turns: number;
  lastTurn?: TurnResult;
  usage: TokenUsage;
  endedBy: 'one_shot' | 'end_signal' | 'idle_timeout';
}
