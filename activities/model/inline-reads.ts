/**
 * Inline reads on the worker: after a model call whose reply asks for built-in read-only tools, the
 * `callModelV2` activity runs those calls itself and returns their results with the reply, so an
 * iteration that only reads costs one activity instead of an activity and a local activity (and a
 * second workflow activation). Each call runs through the same tool activity wrapper as its local
 * activity would (argument check, path guard, result bound, span, metrics, cancellation). Anything
 * not certain is left to the workflow, which runs it as before: a call of another tool, a call whose
 * tool threw instead of returning a result, a result past the inline size limit, a session whose
 * files are on another host, a run whose runtime context this worker does not hold.
 */
import { callArguments } from '../../common/tools/tool-spec';
import type { InlineReads } from '../../common/activity-types';
import { INLINE_RESULTS_BYTES } from '../../common/activity-types';
import type { ToolCall, ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { onFilesHost } from '../../common/files-host';
import { jsonBytes } from '../../common/transcript';
import type { RunCache } from '../transcript/run-cache';

/** Runs one built-in tool as its activity wrapper would (inside the model call's activity context). */
export type InlineToolRunner = (name: string, context: RuntimeContext, args: unknown) => Promise<ToolResult>;

/** What the model activities need to run reads inline. */
export interface InlineReadsOptions {
  run: InlineToolRunner;
  /** This worker's host id: a session whose files are on another host gets no inline reads here. */
  hostId?: string;
}

/** What a reply's inline reads came to. */
export interface InlineOutcome {
  toolResults?: (ToolResult | null)[];
  inlineNeedsContext?: true;
}

/** Runs a reply's reads inline, with the runtime context each run left in `runs`. */
export class InlineReader {
  constructor(
    private readonly options: InlineReadsOptions,
    private readonly runs: RunCache,
  ) {}

  /** Run the calls of `calls` that `inline` allows; throws only the activity's cancellation. */
  async run(run: { workflowId: string; runId: string }, inline: InlineReads, calls: readonly ToolCall[], signal: AbortSignal): Promise<InlineOutcome> {
    if (inline.context) this.runs.setContext(run, inline.context);
    const context = inline.context ?? this.runs.context(run);
    if (context === undefined) return { inlineNeedsContext: true };
    if (!onFilesHost(this.options.hostId, context.filesHost)) return {};
    const allowed = new Set(inline.tools);
    const results = await Promise.all(
      calls.map((call): Promise<ToolResult | null> | null => {
        if (!allowed.has(call.function.name)) return null;
        const parsed = callArguments(call);
        // Arguments that are not JSON: the workflow answers them (the same parser, the same text).
        if (!parsed.ok) return null;
        // A tool that throws (an I/O failure it did not turn into a result) is retried by its own activity.
        return this.options.run(call.function.name, context, parsed.value).catch(() => null);
      }),
    );
    // Cancelled while the reads ran: the activity ends cancelled, as it would have during the call.
    if (signal.aborted) throw signal.reason;
    let total = 0;
    const bounded = results.map((result) => {
      if (result === null) return null;
      total += jsonBytes(result);
      return total <= INLINE_RESULTS_BYTES ? result : null;
    });
    return bounded.some((r) => r !== null) ? { toolResults: bounded } : {};
  }
}
