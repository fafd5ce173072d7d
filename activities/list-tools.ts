/**
 * The `listTools` activity: which tools a session offers. The built-in tools, the worker's custom
 * tools and the tools of the MCP servers configured for the session (the project's `.mcp.json`,
 * then the session's own), narrowed by the allow-list (the session's, else the agent's `tools:` in
 * bundle.yaml). Its result is recorded in history, so replay never depends on what a worker has
 * registered or what a server lists later. Problems with one source (a server that does not
 * start, a bad `.mcp.json`, a name the model API refuses) are warnings: the session starts with
 * the rest.
 */
import path from 'node:path';
import { Context } from '@temporalio/activity';
import type { ToolDefinition } from '../common/messages';
import { type ListToolsInput, type ListToolsResult, type McpServerConfig, type OfferedTool } from '../common/offered-tools';
import { builtInToolDefinitions } from '../common/tool-definitions';
import { allowedByPatterns } from '../common/tool-patterns';
import { agentToolAllowList } from '../bundle/agent-tools';
import type { CustomTool } from './tools/custom-tool';
import { MCP_CONFIG_FILE, readMcpConfig } from './mcp/mcp-config';
import { heartbeatEverySecond } from './model/heartbeat';
import type { McpListedTool } from './mcp/mcp-result';

/** Lists one MCP server's tools (the worker's connection pool). */
export interface McpToolLister {
  listTools(server: string, config: McpServerConfig, projectRoot: string, signal?: AbortSignal): Promise<{ tools: McpListedTool[]; warnings: string[] }>;
}

/** What the activity lists from. */
export interface ToolSources {
  custom: readonly CustomTool[];
  mcp?: McpToolLister;
}

/** Argument names that usually say what a call acts on, in the order they are preferred. */
const TARGET_NAMES = ['path', 'file_path', 'filePath', 'file', 'filename', 'uri', 'url', 'query', 'command', 'name', 'message'];

export function createListTools(sources: ToolSources): (input: ListToolsInput) => Promise<ListToolsResult> {
  return async (input) => {
    const warnings: string[] = [];
    const heartbeat = heartbeater();
    const allow = input.tools ?? (await agentAllowList(input, warnings));
    const tools: ToolDefinition[] = [];
    const offered: OfferedTool[] = [];
    const taken = new Set<string>();
    const offer = (definition: ToolDefinition, tool?: OfferedTool): void => {
      const name = definition.function.name;
      if (allow !== undefined && !allowedByPatterns(allow, name)) return;
      if (taken.has(name)) {
        warnings.push(`${name} is offered twice; the ${tool?.kind === 'mcp' ? `tool of MCP server ${tool.mcp?.server}` : 'second'} is left out`);
        return;
      }
      taken.add(name);
      tools.push(definition);
      if (tool) offered.push(tool);
    };
    for (const definition of builtInToolDefinitions({ skills: input.skills === true, commands: input.commands === true })) offer(definition);
    for (const tool of sources.custom) offer(tool.definition, tool.offered);

    const servers = await configuredServers(input, warnings);
    const used: Record<string, McpServerConfig> = {};
    if (Object.keys(servers).length > 0 && sources.mcp === undefined) warnings.push('MCP servers are configured, but this worker has no MCP support');
    const lister = sources.mcp;
    if (lister) {
      const listings = await Promise.all(
        Object.entries(servers).map(async ([server, config]) => {
          try {
            return { server, config, ...(await lister.listTools(server, config, input.projectRoot, heartbeat.signal)) };
          } catch (err) {
            warnings.push(`MCP server ${server}: ${(err as Error).message}`);
            return undefined;
          }
        }),
      );
      for (const listing of listings) {
        if (!listing) continue;
        warnings.push(...listing.warnings);
        const before = offered.length;
        for (const tool of listing.tools) offer(mcpDefinition(tool), mcpOffered(tool, listing.config, input.allowTools));
        if (offered.length > before) used[listing.server] = listing.config;
      }
    }
    heartbeat.stop();
    if (allow !== undefined) {
      for (const pattern of allow) if (!tools.some((t) => allowedByPatterns([pattern], t.function.name))) warnings.push(`The allow-list entry ${pattern} matches no tool`);
    }
    return { tools, offered, mcpServers: used, ...(warnings.length > 0 ? { warnings } : {}) };
  };
}

/** The agent's own allow-list; a bundle the loader cannot read here gives none (initialisation already read it). */
async function agentAllowList(input: ListToolsInput, warnings: string[]): Promise<string[] | undefined> {
  try {
    return await agentToolAllowList(input.bundlePath, input.agentId);
  } catch (err) {
    warnings.push(`The agent's tools: could not be read (${(err as Error).message}); every tool is offered`);
    return undefined;
  }
}

/** The project's `.mcp.json` servers, then the session's (winning by name), without disabled ones. */
async function configuredServers(input: ListToolsInput, warnings: string[]): Promise<Record<string, McpServerConfig>> {
  let project: Record<string, McpServerConfig> = {};
  if (input.projectMcpConfig !== false) {
    try {
      project = await readMcpConfig(path.join(input.projectRoot, MCP_CONFIG_FILE));
    } catch (err) {
      warnings.push(`${(err as Error).message}; its servers are left out`);
    }
  }
  const all = { ...project, ...(input.mcpServers ?? {}) };
  return Object.fromEntries(Object.entries(all).filter(([, config]) => config.disabled !== true));
}

function mcpDefinition(tool: McpListedTool): ToolDefinition {
  const title = tool.annotations?.title;
  const description = tool.description.trim() !== '' ? tool.description : (title ?? `Tool ${tool.tool} of the MCP server ${tool.server}`);
  return { type: 'function', function: { name: tool.name, description, parameters: tool.parameters } };
}

/**
 * How an MCP tool is run and approved: read-only when the server says so (`readOnlyHint`), else a
 * write that needs approval unless the server's `alwaysAllow` or the session's `allowTools` lets it.
 */
export function mcpOffered(tool: McpListedTool, config: McpServerConfig, allowTools: readonly string[] | undefined): OfferedTool {
  const readOnly = tool.annotations?.readOnlyHint === true;
  const allowed = readOnly || (config.alwaysAllow ?? []).some((t) => t === '*' || t === tool.tool) || allowedByPatterns(allowTools ?? [], tool.name);
  const target = targetArgumentOf(tool.parameters);
  return {
    name: tool.name,
    kind: 'mcp',
    access: readOnly ? 'read' : 'write',
    retries: 'quick',
    ...(target !== undefined ? { target } : {}),
    ...(allowed ? {} : { approval: 'required' as const }),
    mcp: { server: tool.server, tool: tool.tool, ...(readOnly || tool.annotations?.idempotentHint === true ? { retrySafe: true } : {}) },
  };
}

/** The string argument a person recognises a call by: a known name, else the first required string. */
function targetArgumentOf(schema: Record<string, unknown>): string | undefined {
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown }>;
  const strings = Object.keys(properties).filter((key) => properties[key]?.type === 'string');
  const known = TARGET_NAMES.find((name) => strings.includes(name));
  if (known) return known;
  const required = Array.isArray(schema.required) ? (schema.required as unknown[]) : [];
  return strings.find((key) => required.includes(key));
}

/**
 * Heartbeats while servers start (inside an activity), with the activity's cancellation signal. It
 * beats every second: the session's tool heartbeat timeout (10 s by default, as short as 2) bounds
 * how long a lost worker holds the listing.
 */
function heartbeater(): { signal?: AbortSignal; stop(): void } {
  let signal: AbortSignal | undefined;
  try {
    signal = Context.current().cancellationSignal;
  } catch {
    // Outside an activity: nothing to beat to, nothing cancels.
  }
  return { signal, stop: heartbeatEverySecond() };
}
