/**
 * The tool settings of a new session (run and chat): which tools the model is offered, the MCP
 * servers added to the project's `.mcp.json` (read here from the files given), whether that file is
 * read, and which MCP tools run without approval; from the command line's options and, for the
 * options not given, the LOOPWRIGHT_* environment variables. Only settings that were given are set,
 * so the session's own defaults apply to the rest (the agent's allow-list, the project's servers).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { McpServerConfig } from '../../common/offered-tools';
import { sessionInputProblem } from '../../common/session-input-schema';
import type { SessionInput } from '../../common/session-types';
import { UsageError } from '../output';
import { toolPatternList } from './option-values';
import { applyEnvironmentDefaults, type EnvironmentDefaults } from './session-settings';

/** The tool flags (run and chat), as the command line parses them. */
export interface ToolSettingOptions {
  /** `--tools <list>`: the allow-list of the session. */
  tools?: string[];
  /** `--mcp-config <file>`, repeatable: files in `.mcp.json` format, in order. */
  mcpConfig?: string[];
  /** False with `--no-project-mcp`. */
  projectMcp?: boolean;
  /** `--allow-tool <pattern>`, repeatable. */
  allowTool?: string[];
  /** False with `--no-delegation`. */
  delegation?: boolean;
  /** `--delegate-to <list>`: the agents `delegate_task` may call (ids or `*` patterns). */
  delegateTo?: string[];
  /** `--delegation-depth <n>`, `--delegations-per-turn <n>`. */
  delegationDepth?: number;
  delegationsPerTurn?: number;
}

/** The session settings these flags give. */
export type ToolSessionSettings = Pick<SessionInput, 'tools' | 'mcpServers' | 'projectMcpConfig' | 'allowTools' | 'delegation'>;

/** The options with an environment default: the variable, and how its value is read. */
const ENV_DEFAULTS = {
  tools: ['LOOPWRIGHT_TOOLS', toolPatternList],
  allowTool: ['LOOPWRIGHT_ALLOW_TOOLS', toolPatternList],
} as const satisfies EnvironmentDefaults<ToolSettingOptions>;

/** The environment variables that give defaults to the tool flags. */
export const TOOL_SETTINGS_ENV_NAMES: readonly string[] = Object.values(ENV_DEFAULTS).map(([name]) => name);

/** Largest `--mcp-config` file read. */
const MAX_MCP_CONFIG_BYTES = 1024 * 1024;

/**
 * The session settings of the options and the environment; only what was given is set. The
 * `--mcp-config` files are read here (relative to `cwd`); a file that cannot be read, is not JSON
 * or holds a bad server is a usage mistake naming the file and the field.
 */
export function toolSessionSettings(options: ToolSettingOptions, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): ToolSessionSettings {
  const o = applyEnvironmentDefaults(options, ENV_DEFAULTS, env);
  const mcpServers = readMcpConfigFiles(o.mcpConfig ?? [], cwd);
  const delegation = {
    ...(o.delegation === false ? { enabled: false } : {}),
    ...(o.delegateTo?.length ? { agents: o.delegateTo } : {}),
    ...(o.delegationDepth !== undefined ? { maxDepth: o.delegationDepth } : {}),
    ...(o.delegationsPerTurn !== undefined ? { maxChildren: o.delegationsPerTurn } : {}),
  };
  return {
    ...(Object.keys(delegation).length ? { delegation } : {}),
    ...(o.tools?.length ? { tools: o.tools } : {}),
    ...(Object.keys(mcpServers).length ? { mcpServers } : {}),
    ...(o.projectMcp === false ? { projectMcpConfig: false } : {}),
    ...(o.allowTool?.length ? { allowTools: o.allowTool } : {}),
  };
}

/**
 * The servers of the files, a later file's server replacing an earlier one of the same name. Their
 * strings are kept as written: `${VAR}` is expanded by the worker when it connects, so a token in
 * the worker's environment never enters the session's history.
 */
export function readMcpConfigFiles(files: readonly string[], cwd: string = process.cwd()): Record<string, McpServerConfig> {
  const servers: Record<string, McpServerConfig> = {};
  for (const file of files) Object.assign(servers, readMcpConfigFile(file, cwd));
  return servers;
}

function readMcpConfigFile(file: string, cwd: string): Record<string, McpServerConfig> {
  const where = `--mcp-config ${file}`;
  let bytes: Buffer;
  try {
    // Read as given (a pipe such as <(...) too), and refused when it is larger than any config.
    bytes = fs.readFileSync(path.resolve(cwd, file));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a folder, not a file' : (err as Error).message;
    throw new UsageError(`${where}: cannot read the file: ${reason}`);
  }
  if (bytes.length > MAX_MCP_CONFIG_BYTES) throw new UsageError(`${where}: the file is larger than ${MAX_MCP_CONFIG_BYTES} bytes`);
  let data: unknown;
  try {
    data = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new UsageError(`${where}: not valid JSON: ${(err as Error).message}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new UsageError(`${where}: expected a JSON object {"mcpServers": {"<name>": {...}}}`);
  }
  const servers = (data as Record<string, unknown>).mcpServers;
  if (servers === undefined) throw new UsageError(`${where}: mcpServers: missing; the servers go in {"mcpServers": {"<name>": {...}}}`);
  // The rules the session checks its input by: a server name, then a command (stdio) or a URL.
  const problem = sessionInputProblem({ bundlePath: file, agentId: file, mcpServers: servers });
  if (problem !== undefined) throw new UsageError(`${where}: ${problem}`);
  return servers as Record<string, McpServerConfig>;
}
