/**
 * An Anthropic Messages reply in the project's shape (NormalizedReply): text blocks joined into the
 * content, `tool_use` blocks as tool calls (their object input as JSON text), thinking blocks kept
 * whole in `thinking_blocks` (to go back unchanged) and their text in `reasoning_content`, the stop
 * reason as the finish reason the loop reads (`end_turn` → stop, `tool_use` → tool_calls,
 * `max_tokens` → length, `refusal` → a refusal), and usage as prompt and completion tokens, the
 * prompt counting cached tokens too (which are said apart). A reply with no content list is a
 * retryable `ModelBadResponse`, as on Chat Completions.
 */
import { z } from 'zod';
import type { AssistantMessage, ThinkingBlock, TokenUsage, ToolCall } from '../../../common/messages';
import { estimatePromptTokens, estimateTextTokens } from '../../../common/token-estimate';
import { type NormalizedReply, parseReply, type ReplyContext } from '../normalize-response';
import { MAX_BELIEVABLE_TOKENS, sanitizeUsage } from '../sanitize-usage';

/** Stop reasons as the finish reasons of Chat Completions, which the turn loop reads. */
export const FINISH_REASONS: Readonly<Record<string, string>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  refusal: 'content_filter',
};

/** The content of a refusal that came with no text. */
export const REFUSAL_TEXT = 'The model declined to answer (stop reason: refusal).';

const blockSchema = z.looseObject({ type: z.string() });

const messageSchema = z.object({
  model: z.string().optional(),
  content: z.array(blockSchema),
  stop_reason: z.string().nullish(),
  // Any JSON: a bad usage is mended, never a reason to retry a paid call.
  usage: z.unknown().optional(),
});

/** Normalise a Messages reply (a `Message` object, or the one a stream was joined into). */
export function normalizeMessagesReply(reply: unknown, request: ReplyContext = {}): NormalizedReply {
  const { content: blocks, stop_reason: stopReason, model, usage: rawUsage } = parseReply(messageSchema, reply);
  const texts: string[] = [];
  const thinking: ThinkingBlock[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of blocks) {
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block.type === 'thinking' && typeof block.thinking === 'string')
      thinking.push({ type: 'thinking', thinking: block.thinking, signature: typeof block.signature === 'string' ? block.signature : '' });
    else if (block.type === 'redacted_thinking' && typeof block.data === 'string') thinking.push({ type: 'redacted_thinking', data: block.data });
    else if (block.type === 'tool_use' && typeof block.name === 'string') {
      const input = block.input;
      toolCalls.push({
        id: typeof block.id === 'string' && block.id !== '' ? block.id : `toolu_${toolCalls.length}`,
        type: 'function',
        // A streamed input that was not JSON arrives as its text: the loop tells the model.
        function: { name: block.name, arguments: typeof input === 'string' ? input : JSON.stringify(input ?? {}) },
      });
    }
  }
  const refusal = stopReason === 'refusal';
  const joined = texts.join('');
  const message: AssistantMessage = { role: 'assistant', content: joined !== '' ? joined : refusal ? REFUSAL_TEXT : null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const reasoning = thinking.map((b) => (b.type === 'thinking' ? b.thinking : '')).join('');
  if (reasoning !== '') message.reasoning_content = reasoning;
  if (thinking.length > 0) message.thinking_blocks = thinking;

  const { usage, warnings, fixed } = messagesUsage(rawUsage, {
    promptTokens: () => estimatePromptTokens(request.messages ?? [], request.tools ?? []),
    completionTokens: () => estimateTextTokens([message.content ?? '', ...toolCalls.map((c) => c.function.arguments)].join('')),
  });
  return {
    message,
    usage,
    model,
    finishReason: stopReason ? (FINISH_REASONS[stopReason] ?? stopReason) : null,
    ...(refusal ? { refusal: true } : {}),
    ...(warnings.length > 0 ? { warnings } : {}),
    ...(fixed > 0 ? { usageFixed: fixed } : {}),
  };
}

/**
 * Messages usage in the project's shape: `input_tokens` are the uncached part of the prompt, so the
 * prompt is input + cache writes + cache reads; the cached parts are kept apart when there are any.
 * Odd numbers are mended and said, as sanitize-usage.ts does for Chat Completions.
 */
export function messagesUsage(raw: unknown, estimates: Parameters<typeof sanitizeUsage>[1]): { usage: TokenUsage | null; warnings: string[]; fixed: number } {
  if (raw === null || raw === undefined || typeof raw !== 'object' || Array.isArray(raw)) return sanitizeUsage(raw, estimates);
  const fields = raw as Record<string, unknown>;
  const cacheRead = count(fields.cache_read_input_tokens);
  const cacheWrite = count(fields.cache_creation_input_tokens);
  const input = fields.input_tokens;
  const prompt = typeof input === 'number' && Number.isInteger(input) && input >= 0 ? input + cacheRead + cacheWrite : input;
  const output = fields.output_tokens;
  const total = typeof prompt === 'number' && typeof output === 'number' ? prompt + output : undefined;
  const sanitized = sanitizeUsage({ prompt_tokens: prompt, completion_tokens: output, total_tokens: total }, estimates);
  if (!sanitized.usage) return sanitized;
  const usage: TokenUsage = { ...sanitized.usage };
  if (cacheRead > 0) usage.cacheReadTokens = cacheRead;
  if (cacheWrite > 0) usage.cacheWriteTokens = cacheWrite;
  return { ...sanitized, usage };
}

/** A cache count, or 0 when absent or not a sane whole number. */
function count(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_BELIEVABLE_TOKENS ? value : 0;
}
