/**
 * Context management: the model's view of the transcript and its compaction, decided in the
 * workflow from recorded facts only (the window, the last call's recorded usage, the sizes of the
 * messages). The transcript itself is never changed: a compaction moves the view's numbers (see
 * common/model-view.ts) and, when pruning is not enough, asks a model-call activity for a summary.
 */
import { log, metricMeter, patched, workflowInfo } from '@temporalio/workflow';
import { DEFAULT_COMPACT_AT, DEFAULT_CONTEXT_WINDOW, DEFAULT_KEEP_RECENT, DEFAULT_SUMMARY_TOKENS } from '../../common/defaults';
import type { ChatMessage, TokenUsage, ToolDefinition, ToolMessage } from '../../common/messages';
import { DEFAULT_MAX_OUTPUT_TOKENS, type ModelSettings } from '../../common/model-call';
import { cutToolMessage, fullView, isOmitted, type ModelView, prunedToolMessage, SKILL_INSTRUCTIONS_NOTE, skillActivations, skillInstructions, summaryMessage } from '../../common/model-view';
import type { CompactionRecord, ContextSettings, ContextState, ContinuedSession } from '../../common/session-types';
import { BYTES_PER_TOKEN, estimateMessageTokens, estimateToolTokens } from '../../common/token-estimate';
import { type HashedTranscript, INLINE_DELTA_BYTES } from '../../common/transcript';
import type { SessionActivityStubs } from '../stubs/activity-proxies';

/** What a context manager carries into the session's next run. */
export type CarriedContext = NonNullable<ContinuedSession['context']>;

/** A compaction stops summarising after this many rounds, even if the view is still large. */
const MAX_SUMMARY_ROUNDS = 4;

/** After a compaction the view should be at most this share of the room, so the next one is not one call away. */
const TARGET_SHARE = 0.5;

/** Tokens of a message in the summariser's input at most (the activity cuts tool results to about this). */
const SUMMARY_INPUT_TOKENS_PER_MESSAGE = 450;

/** After a compaction, the view is compacted again once it grew by this share of the window (or no longer fits). */
const REGROWTH_SHARE = 0.1;

/** A part smaller than this many tokens (or this share of the window) is not worth a summarising call. */
const MIN_SUMMARY_PART_TOKENS = 256;
const MIN_SUMMARY_PART_SHARE = 0.1;

/** Tokens of a pruned result's stub, roughly (its wording names the tool, the path and the size). */
const STUB_TOKENS = 80;

/** The calibration factor (server tokens per estimated token) stays within these bounds. */
const CALIBRATION_BOUNDS = [0.25, 4] as const;

/** Everything compaction needs from the turn that asks for it. */
export interface CompactionRequest {
  reason: CompactionRecord['reason'];
  turn: number;
  transcript: HashedTranscript;
  tools: ToolDefinition[];
  activities: SessionActivityStubs;
  model?: string;
  /** Compact even when the view is under the threshold (requested by the user, or the server said it does not fit). */
  force?: boolean;
  /** Index just past the model's last reply, for the summariser's transcript delta. */
  afterLastReply?: number;
  /** Usage of the summarising call, counted by the caller against turn and session. */
  onUsage?(usage: TokenUsage): void;
}

/** Compaction records count the cached prompt tokens they cost (a new field in the `compact` update's answer and the turn's result). */
export const COMPACTION_CACHE_PATCH = 'loopwright-compaction-cache-cost';

/** A turn may compact early, before its first call, while the provider's prompt cache has expired (`compactsWhileCold`). */
export const CACHE_COLD_PATCH = 'loopwright-cache-cold-compaction';

/**
 * How long a provider's prompt cache lives after its last use: Anthropic's default lifetime is five
 * minutes, and OpenAI clears its automatic cache after five to ten idle minutes.
 */
export const CACHE_LIFETIME_MS = 5 * 60_000;

/** The model's view of one session's transcript, its window and its compactions. */
export class ContextManager {
  view: ModelView;
  window: number;
  windowSource: string;
  compactions: number;
  lastCompaction: CompactionRecord | undefined;
  /** Server tokens per estimated token, from the last call's recorded usage. */
  calibration: number;
  private readonly compactAt: number;
  private readonly keepRecent: number;
  private readonly summarize: boolean;
  private readonly summaryTokens: number;
  private readonly maxOutput: number;
  /** Estimated tokens of each transcript message, filled as the transcript grows. */
  private readonly tokens: number[] = [];
  private toolTokens: { tools: ToolDefinition[]; tokens: number } | undefined;
  /** The estimate a compaction of this run left the view at. */
  private leftAt: number | undefined;
  /** The last estimate of the next prompt, for the state query. */
  promptTokens = 0;
  /** Prompt tokens the provider held in its cache at the last call of this run (reads plus writes); undefined while no call reported them. */
  private cachedTokens: number | undefined;
  /** Workflow time of the last model call of this run whose usage was noted. */
  private lastCallAt: number | undefined;

  constructor(
    private readonly settings: ContextSettings,
    modelSettings: ModelSettings,
    head: number,
    carried?: CarriedContext,
  ) {
    this.view = carried?.view ?? fullView(head);
    this.window = carried?.window ?? settings.window ?? DEFAULT_CONTEXT_WINDOW;
    this.windowSource = carried?.windowSource ?? (settings.window !== undefined ? 'session' : 'default');
    this.compactions = carried?.compactions ?? 0;
    this.lastCompaction = carried?.lastCompaction;
    this.calibration = carried?.calibration ?? 1;
    this.compactAt = settings.compactAt ?? DEFAULT_COMPACT_AT;
    this.keepRecent = settings.keepRecent ?? DEFAULT_KEEP_RECENT;
    this.summarize = settings.summarize !== false;
    this.summaryTokens = settings.summaryTokens ?? DEFAULT_SUMMARY_TOKENS;
    this.maxOutput = modelSettings.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  }

  /** Whether the window is still to be asked of the server (the session named none, nothing was learnt). */
  get windowUnknown(): boolean {
    return this.settings.window === undefined && this.windowSource === 'default';
  }

  /** Take the window the server reports. */
  setWindow(window: number, source: string): void {
    this.window = window;
    this.windowSource = source;
  }

  /** What carries into the next run. */
  carry(): CarriedContext {
    return {
      view: this.view,
      window: this.window,
      windowSource: this.windowSource,
      compactions: this.compactions,
      ...(this.lastCompaction ? { lastCompaction: this.lastCompaction } : {}),
      calibration: this.calibration,
    };
  }

  /** The `state` query's view of all this. */
  state(transcript: HashedTranscript): ContextState {
    return {
      window: this.window,
      windowSource: this.windowSource,
      promptTokens: this.promptTokens,
      viewMessages: this.viewLength(transcript),
      compactions: this.compactions,
      ...(this.lastCompaction ? { lastCompaction: this.lastCompaction } : {}),
    };
  }

  /** The view to send, or undefined while it is the whole transcript (the call's input stays as before). */
  viewForCall(): ModelView | undefined {
    const v = this.view;
    const untouched = v.from === v.head && v.pruneBefore === 0 && !v.omit?.length && !v.prunedAlso?.length;
    return untouched ? undefined : v;
  }

  /** Tokens held back for the reply: the output limit, but never more than a quarter of the window. */
  outputReserve(): number {
    return Math.min(this.maxOutput, Math.floor(this.window / 4));
  }

  /** Prompt tokens past which the view is compacted before a call. */
  threshold(): number {
    return Math.floor(this.compactAt * (this.window - this.outputReserve()));
  }

  /** Estimated prompt tokens of a call over the current view, calibrated by the last recorded usage. */
  estimate(transcript: HashedTranscript, tools: ToolDefinition[], view: ModelView = this.view): number {
    const raw = this.rawEstimate(transcript, tools, view);
    this.promptTokens = Math.ceil(raw * this.calibration);
    return this.promptTokens;
  }

  /** Learn from a call's recorded usage how the server counts against our estimate. */
  observe(usage: TokenUsage | null, estimatedPromptTokens: number | undefined): void {
    this.observeCache(usage);
    if (!usage || !estimatedPromptTokens || estimatedPromptTokens <= 0 || usage.promptTokens <= 0) return;
    const ratio = usage.promptTokens / estimatedPromptTokens;
    this.calibration = Math.min(CALIBRATION_BOUNDS[1], Math.max(CALIBRATION_BOUNDS[0], ratio));
  }

  /** Note what a call's recorded usage says the provider holds in its prompt cache (a call without cache figures leaves it unknown). */
  observeCache(usage: TokenUsage | null): void {
    this.lastCallAt = Date.now();
    if (!usage) return;
    const { cacheReadTokens: read, cacheWriteTokens: write } = usage;
    this.cachedTokens = read === undefined && write === undefined ? undefined : (read ?? 0) + (write ?? 0);
  }

  /** The server refused a prompt as too long: take the window and the count it named. */
  learnFromRefusal(details: { contextWindow?: number | null; promptTokens?: number | null } | undefined, sentEstimate: number): void {
    if (details?.contextWindow && details.contextWindow > 0 && details.contextWindow < this.window) {
      this.setWindow(details.contextWindow, 'server error');
    }
    if (details?.promptTokens && sentEstimate > 0)
      this.observe({ promptTokens: details.promptTokens, completionTokens: 0, totalTokens: details.promptTokens }, Math.ceil(sentEstimate / this.calibration));
    else this.calibration = Math.min(CALIBRATION_BOUNDS[1], this.calibration * 1.25);
  }

  /**
   * True when the next call would pass the threshold, and either the view grew by a tenth of the
   * window since the last compaction left it or it no longer fits at all: a view whose kept part
   * alone is over the threshold is not compacted again on every call.
   */
  needsCompaction(transcript: HashedTranscript, tools: ToolDefinition[]): boolean {
    const estimate = this.estimate(transcript, tools);
    if (estimate <= this.threshold()) return false;
    if (this.leftAt === undefined || estimate > this.window - this.outputReserve()) return true;
    return estimate >= this.leftAt + this.window * REGROWTH_SHARE;
  }

  /**
   * True when the provider's prompt cache has expired: a call of this run reported cache figures, and
   * the last call was at least `CACHE_LIFETIME_MS` ago in workflow time.
   */
  cacheCold(): boolean {
    return this.cachedTokens !== undefined && this.lastCallAt !== undefined && Date.now() - this.lastCallAt >= CACHE_LIFETIME_MS;
  }

  /**
   * True when a turn about to make its first call should compact now rather than later: the cache
   * is cold, so compacting costs no cached tokens, while the threshold compaction that would come a
   * few calls later would throw away the cache those calls warm. The view must already be close to
   * the threshold, its estimate past the threshold less `REGROWTH_SHARE` of the window, and (after a
   * compaction of this run) grown by that share since the compaction left it, as `needsCompaction`
   * asks. Behind `CACHE_COLD_PATCH`; asked only when everything else holds.
   */
  compactsWhileCold(transcript: HashedTranscript, tools: ToolDefinition[]): boolean {
    if (!this.cacheCold()) return false;
    const estimate = this.estimate(transcript, tools);
    if (estimate <= this.threshold() - this.window * REGROWTH_SHARE) return false;
    if (this.leftAt !== undefined && estimate < this.leftAt + this.window * REGROWTH_SHARE) return false;
    return patched(CACHE_COLD_PATCH);
  }

  /** Leave the messages `[from, to)` out of every later view (a turn that could not fit). */
  omit(from: number, to: number): void {
    if (to <= from) return;
    this.view = { ...this.view, omit: [...(this.view.omit ?? []), { from, to }] };
  }

  /**
   * Compact the view: prune old tool results to stubs, then summarise the oldest exchanges, then
   * (last resort) stub single results too large for the window. Returns what it did, or undefined
   * when there was nothing it could do.
   */
  async compact(request: CompactionRequest): Promise<CompactionRecord | undefined> {
    const { transcript, tools } = request;
    const before = this.estimate(transcript, tools);
    const viewBefore = this.view;
    if (this.cacheCold() && patched(CACHE_COLD_PATCH)) this.cachedTokens = 0; // an expired cache holds nothing to lose
    const room = this.window - this.outputReserve();
    const target = request.force ? Math.min(this.threshold(), Math.floor(room * TARGET_SHARE)) : Math.floor(room * TARGET_SHARE);
    const keepFrom = this.keepBoundary(transcript.messages);
    let pruned = 0;
    let summarized = 0;
    let summaryCallTokens = 0;
    let durationMs = 0;

    // 1. Prune: every tool result before the kept exchanges becomes a stub, but a skill's instructions.
    if (keepFrom > this.view.pruneBefore) {
      const start = Math.max(this.view.pruneBefore, this.view.from);
      const skills = skillActivations(transcript.messages, start, keepFrom);
      pruned += this.countUnpruned(transcript.messages, start, keepFrom) - skills.length;
      this.view = { ...this.view, pruneBefore: keepFrom, ...(skills.length > 0 ? { keep: [...(this.view.keep ?? []), ...skills] } : {}) };
    }
    // 2. Summarise the oldest exchanges, in rounds small enough for the summariser's own window.
    for (let round = 0; this.summarize && round < MAX_SUMMARY_ROUNDS && this.estimate(transcript, tools) > target; round++) {
      const upTo = this.summaryEnd(transcript.messages, keepFrom);
      // A summary costs a model call: only worth it for a part of some size.
      if (upTo <= this.view.from || this.partTokens(transcript.messages, this.view.from, upTo) < Math.max(MIN_SUMMARY_PART_TOKENS, this.window * MIN_SUMMARY_PART_SHARE)) break;
      const started = Date.now();
      try {
        const result = await this.summarise(request, upTo);
        durationMs += Date.now() - started;
        if (result.usage) {
          summaryCallTokens += result.usage.totalTokens;
          request.onUsage?.(result.usage);
        }
        summarized += this.viewCount(transcript.messages, this.view.from, upTo);
        // Skill instructions in the summarised part go on in the summary's text, the newest of each skill.
        // (Those an earlier summary carried are in its text: a continued run may not hold their messages.)
        const earlier = this.view.summary?.split(SKILL_INSTRUCTIONS_NOTE)[1]?.trim();
        const fresh = skillInstructions(transcript.messages, skillActivations(transcript.messages, this.view.from, upTo));
        const carried = earlier ? `${SKILL_INSTRUCTIONS_NOTE}\n\n${earlier}${fresh ? `\n\n${fresh.slice(SKILL_INSTRUCTIONS_NOTE.length).trim()}` : ''}` : fresh;
        const keep = (this.view.keep ?? []).filter((i) => i >= upTo);
        const { keep: _kept, ...rest } = this.view;
        this.view = {
          ...rest,
          from: upTo,
          summary: carried === '' ? result.summary : `${result.summary}\n\n${carried}`,
          pruneBefore: Math.max(this.view.pruneBefore, upTo),
          ...(keep.length > 0 ? { keep } : {}),
        };
      } catch (err) {
        // The model could not summarise (its own window, a failure retries did not mend): the
        // pruned view goes on, and the server's answer to the next call decides.
        log.warn('Context summary failed; going on with the pruned view', { error: err instanceof Error ? err.message : String(err) });
        break;
      }
    }
    // 3. Last resort: a single result too large for the room is cut to its beginning, even a recent one.
    if (this.estimate(transcript, tools) > room) {
      const share = Math.floor(room / 4);
      const big = this.oversizedResults(transcript, share);
      if (big.length > 0) {
        pruned += big.length;
        this.view = { ...this.view, prunedAlso: [...(this.view.prunedAlso ?? []), ...big], oversizeBytes: Math.floor((share * BYTES_PER_TOKEN) / Math.max(1, this.calibration)) };
      }
    }
    const after = this.estimate(transcript, tools);
    this.leftAt = after;
    if (pruned === 0 && summarized === 0) return undefined;
    const record: CompactionRecord = { turn: request.turn, reason: request.reason, beforeTokens: before, afterTokens: after, pruned, summarized, summaryCallTokens, durationMs };
    if (this.cachedTokens !== undefined && patched(COMPACTION_CACHE_PATCH)) {
      const kept = Math.ceil(this.keptPrefixTokens(transcript.messages, viewBefore) * this.calibration);
      record.cachedTokensLost = Math.max(0, this.cachedTokens - kept);
      // What is left of the cache for the next call: a second compaction before it does not count the same tokens again.
      this.cachedTokens = Math.min(this.cachedTokens, kept);
    }
    this.compactions += 1;
    this.lastCompaction = record;
    metricMeter.createCounter('loopwright_compactions', 'compactions', 'Compactions of the model view, by reason').add(1, { reason: request.reason, summarized: String(summarized > 0) });
    log.info('Context compacted', { ...record });
    return record;
  }

  /** Short text of a compaction, for logs, activity summaries and the Web UI. */
  static describe(record: CompactionRecord): string {
    const k = (n: number): string => (n >= 10_000 ? `${Math.round(n / 1000)}k` : String(n));
    const parts = [`context compacted: ${k(record.beforeTokens)} → ${k(record.afterTokens)} tokens`];
    if (record.pruned > 0) parts.push(`${record.pruned} tool results pruned`);
    if (record.summarized > 0) parts.push(`${record.summarized} messages summarised`);
    if (record.cachedTokensLost !== undefined) parts.push(`${k(record.cachedTokensLost)} cached tokens lost`);
    return parts.join(', ');
  }

  /**
   * Estimated tokens of the prompt's start that the view now shares with `before`, the view before
   * the compaction: the messages before the view's start (the system prompt) and, while the summary
   * and the start stayed, the messages up to the first one the compaction stubbed or cut. The tool
   * definitions are left out: where they sit in the cached prefix differs between providers.
   */
  private keptPrefixTokens(messages: readonly ChatMessage[], before: ModelView): number {
    const view = this.view;
    const head = Math.min(view.head, messages.length);
    let total = 0;
    for (let i = 0; i < head; i++) total += this.tokensAt(messages, i);
    if (view.summary !== before.summary || view.from !== before.from) return total;
    // Same start: the prefix runs on to the first message rendered otherwise than before.
    const wasPruned = (i: number) => i < before.pruneBefore && !before.keep?.includes(i);
    const isPruned = (i: number) => i < view.pruneBefore && !view.keep?.includes(i);
    const cutBefore = new Set(before.prunedAlso ?? []);
    if (view.summary !== undefined && view.from > view.head) total += estimateMessageTokens(summaryMessage(view));
    for (let i = Math.max(view.from, view.head); i < messages.length; i++) {
      if (isOmitted(view, i)) continue;
      const message = messages[i]!;
      if (message.role === 'tool' && ((isPruned(i) && !wasPruned(i)) || (view.prunedAlso?.includes(i) && (!cutBefore.has(i) || view.oversizeBytes !== before.oversizeBytes)))) break;
      if (message.role === 'tool' && isPruned(i)) total += estimateMessageTokens(prunedToolMessage(message as ToolMessage, undefined)) + 12;
      else if (message.role === 'tool' && cutBefore.has(i) && view.oversizeBytes !== undefined) total += estimateMessageTokens(cutToolMessage(message as ToolMessage, view.oversizeBytes));
      else total += this.tokensAt(messages, i);
    }
    return total;
  }

  private async summarise(request: CompactionRequest, upTo: number): Promise<{ summary: string; usage: TokenUsage | null }> {
    const { transcript } = request;
    const info = workflowInfo();
    const count = transcript.length;
    const from = request.afterLastReply;
    const delta = from !== undefined && transcript.bytesBetween(from, count) <= INLINE_DELTA_BYTES ? { from, messages: transcript.slice(from, count) } : undefined;
    const summaryTokens = Math.max(64, Math.min(this.summaryTokens, Math.floor(this.window / 10)));
    return request.activities.summarizeContext.executeWithOptions({ summary: `turn ${request.turn} · context summary of messages ${this.view.from}-${upTo - 1}` }, [
      {
        transcript: { workflowId: info.workflowId, runId: info.runId, count, hash: transcript.hashAt(count), ...(transcript.gap ? { gap: transcript.gap } : {}) },
        ...(delta ? { delta } : {}),
        view: this.view,
        upTo,
        ...(request.model !== undefined ? { model: request.model } : {}),
        maxSummaryTokens: summaryTokens,
      },
    ]);
  }

  /** Index of the first message of the `keepRecent` latest exchanges (an assistant message), or the view's start. */
  private keepBoundary(messages: readonly ChatMessage[]): number {
    let seen = 0;
    for (let i = messages.length - 1; i >= this.view.from; i--) {
      if (messages[i]!.role === 'assistant' && !isOmitted(this.view, i)) {
        seen += 1;
        if (seen >= this.keepRecent) return i;
      }
    }
    // Fewer exchanges than that: only the latest user message on is kept.
    for (let i = messages.length - 1; i >= this.view.from; i--) if (messages[i]!.role === 'user') return i;
    return this.view.from;
  }

  /** End of the next part to summarise: as far toward `limit` as the summariser's window allows, on an exchange boundary. */
  private summaryEnd(messages: readonly ChatMessage[], limit: number): number {
    const budget = Math.floor((this.window - Math.min(this.summaryTokens, Math.floor(this.window / 10))) * 0.6);
    let used = this.view.summary !== undefined ? Math.ceil(this.view.summary.length / 4) : 0;
    let end = this.view.from;
    for (let i = this.view.from; i < limit; i++) {
      used += Math.min(this.tokensAt(messages, i), SUMMARY_INPUT_TOKENS_PER_MESSAGE);
      const next = i + 1;
      if (used > budget && end > this.view.from) break;
      if (next >= limit || messages[next]!.role === 'user' || messages[next]!.role === 'assistant') end = next;
    }
    return end;
  }

  /** Indexes of tool results in the view estimated over `limit` tokens. */
  private oversizedResults(transcript: HashedTranscript, limit: number): number[] {
    const out: number[] = [];
    const messages = transcript.messages;
    const stubbed = new Set(this.view.prunedAlso ?? []);
    for (let i = Math.max(this.view.from, this.view.pruneBefore); i < messages.length; i++) {
      if (messages[i]!.role === 'tool' && !stubbed.has(i) && !isOmitted(this.view, i) && this.tokensAt(messages, i) > limit) out.push(i);
    }
    return out;
  }

  /** Estimated tokens the view spends on transcript messages `[from, to)` (stubs for pruned results). */
  private partTokens(messages: readonly ChatMessage[], from: number, to: number): number {
    let total = 0;
    for (let i = from; i < to && i < messages.length; i++) {
      if (isOmitted(this.view, i)) continue;
      total += messages[i]!.role === 'tool' && i < this.view.pruneBefore && !this.view.keep?.includes(i) ? STUB_TOKENS : this.tokensAt(messages, i);
    }
    return total;
  }

  private countUnpruned(messages: readonly ChatMessage[], from: number, to: number): number {
    let n = 0;
    for (let i = from; i < to; i++) if (messages[i]!.role === 'tool' && !isOmitted(this.view, i)) n += 1;
    return n;
  }

  private viewCount(messages: readonly ChatMessage[], from: number, to: number): number {
    let n = 0;
    for (let i = from; i < to && i < messages.length; i++) if (!isOmitted(this.view, i)) n += 1;
    return n;
  }

  private viewLength(transcript: HashedTranscript): number {
    const v = this.view;
    return Math.min(v.head, transcript.length) + (v.summary !== undefined && v.from > v.head ? 1 : 0) + this.viewCount(transcript.messages, Math.max(v.from, v.head), transcript.length);
  }

  private tokensAt(messages: readonly ChatMessage[], index: number): number {
    // Filled as asked (a run continued from another holds no messages in its gap).
    return (this.tokens[index] ??= estimateMessageTokens(messages[index]!));
  }

  private rawEstimate(transcript: HashedTranscript, tools: ToolDefinition[], view: ModelView): number {
    const messages = transcript.messages;
    // The per-message cache follows the transcript, which only grows (rewind starts a new run).
    if (this.tokens.length > messages.length) this.tokens.length = messages.length;
    if (this.toolTokens?.tools !== tools) this.toolTokens = { tools, tokens: estimateToolTokens(tools) };
    let total = this.toolTokens.tokens;
    for (let i = 0; i < Math.min(view.head, messages.length); i++) total += this.tokensAt(messages, i);
    if (view.summary !== undefined && view.from > view.head) total += estimateMessageTokens(summaryMessage(view));
    const prunedAlso = view.prunedAlso?.length ? new Set(view.prunedAlso) : undefined;
    for (let i = Math.max(view.from, view.head); i < messages.length; i++) {
      if (isOmitted(view, i)) continue;
      const message = messages[i]!;
      if (message.role === 'tool' && i < view.pruneBefore && !view.keep?.includes(i)) total += estimateMessageTokens(prunedToolMessage(message as ToolMessage, undefined)) + 12;
      else if (message.role === 'tool' && prunedAlso?.has(i)) {
        total +=
          view.oversizeBytes !== undefined
            ? estimateMessageTokens(cutToolMessage(message as ToolMessage, view.oversizeBytes))
            : estimateMessageTokens(prunedToolMessage(message as ToolMessage, undefined)) + 12;
      } else total += this.tokensAt(messages, i);
    }
    return total;
  }
}
