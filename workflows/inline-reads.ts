/**
 * Inline reads, the workflow's side: which tools a turn lets the model-call activity run right after
 * the reply (built-in read-only tools the session offers, that need no approval and have a local
 * activity), and whether the worker still needs the session's runtime context. The worker's side
 * is activities/model/inline-reads.ts. Deterministic: every decision follows from the session's
 * input and recorded activity results.
 */
import type { InlineReads } from '../common/activity-types';
import type { ToolCall } from '../common/messages';
import type { RuntimeContext } from '../common/runtime-context';
import { offeredOf, type SessionTool } from '../common/offered-tools';
import { TOOL_SPECS, toolSpec } from '../common/tools';

/** What a run remembers between model calls. */
export interface InlineReadsState {
  /** The runtime context the worker was last sent in this run (it keeps it per run). */
  contextSent?: RuntimeContext;
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
export function inlineRequest(state: InlineReadsState, tools: string[], context: RuntimeContext): InlineReads {
  if (state.contextSent === context) return { tools };
  state.contextSent = context;
  return { tools, context };
}
