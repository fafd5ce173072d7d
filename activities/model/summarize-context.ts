/**
 * The `summarizeContext` activity: context compaction's model call. It summarises the part of the
 * model's view that stands for transcript messages `[view.from, upTo)` (with the view's earlier
 * summary before it), so that the workflow can send the summary in their place. One chat
 * completion without tools; the reply is not part of the transcript and is not recorded in the
 * worker's copy.
 */
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ChatMessage, ToolCall } from '../../common/messages';
import { MODEL_BAD_RESPONSE, type ModelFailureDetails, type SummarizeInput, type SummarizeResult } from '../../common/model-call';
import { SUMMARY_PROMPT_MARKER, viewMessages, type ModelView } from '../../common/model-view';
import { inActivitySpan } from '../activity-span';
import type { ModelProviders } from './providers';
import { badRequest, checkInput, summarizeInputSchema } from './input-check';
import type { ResolvedModelConfig } from './model-config';
import type { TranscriptCache } from '../transcript/transcript-cache';

/** Longest tool-call arguments shown in the text to summarise (characters). */
export const SUMMARY_ARGUMENT_CHARS = 500;

/** Longest tool result shown in the text to summarise (characters). */
export const SUMMARY_TOOL_RESULT_CHARS = 1_500;

/** The summarising call's instructions; starts with SUMMARY_PROMPT_MARKER. */
export const SUMMARY_SYSTEM_PROMPT =
  `${SUMMARY_PROMPT_MARKER} You summarise the earlier part of a conversation between a user and an AI agent that uses tools, ` +
  'so that the agent can continue the work from your summary alone: the messages summarised are removed from its context. ' +
  "Write a faithful, compact summary that keeps: the user's goals and instructions (in their own words where it matters); " +
  'decisions made and why; facts learnt; files read and written, with their paths; open questions; and what was about to happen next. ' +
  'Use only what the conversation says: invent nothing, and do not answer or continue the conversation yourself. ' +
  'Write the summary only, with no preamble.';

/** What the activity needs from the worker. */
export interface SummarizeDeps {
  /** The worker's providers: the summary goes to the session's model wherever it is served. */
  providers: ModelProviders;
  config: ResolvedModelConfig;
  transcripts: TranscriptCache | undefined;
}

/** Create the `summarizeContext` activity. */
export function createSummarizeContext(deps: SummarizeDeps): (input: SummarizeInput) => Promise<SummarizeResult> {
  return async (input) =>
    inActivitySpan('loopwright.compaction', { 'gen_ai.operation.name': 'chat' }, async (span) => {
      checkInput(summarizeInputSchema, input, 'summarizeContext');
      const { transcripts } = deps;
      if (!transcripts) throw badRequest('This worker cannot read session transcripts: create its activities with a transcript source (createWorker does)');
      const context = Context.current();
      const { provider, model } = deps.providers.resolve(input.model, input.settings);
      provider.checkReady();
      const { transcript, outcome } = await transcripts.resolve(input.transcript, input.delta, () => context.heartbeat());
      if (input.upTo > transcript.length) throw badRequest(`Invalid summarizeContext input: upTo ${input.upTo} is past the transcript's ${transcript.length} messages`);
      const part = summarizedPart(transcript.slice(0, input.upTo), input.view);
      if (part.length === 0 && !input.view.summary) throw badRequest(`Invalid summarizeContext input: nothing to summarise before message ${input.upTo}`);
      const text = renderForSummary(part, input.view.summary);

      const settings = { ...input.settings, maxOutputTokens: input.maxSummaryTokens };
      delete settings.toolChoice;
      const prepared = provider.prepare({
        model,
        messages: [
          { role: 'system', content: SUMMARY_SYSTEM_PROMPT },
          { role: 'user', content: text },
        ],
        tools: [],
        settings,
        label: 'Compaction summary',
      });
      span.setAttributes({
        'gen_ai.request.model': model,
        'loopwright.attempt': context.info.attempt,
        'loopwright.transcript': outcome,
        'loopwright.summarized_messages': part.length,
      });
      log.info('Compaction summary started', { model, messages: part.length, upTo: input.upTo, from: input.view.from });

      const { reply, durationMs } = await prepared.send();
      const warnings = [...(reply.warnings ?? [])];
      const content = reply.message.content ?? '';
      const summary = content.trim();
      if (summary === '') {
        const details: ModelFailureDetails = { status: 200, providerType: null, providerCode: null, requestId: null, retryAfterMs: null };
        throw ApplicationFailure.create({
          type: MODEL_BAD_RESPONSE,
          message: `The model sent an empty summary (finish reason ${reply.finishReason ?? 'unknown'}); it will be retried.`,
          nonRetryable: false,
          details: [details],
        });
      }
      if (reply.finishReason === 'length') warnings.push(`The summary was cut off at ${input.maxSummaryTokens} tokens; it is kept as it is`);
      if (reply.usage) {
        const meter = context.metricMeter;
        meter.createCounter('loopwright_model_tokens_in', 'tokens', 'Prompt tokens sent to the model').add(reply.usage.promptTokens, { model });
        meter.createCounter('loopwright_model_tokens_out', 'tokens', 'Completion tokens the model returned').add(reply.usage.completionTokens, { model });
        span.setAttributes({ 'gen_ai.usage.input_tokens': reply.usage.promptTokens, 'gen_ai.usage.output_tokens': reply.usage.completionTokens });
      }
      log.info('Compaction summary finished', { model, durationMs, finishReason: reply.finishReason, usage: reply.usage, chars: summary.length });
      return { summary, usage: reply.usage, ...(warnings.length > 0 ? { warnings } : {}), durationMs };
    });
}

/**
 * The view's messages that stand for transcript messages `[view.from, upTo)`, with prune stubs and
 * omissions applied as the model saw them. `messages` is the transcript up to `upTo`.
 */
export function summarizedPart(messages: readonly ChatMessage[], view: ModelView): ChatMessage[] {
  const all = viewMessages(messages, view);
  const head = Math.min(view.head, messages.length);
  const summaryShown = view.summary !== undefined && view.from > view.head ? 1 : 0;
  return all.slice(head + summaryShown);
}

/** The conversation as plain text for the summarising model, after the earlier summary when there is one. */
export function renderForSummary(messages: readonly ChatMessage[], earlierSummary: string | undefined): string {
  const calls = new Map<string, ToolCall>();
  const parts: string[] = [];
  if (earlierSummary) parts.push(`Summary of the conversation before this part:\n${earlierSummary}`);
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        parts.push(`System notice:\n${message.content}`);
        break;
      case 'user':
        parts.push(`User:\n${message.content}`);
        break;
      case 'assistant': {
        const lines: string[] = [];
        if (message.content) lines.push(message.content);
        for (const call of message.tool_calls ?? []) {
          calls.set(call.id, call);
          lines.push(`Tool call: ${call.function.name}(${cut(call.function.arguments, SUMMARY_ARGUMENT_CHARS)})`);
        }
        parts.push(`Assistant:\n${lines.join('\n')}`);
        break;
      }
      case 'tool': {
        const name = calls.get(message.tool_call_id)?.function.name ?? 'a tool';
        parts.push(`Tool result of ${name}:\n${cut(message.content, SUMMARY_TOOL_RESULT_CHARS)}`);
        break;
      }
      default:
        break;
    }
  }
  return parts.join('\n\n');
}

/** `text` cut to `limit` characters, with a note of its full size when it was cut. */
function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}... [cut: ${text.length} characters in full]`;
}
