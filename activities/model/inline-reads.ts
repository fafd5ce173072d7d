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
import type { InlineReads } from '../../common/activity-types';
import { INLINE_RESULTS_BYTES } from '../../common/activity-types';
import type { ToolCall, ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { jsonBytes } from '../../common/transcript';

/** Runs one built-in tool as its activity wrapper would (inside the model call's activity context). */
export type InlineToolRunner = (name: string, context: RuntimeContext, args: unknown) => Promise<ToolResult>;

/** What the model activities need to run reads inline. */
export interface InlineReadsOptions {
  run: InlineToolRunner;
  /** This worker's host id: a session whose files are on another host gets no inline reads here. */
  hostId?: string;
  /** Runtime contexts kept (one per session run; default 2,000). */
  maxContexts?: number;
}

/** What a reply's inline reads came to. */
export interface InlineOutcome {
  toolResults?: (ToolResult | null)[];
  inlineNeedsContext?: true;
}

/** Runtime contexts by session run, least recently used first out; and the runner of inline reads. */
export class InlineReader {
  private readonly contexts = new Map<string, RuntimeContext>();
  private readonly maxContexts: number;

  constructor(private readonly options: InlineReadsOptions) {
    this.maxContexts = options.maxContexts ?? 2000;
  }

  /** Run the calls of `calls` that `inline` allows; throws only the activity's cancellation. */
  async run(run: { workflowId: string; runId: string }, inline: InlineReads, calls: readonly ToolCall[], signal: AbortSignal): Promise<InlineOutcome> {
    const key = `${run.workflowId}\u0000${run.runId}`;
    const context = inline.context ?? this.contexts.get(key);
    if (context === undefined) return { inlineNeedsContext: true };
    this.remember(key, context);
    const wanted = context.filesHost;
    if (wanted !== undefined && this.options.hostId !== undefined && wanted !== this.options.hostId) return {};
    const allowed = new Set(inline.tools);
    const results = await Promise.all(
      calls.map((call): Promise<ToolResult | null> | null => {
        if (!allowed.has(call.function.name)) return null;
        let args: unknown;
        try {
          args = call.function.arguments.trim() === '' ? {} : JSON.parse(call.function.arguments);
        } catch {
          // The workflow answers arguments that are not JSON with its own error text.
          return null;
        }
        // A tool that throws (an I/O failure it did not turn into a result) is retried by its own activity.
        return this.options.run(call.function.name, context, args).then(
          (result) => result,
          () => null,
        );
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

  private remember(key: string, context: RuntimeContext): void {
    this.contexts.delete(key);
    this.contexts.set(key, context);
    if (this.contexts.size > this.maxContexts) this.contexts.delete(this.contexts.keys().next().value!);
  }
}
