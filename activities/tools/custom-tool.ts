/**
 * Custom tools: a user's own TypeScript function offered to the model next to the built-in tools.
 * `defineTool` takes a zod object schema for the arguments (it gives both the JSON schema the model
 * sees and the check of what the model sends) and the function; the worker registers the tool as
 * an activity named like the tool, so its calls have the same durability, timeouts, heartbeats,
 * cancellation, approvals and Web UI summaries as the built-in ones.
 *
 *   const weather = defineTool({
 *     name: 'get_weather', description: 'Current weather of a city',
 *     parameters: z.object({ city: z.string() }), access: 'read', target: 'city',
 *     run: async ({ city }) => `Sunny in ${city}`,
 *   });
 *   await createWorker({ connection, tools: [weather] });
 */
import { z } from 'zod';
import type { ToolDefinition, ToolResult } from '../../common/messages';
import type { OfferedTool } from '../../common/offered-tools';
import { MCP_NAME_SEPARATOR, TOOL_NAME_PATTERN } from '../../common/offered-tools';
import type { RuntimeContext } from '../../common/runtime-context';
import { LOOP_TOOL_NAMES, TOOL_NAMES } from '../../common/tools';
import { toFunctionParameters } from '../../common/tool-definitions';
import { type ToolActivity, toToolActivity } from './activity-wrapper';
import { parseToolArgs } from './parse-args';

/** What a custom tool's function is given besides its arguments. */
export interface ToolContext {
  /** Aborted when the call is cancelled (an interrupt, a timeout): stop work and return or throw. */
  signal: AbortSignal;
  /** The session's folders and variables, as the built-in tools see them. */
  session: Pick<RuntimeContext, 'projectRoot' | 'bundleRoot' | 'writeRoots' | 'variables'>;
}

/** Thrown by a tool's function for a failure the model should hear about at once (no retry). */
export class ToolError extends Error {
  override name = 'ToolError';
}

/** How a custom tool is declared. */
export interface CustomToolOptions<S extends z.ZodObject> {
  /** The name the model calls it by: letters, digits, `_` and `-`, at most 64, no `__` (that marks MCP tools). */
  name: string;
  /** What the tool does, told to the model. */
  description: string;
  /** The arguments, as a zod object schema. */
  parameters: S;
  /** `read`: changes nothing (approval policy `writes` leaves it alone; it may run as a local activity). Default `write`. */
  access?: 'read' | 'write';
  /** The argument a person recognises a call by (a path, a city): Web UI summaries, approvals and progress show it. */
  target?: keyof z.infer<S> & string;
  /** The argument that carries what is written: summaries show its size, approvals its start. */
  content?: keyof z.infer<S> & string;
  /** Retry class: `quick` (default for reads) or `persistent` (default for writes: longer backoff). */
  retries?: 'quick' | 'persistent';
  /** Every call waits for a human yes, whatever the session's approval policy. */
  needsApproval?: boolean;
  /**
   * The function. A string is returned to the model as `content`; an object with a boolean
   * `success` is returned as it is; anything else as `result`. A `ToolError` becomes an error
   * result at once; any other exception is retried like an activity failure, then reported.
   */
  run(args: z.infer<S>, context: ToolContext): Promise<unknown> | unknown;
}

/** A custom tool, ready for `createWorker({ tools })`, `createActivities({ tools })` or `LoopwrightPlugin`. */
export interface CustomTool {
  readonly name: string;
  /** How the session runs, approves and shows it (recorded in history when a session starts). */
  readonly offered: OfferedTool;
  /** What the model is sent. */
  readonly definition: ToolDefinition;
  /** The activity the worker registers under `name`. */
  readonly activity: ToolActivity;
}

/** A custom tool the worker cannot register; the message names the tool and the rule. */
export class CustomToolError extends Error {
  override name = 'CustomToolError';
}

/** Declares a custom tool. Throws `CustomToolError` for a name the model API or Loopwright cannot take. */
export function defineTool<S extends z.ZodObject>(options: CustomToolOptions<S>): CustomTool {
  const { name } = options;
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    throw new CustomToolError(`Tool name ${JSON.stringify(name)}: use letters, digits, _ and -, at most 64 characters`);
  }
  if (name.includes(MCP_NAME_SEPARATOR)) throw new CustomToolError(`Tool name ${name}: "${MCP_NAME_SEPARATOR}" is kept for MCP tools (server${MCP_NAME_SEPARATOR}tool)`);
  if ((TOOL_NAMES as readonly string[]).includes(name) || (LOOP_TOOL_NAMES as readonly string[]).includes(name) || RESERVED_NAMES.has(name)) {
    throw new CustomToolError(`Tool name ${name}: taken by a built-in tool or activity`);
  }
  if (!(options.parameters instanceof z.ZodObject)) throw new CustomToolError(`Tool ${name}: parameters must be a zod object schema (z.object({...}))`);
  if (typeof options.description !== 'string' || options.description.trim() === '') throw new CustomToolError(`Tool ${name}: a description is required (the model reads it)`);
  if (typeof options.run !== 'function') throw new CustomToolError(`Tool ${name}: run must be a function`);
  const shape = Object.keys(options.parameters.shape);
  for (const key of ['target', 'content'] as const) {
    const value = options[key];
    if (value !== undefined && !shape.includes(value)) throw new CustomToolError(`Tool ${name}: ${key} names ${value}, which is not one of its parameters (${shape.join(', ')})`);
  }
  const access = options.access ?? 'write';
  const offered: OfferedTool = {
    name,
    kind: 'custom',
    access,
    retries: options.retries ?? (access === 'read' ? 'quick' : 'persistent'),
    ...(options.target !== undefined ? { target: options.target } : {}),
    ...(options.content !== undefined ? { content: options.content } : {}),
    ...(options.needsApproval ? { approval: 'required' as const } : {}),
  };
  const definition: ToolDefinition = {
    type: 'function',
    function: { name, description: options.description, parameters: toFunctionParameters(options.parameters) },
  };
  const activity = toToolActivity(name, async (ctx, args, runOptions) => {
    const parsed = parseToolArgs(name, options.parameters, args);
    if (!parsed.ok) return { success: false, error: parsed.error };
    const signal = runOptions?.signal ?? new AbortController().signal;
    try {
      const value = await options.run(parsed.value, { signal, session: { projectRoot: ctx.projectRoot, bundleRoot: ctx.bundleRoot, writeRoots: ctx.writeRoots, variables: ctx.variables } });
      return toToolResult(value);
    } catch (err) {
      if (err instanceof ToolError) return { success: false, error: err.message };
      throw err;
    }
  });
  return Object.freeze({ name, offered, definition, activity });
}

/** Activity names of the engine, which a tool may not take. */
const RESERVED_NAMES = new Set(['initializeAgent', 'callModel', 'callModelV2', 'summarizeContext', 'describeModel', 'loadTranscriptPage', 'listTools', 'callMcpTool']);

/** What a tool's function returned, as a tool result. */
function toToolResult(value: unknown): ToolResult {
  if (typeof value === 'string') return { success: true, content: value };
  if (value === undefined || value === null) return { success: true };
  if (typeof value === 'object' && !Array.isArray(value) && typeof (value as { success?: unknown }).success === 'boolean') return value as ToolResult;
  return { success: true, result: value };
}

/** Checks a worker's custom tools as a set: each a `defineTool` result, no name twice. */
export function checkCustomTools(tools: readonly CustomTool[]): void {
  const seen = new Set<string>();
  for (const [i, tool] of tools.entries()) {
    if (tool === null || typeof tool !== 'object' || typeof tool.activity !== 'function' || tool.offered?.kind !== 'custom') {
      throw new CustomToolError(`tools[${i}]: not a tool made by defineTool`);
    }
    if (seen.has(tool.name)) throw new CustomToolError(`tools[${i}]: the tool name ${tool.name} is registered twice`);
    seen.add(tool.name);
  }
}
