import type { AgentPin } from './pins';
import type { McpServerConfig } from './offered-tools';
import type { SystemMessage, TokenUsage, ToolDefinition } from './messages';
import type { ModelSettings } from './model-call';
import type { RuntimeContext } from './runtime-context';
import type { BudgetSettings, BudgetState } from './budget-types';

export type { BudgetChange, BudgetSettings, BudgetState, BudgetUse, ModelPrice } from './budget-types';
export type { ContinuedSession, PendingTurn } from './continued-types';
import type { ContinuedSession } from './continued-types';
import type { CommandCheck, VerificationReport, VerifySettings } from './verify-types';
import type { DelegateAgent, DelegatedBy, DelegationSettings } from './delegation-types';

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

/** Which tool calls need a human yes before they run. */
export type ApprovalPolicy = 'none' | 'writes' | 'all' | string[];

/** Approvals of a session. */
export interface ApprovalSettings {
  /** `none` (the client API's and `run --once`'s default), `writes` (= save_output; chat's default), `all`, or tool names. */
  policy?: ApprovalPolicy;
  /** How long a call waits for an answer (Temporal duration); unset waits for as long as it takes. */
  timeout?: string;
  /** What happens when the timeout passes (default `deny`). */
  onTimeout?: 'approve' | 'deny';
}

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
}

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
  /** Folders `save_output` may write to (else the bundle's configured output folder). Trusted: the user's own setting. */
  outputRoots?: string[];
  /**
   * `{project-root}` of a stand-alone bundle, absolute: the folder the user works in (the command
   * line records its working folder here when the session starts). An installed BMAD tree keeps the
   * folder that holds `bmad/`. Trusted: the user's own setting.
   */
  projectRoot?: string;
  /** Accept `/`, the home folder or a parent of it as the project root (refused by default). */
  allowBroadProjectRoot?: boolean;
  /** Offer the user's own Agent Skills too (`~/.agents/skills`, `~/.claude/skills`, ...), after the project's. */
  userSkills?: boolean;
  /** More Agent Skills folders (absolute), after the project's and before the user's. */
  skillFolders?: string[];
  /** Let tools read and write secret files (credentials, keys, .env*, .git/...; see the README); refused by default. */
  allowSecretFiles?: boolean;
  /**
   * This session's own secret-file rules, one gitignore-style line each, applied after the default
   * list and the project's `.loopwright/secret-files`: `*.secret` adds a pattern, `!docs/demo.pem`
   * lets a default through. A line that is not a pattern fails initialisation, naming it.
   */
  secretFiles?: string[];
  /** Let tools read files with more than one hard link (a path check cannot see where they point); refused by default. */
  allowHardLinks?: boolean;
  /** Fail at initialisation when a file a critical action names is missing (default: warn and go on). */
  strict?: boolean;
  /** End the session after this long without a message (Temporal duration string, default 24 hours). */
  idleTimeout?: string;
  /** Activity timeouts (Temporal duration strings such as '30 seconds'). */
  timeouts?: SessionTimeouts;
  /** Tool calls that wait for a human yes (default none). */
  approval?: ApprovalSettings;
  /** Offer the model `ask_question` and `task_completion` (default true). */
  loopBreakers?: boolean;
  /**
   * Inline reads (default true): the model-call activity runs the reply's built-in read-only tool
   * calls that need no approval right after the reply and returns their results with it, so an
   * iteration that only reads is one activity. False: every read runs as its own local activity
   * (one history marker and Web UI entry per read).
   */
  inlineReads?: boolean;
  /**
   * The tools the model is offered, by name or pattern (`*` for any run of characters, e.g.
   * `github__*` for every tool of the MCP server `github`); default: the agent's `tools:` in
   * bundle.yaml, else every built-in, custom and MCP tool the worker has.
   */
  tools?: string[];
  /** MCP servers of this session, added to (and winning over) the project's `.mcp.json`. */
  mcpServers?: Record<string, McpServerConfig>;
  /** Read the project's `.mcp.json` (default true). */
  projectMcpConfig?: boolean;
  /** MCP tools that run without approval, by name or pattern (`server__*`); read-only ones never wait. */
  allowTools?: string[];
  /** Tell the model once when this share of the turn's iterations is used (default 0.8; 0 turns it off). */
  iterationWarning?: number;
  /** End a turn `stuck` when the same call fails with the same error this many times (default 3). */
  maxRepeatedFailures?: number;
  /**
   * Start from another session's conversation: its transcript `[0, to)` (the first `turns` turns),
   * read from run `runId` and checked against `hash`. Set by `SessionHandle.branch`.
   */
  branchFrom?: { workflowId: string; runId: string; to: number; hash: string; turns: number };
  /**
   * The host whose workers hold the bundle and project (see common/files-host.ts): activities that
   * touch files run only there; model calls on any worker. Absent: any worker (one machine, or a
   * shared file system). `run` and `chat` record this machine's host id.
   */
  filesHost?: string;
  /** Upsert the Loopwright* search attributes (set by the client when the namespace has them registered). */
  searchAttributes?: boolean;
  /** When a run hands over to a fresh one (continue-as-new); defaults keep well below Temporal's warnings. */
  continueAsNew?: ContinueAsNewSettings;
  /** Output limit, temperature, reasoning effort, tool choice and extra body fields of every model call. */
  modelSettings?: ModelSettings;
  /** Models tried in order when a call keeps failing for a reason a retry on the same model cannot fix (not found, refused access, unprocessable). */
  fallbackModels?: string[];
  /** How often a reply cut off at the output limit is continued and joined (default 2; 0: the turn ends `truncated`). */
  maxContinuations?: number;
  /** The model's context window and when the model's view of the transcript is compacted. */
  context?: ContextSettings;
  /** Token and cost budgets per turn and per session (default none). */
  budget?: BudgetSettings;
  /** The verify phase: documents a workflow's checklist checks are verified after they are saved (default on, 3 attempts). */
  verify?: VerifySettings;
  /** Delegation to other agents of the bundle (`delegate_task`): who may be called, how deep, how many per turn. */
  delegation?: DelegationSettings;
  /** Set on a child session by the session that delegated to it. */
  delegatedBy?: DelegatedBy;
  /** Set by the session itself when it continues as new: what the next run carries over. */
  continued?: ContinuedSession;
}

/**
 * Thresholds on what one run adds to its history. A run continues as new once it passes one, at a
 * point where no turn is running or between two iterations of a long turn.
 */
export interface ContinueAsNewSettings {
  /** History bytes a run may add (default 4 MB; Temporal warns at 10 MB and stops a run at 50 MB). */
  maxHistoryBytes?: number;
  /** History events a run may add (default 4,000; Temporal warns at 10,240 and stops at 51,200). */
  maxHistoryEvents?: number;
}

/** The context window and its compaction. */
export interface ContextSettings {
  /** The model's context window in tokens (default: what the server reports, else DEFAULT_CONTEXT_WINDOW). */
  window?: number;
  /** Compact once the next prompt would pass this share of the window less the output reserve (default 0.8). */
  compactAt?: number;
  /** Latest exchanges (model replies with their tool results) that are never pruned or summarised (default 3). */
  keepRecent?: number;
  /** Summarise the oldest part with a model call once pruning is not enough (default true). */
  summarize?: boolean;
  /** Longest summary in tokens (default 1024, at most a tenth of the window). */
  summaryTokens?: number;
}

/** One compaction of the model's view: what it did and what it cost. */
export interface CompactionRecord {
  turn: number;
  /** Why: the next prompt would pass the threshold, the server refused a prompt as too long, or the user asked. */
  reason: 'threshold' | 'context_length' | 'requested';
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

/** Activity timeouts of a session; each has a default suited to a hosted model. */
export interface SessionTimeouts {
  /** Longest one model call may take, retries aside (default 10 minutes). */
  modelCall?: string;
  /** A model call whose worker sends no heartbeat for this long is retried elsewhere (default 30 seconds). */
  modelHeartbeat?: string;
  /** Longest one tool call may take (default 1 minute). */
  tool?: string;
  /** How long a file activity waits for a worker of the files host before the session says it waits (default 15 seconds; it then waits on, longer each time). */
  filesWait?: string;
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
}

/** Result of the session workflow when it ends normally. */
export interface SessionResult {
  turns: number;
  lastTurn?: TurnResult;
  usage: TokenUsage;
  endedBy: 'one_shot' | 'end_signal' | 'idle_timeout';
  /** What initialisation and the tool listing warned about (a one-shot session's result carries them, so no query is needed). */
  warnings?: string[];
}
