/**
 * What the model-call activity's worker keeps per run, the workflow's side: which tools a turn lets
 * it run right after the reply (inline reads: built-in read-only tools the session offers, that need
 * no approval and have a local activity), whether it still needs the session's runtime context, and
 * whether the tool definitions must travel with a call or their key is enough. The worker's side is
 * activities/model/inline-reads.ts and run-cache.ts. Deterministic: every decision follows from the
 * session's input and recorded activity results.
 */
import { sha256Hex } from '../../common/sha256';
import type { InlineReads } from '../../common/activity-types';
import type { ToolCall, ToolDefinition } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { offeredOf, type SessionTool } from '../../common/offered-tools';
import { TOOL_SPECS, toolSpec } from '../../common/tools';

/** What a run remembers of what it sent the model-call worker. */
export interface WorkerCopies {
  /** The runtime context the worker was last sent in this run (it keeps it per run). */
  contextSent?: RuntimeContext;
  /** The tool definitions the worker was last sent in this run (it keeps them under their key). */
  toolsSent?: readonly ToolDefinition[];
  /** The key of the last definitions asked about. */
  keyed?: { tools: readonly ToolDefinition[]; key: string };
}

/** The tool definitions of a call, or only their key when the worker was sent them already in this run. */
export function toolsRequest(copies: WorkerCopies, tools: ToolDefinition[]): { tools?: ToolDefinition[]; toolsKey: string } {
  if (copies.keyed?.tools !== tools) copies.keyed = { tools, key: sha256Hex(JSON.stringify(tools)).slice(0, 32) };
  const toolsKey = copies.keyed.key;
  if (copies.toolsSent === tools) return { toolsKey };
  copies.toolsSent = tools;
  return { tools, toolsKey };
}

/** The tools of this turn whose calls may run inline. */
export function inlineToolNames(
  offered: readonly { function: { name: string } }[],
  tools: readonly SessionTool[] | undefined,
  hasLocalRead: (name: string) => boolean,
  needsApproval: ((call: ToolCall) => boolean) | undefined,
): string[] {
  const names = new Set(offered.map((t) => t.function.name));
  return TOOL_SPECS.filter((spec) => {
    if (spec.access !== 'read' || !names.has(spec.name) || !hasLocalRead(spec.name)) return false;
    const known = toolSpec(spec.name, tools ?? TOOL_SPECS);
    if (known === undefined || offeredOf(known) !== undefined) return false;
    return !needsApproval?.({ id: '', type: 'function', function: { name: spec.name, arguments: '{}' } });
  }).map((spec) => spec.name);
}

/** The `inline` field of a model call: the tools, and the context when the worker may not hold it. */
export function inlineRequest(state: WorkerCopies, tools: string[], context: RuntimeContext): InlineReads {
  if (state.contextSent === context) return { tools };
  state.contextSent = context;
  return { tools, context };
}
