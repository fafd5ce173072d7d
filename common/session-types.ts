import type { AgentPin } from './pins';
import type { SystemMessage, TokenUsage, ToolDefinition } from './messages';
import type { RuntimeContext } from './runtime-context';
import type { BudgetState } from './budget-types';

export type { BudgetChange, BudgetSettings, BudgetState, BudgetUse, ModelPrice } from './budget-types';
export type { ContinuedSession, PendingTurn } from './continued-types';
import type { CommandCheck, VerificationReport } from './verify-types';
import type { DelegateAgent } from './delegation-types';
import type { ReplayCounts } from './eval/recording';
// The session's input and its groups of settings are inferred from the settings table.
export type { ApprovalPolicy, ApprovalSettings, ContextSettings, ContinueAsNewSettings, SessionInput, SessionTimeouts } from './settings/session-settings';

/** Where a session is now; the `state` query returns it. */
export type SessionStatus =
  | 'initializing'
  | 'thinking'
  | 'executing_tool'
  | 'waiting_for_approval'
  /** A saved document is being checked against its checklist (the verify phase). */
  | 'verifying'
  | 'waiting_for_user'
  | 'interrupted'
  | 'completed'
  | 'failed';

/** How a turn ended. */
export type TurnStatus =
  | 'completed'
  | 'interrupted'
  | 'max_iterations'
  | 'failed'
  /** The model asked the user a question (`ask_question`); the reply is the question. */
  | 'waiting_for_user'
  /** The same tool call kept failing with the same error; the reply names it. */
  | 'stuck'
  /** The server cut the reply off at the output limit (and continuing it was off or ran out); the reply is the partial text. */
  | 'truncated'
  /** The server's content filter stopped the reply (`finish_reason: content_filter`). */
  | 'content_filtered'
  /** The model refused to answer; the reply is its refusal. */
  | 'refused'
  /** A token or cost budget was reached; the reply is the partial result so far. */
  | 'budget_exceeded'
  /** The document the turn saved still failed its checklist after the last attempt; `verification` holds the report. */
  | 'failed_verification';

/** A tool call waiting for the user's yes or no. */
export interface PendingApproval {
  callId: string;
  tool: string;
  /** The path the call names, with the session's variables resolved where known. */
  path?: string;
  /** A short preview of what the call would do (the start of the content, its size). */
  preview: string;
  /** Workflow time it started waiting (epoch ms). */
  since: number;
  /** Asked by a child session (delegation): its agent, workflow and own call id; `callId` is `<delegate call>/<its call>`. */
  delegate?: { agent: string; workflowId: string; callId: string };
  /** A command (`run_command`): the exact line, its folder and its sandbox (absent in sessions recorded before command rules). */
  command?: CommandApprovalView;
}

/** What the person approving a command sees (workflows/turn/command-approval.ts). */
export interface CommandApprovalView {
  /** The line as it runs: path variables filled in as `run_command` fills them. */
  line: string;
  /** The folder it runs in, absolute. */
  cwd: string;
  /** The sandbox as the session's settings make it: `bubblewrap: project read-only, writable /p/docs; network off; ends after 120 s`. */
  sandbox: string;
  /** Requests that cover it (never grants): `"uv" (skill bmad-init's allowed-tools)`. */
  requestedBy?: string[];
  /** Why no allow rule can cover the line, when the session has rules: `the line has a redirection to a file, ...`. */
  unjudged?: string;
}

/** One compaction of the model's view: what it did and what it cost. */
export interface CompactionRecord {
  turn: number;
  /**
   * Why: the next prompt would pass the threshold, the server refused a prompt as too long, the user
   * asked, or a turn began while the provider's prompt cache had expired and the view was close to
   * the threshold (`cache_cold`: compacting then costs no cached tokens).
   */
  reason: 'threshold' | 'context_length' | 'requested' | 'cache_cold';
  /** Estimated prompt tokens before and after. */
  beforeTokens: number;
  afterTokens: number;
  /** Tool results turned into stubs by this compaction. */
  pruned: number;
  /** Messages folded into the summary by this compaction (0: pruning was enough). */
  summarized: number;
  /** Tokens the summarising call used (0 without one). */
  summaryCallTokens: number;
  /** Wall time of the summarising call in ms (0 without one). */
  durationMs: number;
  /**
   * Cached prompt tokens this compaction cost: what the provider held in its prompt cache at the
   * last call before it (cache reads plus writes), less the stable prefix the compacted view keeps
   * (the system prompt and the messages before the first one it changed), estimated. Absent when no
   * call of this run reported cache figures, and in histories recorded before it was counted.
   */
  cachedTokensLost?: number;
}

/** Where the model's view of the transcript stands (the `state` query). */
export interface ContextState {
  window: number;
  /** Where the window came from: `session`, `server: ...`, `default`, or `server error` (learnt from a 400). */
  windowSource: string;
  /** Estimated prompt tokens of the next call. */
  promptTokens: number;
  /** Messages the model sees (the transcript may hold more). */
  viewMessages: number;
  /** Compactions so far in this session. */
  compactions: number;
  lastCompaction?: CompactionRecord;
}

/** An `ask_question` call whose result will be the user's next message. */
export interface PendingQuestion {
  callId: string;
  question: string;
}

/** What agent initialisation hands the workflow; recorded in history, so replay never re-reads the bundle. */
export interface InitializeResult {
  agent: AgentSummary;
  /** System prompt first, then one system message per critical action. */
  messages: SystemMessage[];
  context: RuntimeContext;
  tools: ToolDefinition[];
  /** Problems that did not stop the agent (a file a critical action names is missing); `state.warnings`. */
  warnings?: string[];
  /** Menu items that check a document on demand (absent in sessions recorded before the verify phase). */
  checks?: CommandCheck[];
  /** The agents this one may delegate to (absent when none, and in sessions recorded before delegation). */
  delegates?: DelegateAgent[];
  /** The agent's files and their content hash, checked at later turns (absent in sessions recorded before pinning). */
  agentPin?: AgentPin;
}

/** The parts of an agent the workflow and clients show. */
export interface AgentSummary {
  id: string;
  name: string;
  title: string;
  icon?: string;
  commands: { cmd: string; description: string }[];
}

/** One tool a session offers, as `state.tools` and `loopwright tools` show it. */
export interface OfferedToolSummary {
  name: string;
  kind: 'builtin' | 'custom' | 'mcp';
  access: 'read' | 'write';
  /** Every call waits for a human yes, whatever the approval policy. */
  approval?: 'required';
  /** For MCP tools: the server. */
  server?: string;
}

/** A tool call being executed right now. */
export interface RunningTool {
  id: string;
  name: string;
  /** Its main argument (the path), as the model wrote it. */
  detail?: string;
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
  /** Tool calls waiting for approval (`approve` / `deny` updates). */
  pendingApprovals: PendingApproval[];
  /** The tools the session offers, as listed when it started (absent in sessions recorded before tools were listed). */
  tools?: OfferedToolSummary[];
  /** The question the model asked, when the session waits for its answer. */
  pendingQuestion?: PendingQuestion;
  usage: TokenUsage;
  messageCount: number;
  /** UTF-8 bytes of the transcript's JSON. */
  transcriptBytes: number;
  /** Run of the session now (1 until it first continues as new). */
  run: number;
  lastTurn?: TurnSummary;
  /** Set when the session failed. */
  error?: string;
  /** Problems that did not stop the agent (e.g. a file a critical action names is missing). */
  warnings?: string[];
  /** The agent's or an active skill's files changed on disk since the session loaded them (common/pins.ts). */
  bundleChanges?: string[];
  /** The context window, the model's view and its compactions (sessions started before they existed have none). */
  context?: ContextState;
  /** Token and cost budgets, and how much of each is used. */
  budget?: BudgetState;
  /** No worker of the session's files host has taken a file activity for a while: the session waits for one. */
  waitingForFiles?: { host: string; since: string };
  /** The turn's phase (gather, act, verify) and the document awaiting verification, once a workflow with a checklist ran. */
  verify?: { phase: 'gather' | 'act' | 'verify'; pending?: { name?: string; checklist?: string; document?: string; attempts: number; maxAttempts: number } };
}

/** A turn result without its messages, for status displays. */
export interface TurnSummary {
  turn: number;
  success: boolean;
  status: TurnStatus;
  iterations: number;
  response: string | null;
  error?: string;
  /** The verify phase's report (in `state.lastTurn`, only its failed items). */
  verification?: VerificationReport;
}

/**
 * Result of one turn (the `send` update's answer, and a one-shot session's workflow result). It
 * names the turn's messages by index; read them with the `transcriptPage` query
 * (`SessionHandle.messages(from, to)`), so a turn that read large files stays a small result.
 */
export interface TurnResult extends TurnSummary {
  /** The turn's messages are `[from, to)` of the transcript: its user message, then assistant and tool messages. */
  messageRange: { from: number; to: number };
  /** Tool calls the model made in this turn. */
  toolCalls: number;
  usage: TokenUsage;
  /** The question, when the turn ended `waiting_for_user` (`ask_question`). */
  question?: PendingQuestion;
  /** What changed on disk since the session loaded it, found when this turn started (common/pins.ts). */
  bundleChanges?: string[];
  /**
   * Set on a long reply carried into a later run: `response` is null there and the reply is the
   * last message of `messageRange` (SessionHandle.awaitTurn fills it in).
   */
  responseOmitted?: true;
  /** Compactions of the model's view during this turn. */
  compactions?: CompactionRecord[];
  /** Replies cut off at the output limit that were continued and joined. */
  continuations?: number;
  /** Cost of the turn, when prices are set. */
  cost?: number;
  /** Problems with the model server's replies that were mended (odd usage numbers, tool calls in the text). */
  modelWarnings?: string[];
  /** `delegate_task` calls the turn made (each a child session unless refused). */
  delegations?: number;
  /** An eval session's turn: how its tool calls were answered (from the recording, run, diverged) and its approvals decided. */
  replay?: ReplayCounts;
}

/** Result of the session workflow when it ends normally. */
export interface SessionResult {
  turns: number;
  lastTurn?: TurnResult;
  usage: TokenUsage;
  /** `script`: an eval session sent its recording's last message. */
  endedBy: 'one_shot' | 'end_signal' | 'idle_timeout' | 'script';
  /** What initialisation and the tool listing warned about (a one-shot session's result carries them, so no query is needed). */
  warnings?: string[];
}
