/**
 * A Responses reply in the project's shape (NormalizedReply): the output's message text joined into
 * the content, `function_call` items as tool calls (their `call_id` as the id the result answers),
 * reasoning items kept whole in `reasoning_items` (to go back unchanged) and their summaries in
 * `reasoning_content`, a refusal as the refused status, and the response's status as the finish
 * reason the loop reads (`incomplete` for `max_output_tokens` → length, for `content_filter` →
 * content_filter; tool calls → tool_calls; else stop). Usage: `input_tokens` is the whole prompt,
 * of which `input_tokens_details.cached_tokens` came from the prompt cache. A reply with no output
 * list is a retryable `ModelBadResponse`, as on Chat Completions.
 */
import { z } from 'zod';
import type { AssistantMessage, ReasoningItem, TokenUsage, ToolCall } from '../../../common/messages';
import { estimatePromptTokens, estimateTextTokens } from '../../../common/token-estimate';
import { type NormalizedReply, parseReply, type ReplyContext } from '../normalize-response';
import { MAX_BELIEVABLE_TOKENS, sanitizeUsage } from '../sanitize-usage';

/** The content of a refusal that came with no text. */
export const REFUSAL_TEXT = 'The model declined to answer (refusal).';

const itemSchema = z.looseObject({ type: z.string() });

const responseSchema = z.object({
  model: z.string().optional(),
  status: z.string().nullish(),
  incomplete_details: z.looseObject({ reason: z.string().nullish() }).nullish(),
  output: z.array(itemSchema),
  // Any JSON: a bad usage is mended, never a reason to retry a paid call.
  usage: z.unknown().optional(),
});

/** Normalise a Responses reply (a `Response` object, or the one a stream was joined into). */
export function normalizeResponsesReply(reply: unknown, request: ReplyContext = {}): NormalizedReply {
  const { output, status, model, usage: rawUsage, incomplete_details: incomplete } = parseReply(responseSchema, reply);
  const texts: string[] = [];
  const refusals: string[] = [];
  const reasoning: ReasoningItem[] = [];
  const toolCalls: ToolCall[] = [];
  for (const item of output) {
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const part of item.content as Record<string, unknown>[]) {
        if (part.type === 'output_text' && typeof part.text === 'string') texts.push(part.text);
        else if (part.type === 'refusal' && typeof part.refusal === 'string') refusals.push(part.refusal);
      }
    } else if (item.type === 'function_call' && typeof item.name === 'string') {
      const callId = typeof item.call_id === 'string' && item.call_id !== '' ? item.call_id : `call_${toolCalls.length}`;
      toolCalls.push({ id: callId, type: 'function', function: { name: item.name, arguments: typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments ?? {}) } });
    } else if (item.type === 'reasoning' && typeof item.id === 'string') {
      reasoning.push(reasoningItem(item));
    }
  }
  const refusal = refusals.length > 0 && texts.join('') === '';
  const joined = texts.join('');
  const message: AssistantMessage = { role: 'assistant', content: joined !== '' ? joined : refusal ? refusals.join('') || REFUSAL_TEXT : null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const summary = reasoning.flatMap((r) => r.summary.map((s) => s.text)).join('\n\n');
  if (summary !== '') message.reasoning_content = summary;
  if (reasoning.length > 0) message.reasoning_items = reasoning;

  const { usage, warnings, fixed } = responsesUsage(rawUsage, {
    promptTokens: () => estimatePromptTokens(request.messages ?? [], request.tools ?? []),
    completionTokens: () => estimateTextTokens([message.content ?? '', ...toolCalls.map((c) => c.function.arguments)].join('')),
  });
  const reason = incomplete?.reason;
  const finishReason = status === 'incomplete' ? (reason === 'content_filter' ? 'content_filter' : 'length') : refusal ? 'content_filter' : toolCalls.length > 0 ? 'tool_calls' : 'stop';
  return {
    message,
    usage,
    model,
    finishReason,
    ...(refusal ? { refusal: true } : {}),
    ...(warnings.length > 0 ? { warnings } : {}),
    ...(fixed > 0 ? { usageFixed: fixed } : {}),
  };
}

/** A reasoning item as it is kept: id, summary texts and encrypted content, nothing else. */
function reasoningItem(item: Record<string, unknown>): ReasoningItem {
  const summary = Array.isArray(item.summary)
    ? (item.summary as Record<string, unknown>[]).filter((s) => typeof s.text === 'string').map((s) => ({ type: 'summary_text' as const, text: s.text as string }))
    : [];
  return { id: item.id as string, summary, ...(typeof item.encrypted_content === 'string' ? { encrypted_content: item.encrypted_content } : {}) };
}

/**
 * Responses usage in the project's shape: `input_tokens` is the whole prompt, its cached part kept
 * apart when there is any. Odd numbers are mended and said, as sanitize-usage.ts does for Chat Completions.
 */
export function responsesUsage(raw: unknown, estimates: Parameters<typeof sanitizeUsage>[1]): { usage: TokenUsage | null; warnings: string[]; fixed: number } {
  if (raw === null || raw === undefined || typeof raw !== 'object' || Array.isArray(raw)) return sanitizeUsage(raw, estimates);
  const fields = raw as Record<string, unknown>;
  const sanitized = sanitizeUsage({ prompt_tokens: fields.input_tokens, completion_tokens: fields.output_tokens, total_tokens: fields.total_tokens }, estimates);
  if (!sanitized.usage) return sanitized;
  const details = fields.input_tokens_details;
  const cached = details !== null && typeof details === 'object' ? (details as Record<string, unknown>).cached_tokens : undefined;
  const usage: TokenUsage = { ...sanitized.usage };
  if (typeof cached === 'number' && Number.isInteger(cached) && cached > 0 && cached <= Math.min(usage.promptTokens, MAX_BELIEVABLE_TOKENS)) usage.cacheReadTokens = cached;
  return { ...sanitized, usage };
}
