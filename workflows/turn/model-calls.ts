/**
 * One model step of a turn: the call itself (the whole transcript for histories recorded before
 * `callModelV2`, else a reference plus the model's view), and, for sessions with context management,
 * what real servers need around it: compaction before a call that would not fit, one compaction and
 * retry after a context-length refusal, fallback models, and continuing a reply cut off at the
 * output limit.
 */
import { ActivityFailure, ApplicationFailure, workflowInfo } from '@temporalio/workflow';
import { MODEL_BAD_REQUEST, MODEL_CONTEXT_LENGTH_EXCEEDED, MODEL_NOT_FOUND, MODEL_PERMISSION_DENIED, MODEL_UNPROCESSABLE } from '../../common/failure-types';
import type { AssistantMessage, ChatMessage, TokenUsage } from '../../common/messages';
import type { ModelCallResult, ModelFailureDetails, ModelSettings } from '../../common/model-call';
import type { CompactionRecord } from '../../common/session-types';
import { INLINE_DELTA_BYTES } from '../../common/transcript';
import type { Budgets } from '../context/budgets';
import { ContextManager } from '../context/context-manager';
import { inlineRequest, toolsRequest } from './inline-reads';
import { TOOLS_UNKNOWN } from '../../common/activity-types';
import type { TurnInput } from './turn';
import { addUsage } from './usage';

/** The context management, budgets and model settings of a session that has them. */
export interface ManagedModel {
  context: ContextManager;
  budgets: Budgets;
  settings: ModelSettings;
  fallbackModels: string[];
  maxContinuations: number;
  /** A compaction happened (the session shows it). */
  onCompaction(record: CompactionRecord): void;
}

/** Failures a retry on the same model cannot mend, but another model may. */
const FALLBACK_FAILURES: readonly string[] = [MODEL_NOT_FOUND, MODEL_PERMISSION_DENIED, MODEL_UNPROCESSABLE, MODEL_BAD_REQUEST];

/** What the loop tells the model when its reply was cut off and is to be continued. */
const CONTINUE_NOTICE = '[Loopwright] Your reply was cut off at the output limit. Continue exactly where it stopped, without repeating anything already written.';

/** The result of one model step: one reply, possibly joined from several calls. */
export interface ModelStep extends ModelCallResult {
  /** Calls that continued a cut-off reply. */
  continuations: number;
  /** Compactions made for this step. */
  compactions: CompactionRecord[];
  /** The reply joined from several calls differs from what the worker recorded after the first. */
  joined: boolean;
}

/** Type and details of a model failure behind an activity failure, if it is one. */
function modelFailure(err: unknown): { type: string; details?: ModelFailureDetails } | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (!(cause instanceof ApplicationFailure) || !cause.type) return undefined;
  return { type: cause.type, details: cause.details?.[0] as ModelFailureDetails | undefined };
}

/**
 * True when a call that named its tool definitions by key failed for want of them: the worker holds
 * none under that key, or (a worker from before keys) its input check missed `tools`. Never a model
 * server's own 400, which has an HTTP status.
 */
export function toolsRefused(err: unknown): boolean {
  const failure = modelFailure(err);
  if (failure?.type === TOOLS_UNKNOWN) return true;
  if (failure?.type !== MODEL_BAD_REQUEST || failure.details?.status != null) return false;
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return /^Invalid model call input: tools\b/.test((cause as Error).message);
}

/** True when `err` is the server refusing a prompt as too long for the model's window. */
export function isContextLengthFailure(err: unknown): boolean {
  return modelFailure(err)?.type === MODEL_CONTEXT_LENGTH_EXCEEDED;
}

/** Calls the model for one turn; remembers a fallback model once the session's model failed. */
export class ModelCaller {
  private fallbackIndex = -1;

  constructor(
    private readonly input: TurnInput,
    private readonly managed: ManagedModel | undefined,
    /** Inline reads: the tools whose calls the model-call activity may run (none: no inline reads). */
    private readonly inlineTools: string[] = [],
  ) {}

  /** The model calls go to now. */
  get model(): string | undefined {
    return this.fallbackIndex >= 0 ? this.managed!.fallbackModels[this.fallbackIndex] : this.input.model;
  }

  /**
   * One step: compact if needed, call (with recovery and fallbacks), continue a cut-off reply.
   * `onUsage` gets each call's usage (compaction and continuation calls too), with the model that answered.
   */
  step(afterLastReply: number | undefined, iteration: number, onUsage: (usage: TokenUsage, model?: string) => void): Promise<ModelStep> {
    const label = this.labeller(iteration);
    const managed = this.managed;
    if (!managed) {
      return this.call(afterLastReply, label()).then((reply) => {
        if (reply.usage) onUsage(reply.usage, reply.model);
        return { ...reply, continuations: 0, compactions: [], joined: false };
      });
    }
    // The common case in one promise chain (every workflow promise costs a recorded stack trace):
    // no compaction first, and a reply that is neither a failure nor cut off. Anything else takes
    // the full path below, from where this one stopped, scheduling exactly what it would have.
    if (managed.context.needsCompaction(this.input.transcript, this.input.tools)) return this.managedStep(managed, afterLastReply, iteration, onUsage, { compact: 'threshold' });
    // A turn's first call after the prompt cache expired: compact now if it will be needed soon, at no cached tokens.
    if (iteration === 1 && managed.context.compactsWhileCold(this.input.transcript, this.input.tools)) return this.managedStep(managed, afterLastReply, iteration, onUsage, { compact: 'cache_cold' });
    return this.call(afterLastReply, label()).then(
      (first) =>
        first.finishReason === 'length' && !first.message.tool_calls?.length ? this.managedStep(managed, afterLastReply, iteration, onUsage, { first }) : this.firstOnly(managed, first, onUsage),
      (failure: unknown) => this.managedStep(managed, afterLastReply, iteration, onUsage, { failure }),
    );
  }

  /**
   * What the last reply's calls that ran inline were (`read_file {bundle-root}/config.yaml`), said by
   * the next call's Web UI summary: inline reads have no history entry of their own.
   */
  afterInline: string | undefined;

  /** Names a call in the Web UI: turn, iteration, model and what the call is for. */
  private labeller(iteration: number): (extra?: string) => string {
    const after = this.afterInline ? ` · after inline ${this.afterInline}` : '';
    return (extra = '') => `turn ${this.input.turn} · iteration ${iteration} · callModel ${this.model ?? 'default model'}${after}${extra}`;
  }

  /** A step that took one call and needs no continuation. */
  private firstOnly(managed: ManagedModel, first: ModelCallResult, onUsage: (usage: TokenUsage, model?: string) => void): ModelStep {
    managed.context.observe(first.usage, first.estimatedPromptTokens);
    if (first.usage) onUsage(first.usage, first.model);
    return { ...first, continuations: 0, compactions: [], joined: false };
  }

  /**
   * The full step of a managed session: compaction, recovery after a refusal, fallback models,
   * continuations. `from` is where `step` left off: compaction needed first (and why), or its first call's reply or failure.
   */
  private async managedStep(
    managed: ManagedModel,
    afterLastReply: number | undefined,
    iteration: number,
    onUsage: (usage: TokenUsage, model?: string) => void,
    from: { compact?: CompactionRecord['reason']; first?: ModelCallResult; failure?: unknown },
  ): Promise<ModelStep> {
    const label = this.labeller(iteration);
    const { context } = managed;
    const compactions: CompactionRecord[] = [];
    const compact = (reason: CompactionRecord['reason'], force: boolean): Promise<void> => this.compact(managed, { reason, force, afterLastReply, onUsage, compactions });
    if (from.compact) await compact(from.compact, false);
    const compactedNote = (): string => (compactions.length ? ` · ${ContextManager.describe(compactions[compactions.length - 1]!)}` : '');

    let first: ModelCallResult | undefined = from.first;
    let pending: { failure: unknown } | undefined = 'failure' in from ? { failure: from.failure } : undefined;
    let retriedAfterRefusal = false;
    while (!first) {
      try {
        if (pending) {
          const { failure } = pending;
          pending = undefined;
          throw failure;
        }
        first = await this.call(afterLastReply, label(compactedNote()));
      } catch (err) {
        const failure = modelFailure(err);
        if (failure?.type === MODEL_CONTEXT_LENGTH_EXCEEDED && !retriedAfterRefusal) {
          retriedAfterRefusal = true;
          context.learnFromRefusal(failure.details, context.promptTokens);
          await compact('context_length', true);
          continue;
        }
        if (failure && FALLBACK_FAILURES.includes(failure.type) && this.fallbackIndex + 1 < managed.fallbackModels.length) {
          this.fallbackIndex += 1;
          continue;
        }
        throw err;
      }
    }
    context.observe(first.usage, first.estimatedPromptTokens);
    if (first.usage) onUsage(first.usage, first.model);

    // A reply cut off at the output limit (text only: cut tool calls are answered as invalid arguments).
    let message: AssistantMessage = first.message;
    let result: ModelCallResult = first;
    let usage = first.usage;
    const warnings = [...(first.warnings ?? [])];
    let continuations = 0;
    while (result.finishReason === 'length' && !message.tool_calls?.length && continuations < managed.maxContinuations) {
      continuations += 1;
      const extra: ChatMessage[] = [
        { role: 'assistant', content: message.content ?? '' },
        { role: 'user', content: CONTINUE_NOTICE },
      ];
      result = await this.call(undefined, label(` · continuing a cut-off reply (${continuations}/${managed.maxContinuations})`), extra);
      if (result.usage) onUsage(result.usage, result.model);
      managed.context.observeCache(result.usage);
      message = {
        ...message,
        content: `${message.content ?? ''}${result.message.content ?? ''}`,
        ...(result.message.tool_calls?.length ? { tool_calls: result.message.tool_calls } : {}),
      };
      usage = usage && result.usage ? addUsage(usage, result.usage) : (usage ?? result.usage);
      warnings.push(...(result.warnings ?? []));
    }
    return {
      ...result,
      message,
      usage,
      ...(warnings.length ? { warnings } : {}),
      continuations,
      compactions,
      joined: continuations > 0,
    };
  }

  /** Compact the model's view now (when needed, or `force`); the record joins `compactions`. */
  private async compact(
    managed: ManagedModel,
    how: { reason: CompactionRecord['reason']; force: boolean; afterLastReply: number | undefined; onUsage: (usage: TokenUsage, model?: string) => void; compactions: CompactionRecord[] },
  ): Promise<void> {
    const { afterLastReply } = how;
    const record = await managed.context.compact({
      reason: how.reason,
      force: how.force,
      turn: this.input.turn,
      transcript: this.input.transcript,
      tools: this.input.tools,
      activities: this.input.activities,
      ...(this.model !== undefined ? { model: this.model } : {}),
      ...(afterLastReply !== undefined ? { afterLastReply } : {}),
      onUsage: (usage) => how.onUsage(usage, this.model),
    });
    if (record) {
      how.compactions.push(record);
      managed.onCompaction(record);
    }
  }

  /**
   * One call. With `transcriptRef`, the activity gets where the transcript stands (count and chain
   * hash) plus the messages since the model's last reply when they are small; the worker holds the
   * rest. Otherwise (histories recorded before that) the whole transcript goes in the input.
   */
  private call(afterLastReply: number | undefined, summary: string, extra?: ChatMessage[]): Promise<ModelCallResult> {
    const { input } = this;
    const { transcript } = input;
    if (!input.transcriptRef) {
      return input.activities.callModel({ messages: transcript.slice(), tools: input.tools, model: input.model });
    }
    const info = workflowInfo();
    const count = transcript.length;
    const delta =
      afterLastReply !== undefined && transcript.bytesBetween(afterLastReply, count) <= INLINE_DELTA_BYTES ? { from: afterLastReply, messages: transcript.slice(afterLastReply, count) } : undefined;
    const managed = this.managed;
    const view = managed?.context.viewForCall();
    // A continuation's reply is not the transcript's next message: its tool calls are not run inline.
    const copies = input.copies;
    const inline = copies && this.inlineTools.length > 0 && extra === undefined ? inlineRequest(copies, this.inlineTools, input.context) : undefined;
    // The definitions travel once per run; after that their key names them (workflows/turn/inline-reads.ts).
    const tools = copies ? toolsRequest(copies, input.tools) : { tools: input.tools };
    const sent = input.activities.callModelV2.executeWithOptions({ summary }, [
      {
        transcript: { workflowId: info.workflowId, runId: info.runId, count, hash: transcript.hashAt(count), ...(transcript.gap ? { gap: transcript.gap } : {}) },
        ...(delta ? { delta } : {}),
        ...tools,
        model: this.model,
        ...(managed ? { settings: managed.settings } : {}),
        ...(view ? { view } : {}),
        ...(extra ? { extra } : {}),
        ...(inline ? { inline } : {}),
      },
    ]);
    if (tools.tools || !copies) return sent;
    // A worker that does not hold them (another worker, a restarted one, one from before keys) says
    // so at once: the same call again, with the definitions.
    return sent.then(undefined, (err: unknown) => {
      if (!toolsRefused(err)) throw err;
      copies.toolsSent = undefined;
      return this.call(afterLastReply, summary, extra);
    });
  }
}
