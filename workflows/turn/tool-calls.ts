/**
 * Executing the model's tool calls from workflow code: recognising unknown tools and arguments
 * that are not JSON (both returned to the model as results), and turning a tool activity that still
 * fails after its retries into a result the model can act on. Cancellation is rethrown.
 */
import { isCancellation, log } from '@temporalio/workflow';
import { LOG_ARGUMENT_LIMIT } from '../../common/defaults';
import type { ToolCall, ToolResult } from '../../common/messages';
import { type McpCallInput, type McpServerConfig, offeredOf, type SessionTool, TOOL_NOT_REGISTERED } from '../../common/offered-tools';
import type { RuntimeContext } from '../../common/runtime-context';
import { NOT_FILES_HOST } from '../../common/files-host';
import { isRepeatable } from '../../common/commands/command-rules';
import { TOOL_SPECS, toolSpec } from '../../common/tools';
import { argumentRecord, callArguments, contentOf, modesOf, replacedOf, targetOf } from '../../common/tools/tool-spec';
import type { SessionActivityStubs } from '../stubs/activity-proxies';

/** The tools of a session beyond the built-in ones, as `listTools` recorded them. */
export interface SessionToolSet {
  /** Built-in definitions and offered tools, looked up by name. */
  tools: readonly SessionTool[];
  /** The MCP servers the offered MCP tools come from. */
  mcpServers: Readonly<Record<string, McpServerConfig>>;
}

/** Whether a call of the made-once tool `spec` is one the session's command rules mark safe to repeat (its target is the command line). */
function safeToRepeat(spec: { target?: string }, args: unknown, context: RuntimeContext): boolean {
  const line = spec.target === undefined ? undefined : argumentRecord(args)[spec.target];
  return typeof line === 'string' && isRepeatable(line, context.commands?.rules, context.variables);
}

/**
 * Run one tool call as its activity; never throws (rejects) except for cancellation.
 *
 * Written with `then` rather than `async`/`await`: the SDK records a stack trace for every promise
 * a workflow makes (its stack-trace query), which costs more than the call itself, so the hot path
 * of the loop makes as few promises as it can. The commands it schedules are the same either way.
 */
export function runToolCall(activities: SessionActivityStubs, call: ToolCall, context: RuntimeContext, options: { localReads?: boolean; toolSet?: SessionToolSet } = {}): Promise<ToolResult> {
  const name = call.function.name;
  const spec = toolSpec(name, options.toolSet?.tools ?? TOOL_SPECS);
  if (spec === undefined) {
    return Promise.resolve({ success: false, error: `Unknown tool: ${name}` });
  }
  const parsed = callArguments(call);
  if (!parsed.ok) return Promise.resolve({ success: false, error: parsed.error });
  const args = parsed.value;
  // A call made once unless the session's rules mark it safe to repeat (commands.repeatable).
  const repeat = spec.retries === 'once' && safeToRepeat(spec, args, context) ? activities.repeatable[name] : undefined;
  const failed = (err: unknown): ToolResult => toolFailure(err, name, call.id, spec.retries === 'once' && repeat === undefined);
  try {
    const summary = { summary: toolSummary(name, args, options.toolSet?.tools) };
    const offered = offeredOf(spec);
    if (offered?.kind === 'mcp' && offered.mcp) {
      const config = options.toolSet?.mcpServers[offered.mcp.server];
      if (config === undefined) return Promise.resolve({ success: false, error: `${name} failed: its MCP server ${offered.mcp.server} is not configured in this session` });
      return activities.callMcpTool
        .executeWithOptions(summary, [
          { server: offered.mcp.server, config, tool: offered.mcp.tool, name, args, retrySafe: offered.mcp.retrySafe === true, projectRoot: context.projectRoot, secrets: secretsOf(context) },
        ])
        .then(undefined, failed);
    }
    if (offered?.kind === 'custom') {
      const remote = (): Promise<ToolResult> => activities.customTool(name, offered.retries, false).executeWithOptions(summary, [context, args]);
      if (options.localReads === true && offered.access === 'read') {
        return locally(activities.customTool(name, offered.retries, true).executeWithOptions(summary, [context, args]), remote, failed);
      }
      return remote().then(undefined, failed);
    }
    // Only tools that change nothing may run as local activities (a crash repeats them).
    const remote = (): Promise<ToolResult> => (repeat ?? activities.tools[name]!).executeWithOptions(summary, [context, args]);
    const local = options.localReads ? activities.localReads[name] : undefined;
    if (local) return locally(local.executeWithOptions(summary, [context, args]), remote, failed);
    return remote().then(undefined, failed);
  } catch (err) {
    // Scheduling itself threw: the same handling as a failed activity.
    try {
      return Promise.resolve(failed(err));
    } catch (cancelled) {
      return Promise.reject(cancelled);
    }
  }
}

/**
 * A read run as a local activity on the worker that runs the workflow, going to the files host
 * (`remote`) instead when that worker is not on the session's files host (it refuses, touching
 * nothing). `failed` turns any other failure into the result the model gets.
 */
function locally(run: Promise<ToolResult>, remote: () => Promise<ToolResult>, failed: (err: unknown) => ToolResult): Promise<ToolResult> {
  return run.then(undefined, (err: unknown) => (failureType(err) === NOT_FILES_HOST ? remote().then(undefined, failed) : failed(err)));
}

/** A tool activity that failed after its retries, as the result the model gets; cancellation is rethrown. */
function toolFailure(err: unknown, name: string, callId: string, once = false): ToolResult {
  if (isCancellation(err)) throw err;
  if (failureType(err) === 'NotFoundError' || /not registered on (this )?worker/i.test(rootMessage(err))) {
    // The worker that took the call has no activity of that name: its set of tools differs from
    // the one that listed this session's tools.
    log.warn('Tool is not registered on the worker', { tool: name, toolCallId: callId });
    return {
      success: false,
      errorType: TOOL_NOT_REGISTERED,
      error: `${name} failed: the worker that took this call has no tool ${name} registered (${TOOL_NOT_REGISTERED}); every worker of this task queue must register the same tools`,
    };
  }
  const message = rootMessage(err);
  log.warn('Tool activity failed after its retries', { tool: name, toolCallId: callId, error: message });
  // A call that is never made again (a command) and did not answer may have done its work or part of it.
  if (once) return { success: false, unknownOutcome: true, error: `${name} did not finish (${message}); it may or may not have taken effect, and it was not run again: check before running it again` };
  return { success: false, error: `${name} failed: ${message}` };
}

/**
 * What the Web UI shows for a tool call: the tool and its target argument as the model wrote it
 * (a path), and for a write the modes it gives and the size of its content, after the size of what
 * it replaces for an edit (`<tool> docs/prd.md (append, 1.2 KB)`, `<tool> docs/prd.md (18 B → 22 B)`).
 * Never the content. `specs`: the tools known.
 */
export function toolSummary(name: string, args: unknown, specs: readonly SessionTool[] = TOOL_SPECS): string {
  const spec = toolSpec(name, specs);
  const record = argumentRecord(args);
  const target = targetOf(spec, record);
  const where = target !== undefined ? ` ${target.length > 160 ? `${target.slice(0, 160)}…` : target}` : '';
  const content = contentOf(spec, record);
  const replaced = replacedOf(spec, record);
  const modes = modesOf(spec, record);
  const sizes = content === undefined ? undefined : replaced !== undefined ? `${formatBytes(replaced.length)} → ${formatBytes(content.length)}` : formatBytes(content.length);
  const size = sizes !== undefined ? ` (${[...modes, sizes].join(', ')})` : '';
  return `${name}${where}${size}`;
}

function formatBytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** The secret-file settings of a session, as an MCP call carries them. */
function secretsOf(context: RuntimeContext): NonNullable<McpCallInput['secrets']> {
  return { ...(context.allowSecretFiles ? { allowSecretFiles: true } : {}), ...(context.secretFiles ? { secretFiles: context.secretFiles } : {}) };
}

/** The failure type of the innermost application failure in `err`'s causes, if any. */
export function failureType(err: unknown): string | undefined {
  let current: unknown = err;
  let type: string | undefined;
  while (current instanceof Error) {
    const own = (current as { type?: unknown }).type;
    if (typeof own === 'string') type = own;
    current = current.cause;
  }
  return type;
}

/** The innermost failure message (an ActivityFailure wraps the activity's own error). */
export function rootMessage(err: unknown): string {
  let current: unknown = err;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}

/** Tool arguments for logs, cut to a readable length. */
export function truncateArguments(text: string, limit = LOG_ARGUMENT_LIMIT): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}… (${text.length} chars)`;
}
