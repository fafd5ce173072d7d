/**
 * The tools a session offers beyond the built-in ones: custom TypeScript tools a worker registers
 * and tools of MCP servers. What a session offers is decided once by the `listTools` activity and
 * recorded in history (replay never depends on what a worker has registered since); the workflow
 * routes, approves and summarises calls from these records. Pure data: workflow code imports it.
 */
import type { ToolDefinition } from './messages';
import type { RuntimeContext } from './runtime-context';

/** What the workflow needs of any tool to run, approve and show a call of it. */
export interface ToolPolicy {
  /** The name the model calls it by. */
  name: string;
  /** `read`: no side effects (may run as a local activity). `write`: changes something. */
  access: 'read' | 'write';
  /** Retry class of its activity (see stubs/activity-proxies.ts). */
  retries: 'quick' | 'persistent' | 'once';
  /** `required`: every call waits for a human yes whatever the session's approval policy. */
  approval?: 'required';
  /** The argument a person recognises a call by (a path, a URL, a query). */
  target?: string;
  /** The argument that carries what is written. */
  content?: string;
  /** The argument holding the text a write replaces (see `ToolSpec.replaces`). */
  replaces?: string;
  /** The arguments that change how a write acts (see `ToolSpec.modes`). */
  modes?: readonly string[];
}

/** A tool a session offers, as recorded. */
export interface OfferedTool extends ToolPolicy {
  /** `custom`: a worker's own activity named like the tool. `mcp`: a tool of an MCP server, called through `callMcpTool`. */
  kind: 'custom' | 'mcp';
  /**
   * For `mcp`: the server's name in the configuration, the tool's own name there, and whether the
   * server marks it read-only or idempotent (a call cut off by the server dying is made again).
   */
  mcp?: { server: string; tool: string; retrySafe?: boolean };
}

/** A tool as the workflow looks it up: a built-in definition or an offered tool. */
export type SessionTool = ToolPolicy | OfferedTool;

/** The offered-tool record of `tool`, when it is not built in. */
export function offeredOf(tool: SessionTool | undefined): OfferedTool | undefined {
  return tool !== undefined && 'kind' in tool ? tool : undefined;
}

/**
 * An MCP server as configured: a command the worker starts (stdio) or a URL (streamable HTTP).
 * The shape of `.mcp.json`'s `mcpServers` entries. `${VAR}` and `${VAR:-default}` in `args`,
 * `env`, `url` and `headers` are expanded from the worker's environment when it connects, so
 * tokens never enter history. `alwaysAllow` names tools that need no approval; `disabled` skips it.
 */
export type McpServerConfig = McpStdioServer | McpHttpServer;

interface McpServerCommon {
  /** Tools of this server that run without approval (their own names, not namespaced; `*` for all). */
  alwaysAllow?: string[];
  /** Leave this server out. */
  disabled?: boolean;
  /** Longest wait for one call, in milliseconds (default 60,000). */
  timeout?: number;
}

export interface McpStdioServer extends McpServerCommon {
  type?: 'stdio';
  command: string;
  args?: string[];
  /** The server's environment besides a few harmless defaults (PATH, HOME, ...): only what is named here. */
  env?: Record<string, string>;
  /** Working folder (default: the session's project root). */
  cwd?: string;
}

export interface McpHttpServer extends McpServerCommon {
  type?: 'http' | 'streamable-http';
  url: string;
  headers?: Record<string, string>;
}

/** Input of the `listTools` activity. */
export interface ListToolsInput {
  /** The session's project root: where `.mcp.json` is looked for and stdio servers run. */
  projectRoot: string;
  /** The bundle and agent, for the agent's own allow-list (`tools:` in bundle.yaml). */
  bundlePath: string;
  agentId: string;
  /** The session's allow-list (see SessionInput.tools). */
  tools?: string[];
  /** MCP servers given with the session, added to (and winning over) the project's `.mcp.json`. */
  mcpServers?: Record<string, McpServerConfig>;
  /** Read the project's `.mcp.json` (default true). */
  projectMcpConfig?: boolean;
  /** Tools that run without approval (names or `server__*` patterns). */
  allowTools?: string[];
  /** The session's project has Agent Skills: `activate_skill` is offered (and `list_files`, `search_files`). */
  skills?: boolean;
  /** Commands are on: `run_command` is offered (and `list_files`, `search_files`). */
  commands?: boolean;
}

/** Result of `listTools`: the definitions the model is sent and how each non-built-in tool is run. */
export interface ListToolsResult {
  /** Every tool the model is offered that runs as an activity, built-in ones first, in order. */
  tools: ToolDefinition[];
  /** The offered tools that are not built in. */
  offered: OfferedTool[];
  /** The MCP servers the offered tools come from, as configured (variables not expanded). */
  mcpServers: Record<string, McpServerConfig>;
  /** Servers that could not be listed, names that could not be used, ...; `state.warnings`. */
  warnings?: string[];
}

/** Input of the `callMcpTool` activity. */
export interface McpCallInput {
  server: string;
  config: McpServerConfig;
  /** The tool's own name on the server. */
  tool: string;
  /** The name the model called (for summaries, metrics and messages). */
  name: string;
  args: unknown;
  /** The server says the tool is read-only or idempotent: a call cut off by the server dying is made again. */
  retrySafe: boolean;
  /** The session's project root (stdio servers run there unless `cwd` says otherwise). */
  projectRoot: string;
  /** The session's secret-file rules: a path argument naming a secret file is refused as `read_file` refuses it. */
  secrets?: Pick<RuntimeContext, 'allowSecretFiles' | 'secretFiles'>;
}

/** Failure type of a call to a tool that the worker running it has not registered. */
export const TOOL_NOT_REGISTERED = 'LoopwrightToolNotRegistered';
/** Failure type of an MCP server that cannot be started, reached or understood. */
export const MCP_SERVER_FAILED = 'LoopwrightMcpServerFailed';
/** Failure type of a bad MCP configuration (names the file and field). */
export const MCP_CONFIG_INVALID = 'LoopwrightMcpConfigInvalid';

/** Model API name rule for function names (OpenAI: letters, digits, `_` and `-`, at most 64). */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Separator between an MCP server's name and its tool's name in the name the model sees. */
export const MCP_NAME_SEPARATOR = '__';
