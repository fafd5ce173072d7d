/**
 * MCP's shapes turned into Loopwright's: a server's tool list into what the model is offered (a
 * name it may call, a description, the input schema as function parameters, the hints approvals
 * are decided by), and a tool's result into the `ToolResult` sent back to the model as JSON.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolResult } from '../../common/messages';
import { mcpToolName } from './mcp-names';

/** What a server says of a tool's behaviour (MCP tool annotations; hints, not guarantees). */
export interface McpToolAnnotations {
  title?: string;
  /** The tool changes nothing. */
  readOnlyHint?: boolean;
  /** A change it makes may destroy something (meaningful only when not read-only). */
  destructiveHint?: boolean;
  /** Calling it again with the same arguments has no further effect. */
  idempotentHint?: boolean;
  /** It reaches outside the server (the web, other systems). */
  openWorldHint?: boolean;
}

/** One tool of a server as the model is offered it. */
export interface McpListedTool {
  /** The server's name in the configuration. */
  server: string;
  /** The tool's own name on the server (what `callTool` is given). */
  tool: string;
  /** The name the model calls it by (`server__tool`, made valid when needed). */
  name: string;
  description: string;
  /** The tool's input schema as OpenAI function parameters: a JSON schema of `type: 'object'`. */
  parameters: Record<string, unknown>;
  annotations?: McpToolAnnotations;
}

/** Tools of one server, and why any were left out or renamed. */
export interface McpToolListing {
  tools: McpListedTool[];
  warnings: string[];
}

/**
 * The tools of `server` as the model is offered them, in the server's order. A tool whose name
 * cannot be made a function name, or whose made-up name another tool already has, is left out with
 * a warning; a renamed tool is kept with one.
 */
export function toListedTools(server: string, tools: readonly Tool[]): McpToolListing {
  const listed: McpListedTool[] = [];
  const warnings: string[] = [];
  const taken = new Map<string, string>();
  for (const tool of tools) {
    const name = mcpToolName(server, tool.name);
    const shown = JSON.stringify(tool.name.length > 80 ? `${tool.name.slice(0, 80)}...` : tool.name);
    if (name === undefined) {
      warnings.push(`MCP server ${server}: tool ${shown} left out: no function name can be made of it`);
      continue;
    }
    const other = taken.get(name);
    if (other !== undefined) {
      warnings.push(`MCP server ${server}: tool ${shown} left out: its name ${name} is already taken by ${JSON.stringify(other)}`);
      continue;
    }
    taken.set(name, tool.name);
    if (name !== `${server}__${tool.name}`) warnings.push(`MCP server ${server}: tool ${shown} is offered as ${name} (its own name is not a valid function name)`);
    const annotations = toolAnnotations(tool);
    listed.push({
      server,
      tool: tool.name,
      name,
      description: tool.description ?? annotations?.title ?? '',
      parameters: toolParameters(tool.inputSchema),
      ...(annotations ? { annotations } : {}),
    });
  }
  return { tools: listed, warnings };
}

/**
 * A tool's input schema as function parameters: a copy without `$schema` (the model API has no use
 * for it, and some servers refuse it), always `type: 'object'` with `properties`.
 */
export function toolParameters(inputSchema: unknown): Record<string, unknown> {
  const schema: Record<string, unknown> =
    typeof inputSchema === 'object' && inputSchema !== null && !Array.isArray(inputSchema) ? (JSON.parse(JSON.stringify(inputSchema)) as Record<string, unknown>) : {};
  delete schema.$schema;
  schema.type = 'object';
  if (typeof schema.properties !== 'object' || schema.properties === null) schema.properties = {};
  return schema;
}

/** The annotations a server gave, keeping only the known fields of the right types; undefined when none. */
function toolAnnotations(tool: Tool): McpToolAnnotations | undefined {
  const given = (tool.annotations ?? {}) as Record<string, unknown>;
  const out: McpToolAnnotations = {};
  const title = typeof given.title === 'string' ? given.title : tool.title;
  if (typeof title === 'string' && title !== '') out.title = title;
  for (const key of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
    if (typeof given[key] === 'boolean') out[key] = given[key];
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

type ContentPart = CallToolResult['content'][number];

/**
 * A tool's result as the model gets it. Text parts are joined (one per line) into `content`;
 * images, audio and binary resources become a line naming their type and size; embedded text
 * resources keep their text under a line with their URI; resource links become a line with their
 * URI. `structuredContent` is returned as `structured` when there is no text part. A result with
 * `isError` becomes `{success: false, error}` with its text.
 */
export function toToolResult(result: CallToolResult): ToolResult {
  const parts = Array.isArray(result.content) ? result.content : [];
  const content = parts.map(describePart).join('\n');
  if (result.isError === true) {
    const structured = result.structuredContent === undefined ? '' : JSON.stringify(result.structuredContent);
    return { success: false, error: content || structured || 'the tool reported an error without saying what' };
  }
  const hasText = parts.some((part) => part.type === 'text');
  return {
    success: true,
    content,
    ...(!hasText && result.structuredContent !== undefined ? { structured: result.structuredContent } : {}),
  };
}

function describePart(part: ContentPart): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'image':
    case 'audio':
      return `[${part.type} ${part.mimeType}, ${base64Bytes(part.data)} bytes]`;
    case 'resource': {
      const resource = part.resource;
      const mime = resource.mimeType ? ` ${resource.mimeType}` : '';
      if ('text' in resource && typeof resource.text === 'string') return `[resource ${resource.uri}${mime}]\n${resource.text}`;
      const blob = 'blob' in resource && typeof resource.blob === 'string' ? resource.blob : '';
      return `[resource ${resource.uri}${mime}, ${base64Bytes(blob)} bytes]`;
    }
    case 'resource_link':
      return `[resource link ${part.uri}${part.name ? ` (${part.name})` : ''}${part.mimeType ? ` ${part.mimeType}` : ''}]`;
    default:
      return `[${String((part as { type?: unknown }).type)} content]`;
  }
}

/** Decoded size of base64 `data`, without decoding it. */
function base64Bytes(data: string): number {
  const clean = data.replace(/\s+/g, '');
  if (clean.length === 0) return 0;
  const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.floor((clean.length * 3) / 4) - padding;
}
