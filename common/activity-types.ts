import type { CheckPinsInput, CheckPinsResult } from './pins';
import type { SubagentSpec } from './delegation-types';
import type { ToolDefinition, ToolResult } from './messages';
import type { ListToolsInput, ListToolsResult, McpCallInput } from './offered-tools';
import type { DescribeModelInput, ModelCallInput, ModelCallResult, ModelDescription, SummarizeInput, SummarizeResult } from './model-call';
import type { RuntimeContext } from './runtime-context';
import type { InitializeResult } from './session-types';
import type { ToolName } from './tools';
import type { TranscriptPage, TranscriptRef, TranscriptSlice } from './transcript';
import type { VerifyInput, VerifyResult } from './verify-types';

/** Input of the agent-initialisation activity. */
export interface InitializeAgentActivityInput {
  bundlePath: string;
  agentId: string;
  outputRoots?: string[];
  /** `{project-root}` for a stand-alone bundle (see SessionInput.projectRoot). */
  projectRoot?: string;
  allowBroadProjectRoot?: boolean;
  /** The session's skill settings (see SessionInput.userSkills, skillFolders). */
  userSkills?: boolean;
  skillFolders?: string[];
  allowSecretFiles?: boolean;
  /** The session's own secret-file rules (see SessionInput.secretFiles). */
  secretFiles?: string[];
  allowHardLinks?: boolean;
  strict?: boolean;
  /** Find the agents this one may delegate to (sessions with delegation on); `agents`: the session's ids or patterns. */
  delegation?: { agents?: string[] };
  /** A subagent's instructions (a child started by `run_subagent`): its agent is made of them. */
  subagent?: SubagentSpec;
}

/**
 * Input of `callModelV2`: where the transcript stands instead of the transcript itself, so history
 * grows with the transcript and not with its square. The worker keeps a copy per session run.
 */
export interface ModelRefCallInput extends Omit<ModelCallInput, 'messages' | 'tools'> {
  transcript: TranscriptRef;
  /** Tool definitions; left out when `toolsKey` names definitions this worker was sent before in this run. */
  tools?: ToolDefinition[];
  /**
   * A key of the definitions (a hash of their JSON): with `tools`, the worker keeps them under it for
   * the run; without, it uses what it kept, and fails with `LoopwrightToolsUnknown` when it kept none
   * (the workflow then sends them again).
   */
  toolsKey?: string;
  /** The messages added since the model's previous reply, when they are small. */
  delta?: TranscriptSlice;
  /** Run the reply's calls of these read-only tools right after it, in this activity (inline reads). */
  inline?: InlineReads;
}

/**
 * Inline reads: built-in read-only tools that need no approval, which the model-call activity runs
 * as soon as the reply asks for them, returning their results with the reply. An iteration that
 * only reads is then one activity instead of an activity and a local activity per tool.
 */
export interface InlineReads {
  /** The tools whose calls may run inline. */
  tools: string[];
  /** The session's runtime context: sent with a run's first call (and when the worker asks), then kept by the worker per run. */
  context?: RuntimeContext;
}

/** Failure type of a model call that names tool definitions the worker does not hold (not retried: the workflow sends them). */
export const TOOLS_UNKNOWN = 'LoopwrightToolsUnknown';

/** The `patched` marker of inline reads (sessions recorded before it run every read as its own local activity). */
export const INLINE_READS_PATCH = 'loopwright-inline-reads';

/** Largest total of inline results one model call returns (JSON bytes); calls past it run as their own activities. */
export const INLINE_RESULTS_BYTES = 256 * 1024;

/** Input of `loadTranscriptPage`: a page of an earlier run's transcript, for the run that continues it. */
export interface TranscriptPageRequest {
  workflowId: string;
  runId: string;
  from: number;
  to: number;
  maxBytes: number;
}

/** A tool's activity: the session's runtime context and the arguments as the model sent them (unchecked). */
export type ToolActivityFunction = (ctx: RuntimeContext, args: unknown) => Promise<ToolResult>;

/**
 * The activities a session calls, by their registered names (the Web UI shows these names): the
 * ones below and one per tool, under the tool's name. The workflow imports only this type; the
 * worker supplies the implementation.
 */
export interface SessionActivities extends Record<ToolName, ToolActivityFunction> {
  initializeAgent(input: InitializeAgentActivityInput): Promise<InitializeResult>;
  /** The first model-call activity: the whole transcript in its input (kept for recorded histories). */
  callModel(input: ModelCallInput): Promise<ModelCallResult>;
  callModelV2(input: ModelRefCallInput): Promise<ModelCallResult>;
  loadTranscriptPage(input: TranscriptPageRequest): Promise<TranscriptPage>;
  /** A model call that summarises the oldest part of the model's view (context compaction). */
  summarizeContext(input: SummarizeInput): Promise<SummarizeResult>;
  /** Check a saved document against a checklist, item by item, with one model call (the verify phase). */
  verifyDocument(input: VerifyInput): Promise<VerifyResult>;
  /** The model's context window as the server reports it (never fails). */
  describeModel(input: DescribeModelInput): Promise<ModelDescription>;
  /** The tools a session offers: built-in, the worker's custom tools and its MCP servers' tools, after the allow-list. */
  listTools(input: ListToolsInput): Promise<ListToolsResult>;
  /** One call of an MCP server's tool. */
  callMcpTool(input: McpCallInput): Promise<ToolResult>;
  /** Hash the session's agent and active skills again; what changed since they were loaded (common/pins.ts). */
  checkPins(input: CheckPinsInput): Promise<CheckPinsResult>;
}
