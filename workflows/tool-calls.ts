/**
 * Executing the model's tool calls from workflow code: recognising unknown tools and arguments
 * that are not JSON (both returned to the model as results), and turning a tool activity that still
 * fails after its retries into a result the model can act on. Cancellation is rethrown.
 */
import { isCancellation, log } from '@temporalio/workflow';
import { LOG_ARGUMENT_LIMIT } from '../common/defaults';
import type { ToolCall, ToolResult } from '../common/messages';
import type { RuntimeContext } from '../common/runtime-context';
import { toolSpec } from '../common/tools';
import { argumentRecord, contentOf, targetOf, type ToolSpec } from '../common/tools/tool-spec';
import type { SessionActivityStubs } from './activity-proxies';

/** Run one tool call as its activity; never throws except for cancellation. */
export async function runToolCall(
  activities: SessionActivityStubs,
  call: ToolCall,
  context: RuntimeContext,
  options: { localReads?: boolean } = {},
): Promise<ToolResult> {
  const name = call.function.name;
  const spec = toolSpec(name);
  if (spec === undefined) {
    return { success: false, error: `Unknown tool: ${name}` };
  }
  let args: unknown;
  try {
    args = call.function.arguments.trim() === '' ? {} : JSON.parse(call.function.arguments);
  } catch (err) {
    return {
      success: false,
      error: `Arguments for ${name} are not valid JSON (${(err as Error).message}); send a JSON object`,
    };
  }
  try {
    const summary = { summary: toolSummary(name, args) };
    // Only tools that change nothing may run as local activities (a crash repeats them).
    const local = options.localReads ? activities.localReads[name] : undefined;
    if (local) return await local.executeWithOptions(summary, [context, args]);
    return await activities.tools[name]!.executeWithOptions(summary, [context, args]);
  } catch (err) {
    if (isCancellation(err)) throw err;
    const message = rootMessage(err);
    log.warn('Tool activity failed after its retries', { tool: name, toolCallId: call.id, error: message });
    return { success: false, error: `${name} failed: ${message}` };
  }
}

/**
 * What the Web UI shows for a tool call: the tool and its target argument as the model wrote it
 * (a path), and for a write the size of its content. Never the content. `specs`: the tools known.
 */
export function toolSummary(name: string, args: unknown, specs?: readonly ToolSpec[]): string {
  const spec = toolSpec(name, specs);
  const record = argumentRecord(args);
  const target = targetOf(spec, record);
  const where = target !== undefined ? ` ${target.length > 160 ? `${target.slice(0, 160)}…` : target}` : '';
  const content = contentOf(spec, record);
  const size = content !== undefined ? ` (${formatBytes(content.length)})` : '';
  return `${name}${where}${size}`;
}

function formatBytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
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
