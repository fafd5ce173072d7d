/**
 * The context window and output limit of the fake model server, modelled on real servers: a prompt
 * over the window is refused with HTTP 400 (in OpenAI's or llama.cpp's words), and a reply longer
 * than the output limit is cut and ends with `finish_reason: "length"`. Tokens are counted with the
 * project's own estimate (common/token-estimate.ts), so tests can predict every number exactly.
 */
import type { ChatMessage, ToolDefinition } from '../common/messages';
import { SUMMARY_PROMPT_MARKER } from '../common/model-view';
import { BYTES_PER_TOKEN, estimatePromptTokens, estimateTextTokens } from '../common/token-estimate';
import { utf8Length, utf8Prefix } from '../common/transcript';
import type { ChatCompletionRequestBody, RecordedRequest } from './recorded-request';

/** How the server words its refusal of a prompt over the window. */
export type ContextErrorStyle = 'openai' | 'llamacpp';

/**
 * Limits of the fake server. In `setLimits`, a field given replaces the current value, a field
 * given as `undefined` removes it (no window, no output cap, the `openai` style, no `/props`), and a
 * field left out stays as it is.
 */
export interface FakeLimits {
  /** Context window in tokens: prompts over it get a 400; replies are cut at what is left of it. */
  contextWindow?: number | undefined;
  /** The server's own cap on output tokens, whatever the request asks for. */
  maxOutputTokens?: number | undefined;
  /** Wording of the 400 for a prompt over the window (default `openai`). */
  contextErrorStyle?: ContextErrorStyle | undefined;
  /** Answer llama.cpp's `GET /props` (with `n_ctx`); otherwise `/props` is a 404, as on other servers. */
  llamaProps?: boolean | undefined;
}

const LIMIT_KEYS = ['contextWindow', 'maxOutputTokens', 'contextErrorStyle', 'llamaProps'] as const;

/** Merge `update` into `current` by the rules of `FakeLimits`; numbers are checked. */
export function mergeLimits(current: FakeLimits, update: FakeLimits): FakeLimits {
  const next: FakeLimits = { ...current };
  for (const key of LIMIT_KEYS) {
    if (!(key in update)) continue;
    const value = update[key];
    if (value === undefined) delete next[key];
    else (next as Record<string, unknown>)[key] = value;
  }
  for (const key of ['contextWindow', 'maxOutputTokens'] as const) {
    const value = next[key];
    if (value !== undefined && (!Number.isInteger(value) || value < 0)) throw new Error(`fake model: ${key} must be a whole number >= 0, got ${value}`);
  }
  return next;
}

/** The prompt tokens of a request by the project's estimate (messages and tools). */
export function promptTokensOf(body: ChatCompletionRequestBody | null): number {
  const messages = Array.isArray(body?.messages) ? body.messages.map(textualMessage) : [];
  const tools: ToolDefinition[] = Array.isArray(body?.tools) ? body.tools : [];
  try {
    return estimatePromptTokens(messages, tools);
  } catch (err) {
    // A malformed message (say, a tool call without `function`): count the body's JSON text instead.
    void err;
    return estimateTextTokens(JSON.stringify({ messages: body?.messages, tools: body?.tools }) ?? '');
  }
}

/**
 * A message as the estimate can read it. Well-formed messages pass unchanged; content that is not a
 * string (content parts, or a test's malformed body) is counted as its JSON text instead of failing.
 */
function textualMessage(message: ChatMessage): ChatMessage {
  const content: unknown = (message as { content?: unknown } | null)?.content;
  if (message !== null && typeof message === 'object' && (content === undefined || content === null || typeof content === 'string')) return message;
  return { ...(message as object), content: JSON.stringify(content ?? message) ?? '' } as ChatMessage;
}

/** The 400 body a real server sends for a prompt of `promptTokens` over a window of `contextWindow`. */
export function contextErrorBody(style: ContextErrorStyle, contextWindow: number, promptTokens: number): unknown {
  if (style === 'llamacpp') {
    return {
      error: {
        code: 400,
        message: 'the request exceeds the available context size, try increasing it',
        type: 'exceed_context_size_error',
        n_prompt_tokens: promptTokens,
        n_ctx: contextWindow,
      },
    };
  }
  return {
    error: {
      message: `This model's maximum context length is ${contextWindow} tokens. However, your messages resulted in ${promptTokens} tokens. ` + 'Please reduce the length of the messages.',
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    },
  };
}

/** Whether a prompt of `promptTokens` is over the window (a prompt filling it exactly still fits). */
export function exceedsWindow(limits: FakeLimits, promptTokens: number): boolean {
  return limits.contextWindow !== undefined && promptTokens > limits.contextWindow;
}

/**
 * Most output tokens one request may get: the least of the request's `max_completion_tokens` (else
 * `max_tokens`), the server's `maxOutputTokens`, and what the window leaves after the prompt.
 * Undefined when nothing limits it.
 */
export function outputLimitOf(limits: FakeLimits, body: ChatCompletionRequestBody | null, promptTokens: number): number | undefined {
  const requested = validCount(body?.max_completion_tokens) ?? validCount(body?.max_tokens);
  const left = limits.contextWindow === undefined ? undefined : Math.max(0, limits.contextWindow - promptTokens);
  const candidates = [requested, limits.maxOutputTokens, left].filter((n): n is number => n !== undefined);
  return candidates.length === 0 ? undefined : Math.min(...candidates);
}

function validCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined;
}

/** What the server sends of a reply: its content and tool-call arguments, in generation order. */
export interface ReplyText {
  content: string | null;
  /** Tool calls in order; only `arguments` counts toward the output. */
  calls: { arguments: string }[];
}

/** A reply cut to the output limit: what remains, and whether anything was cut. */
export interface CutReply {
  content: string | null;
  /** Arguments of the calls that remain (calls after the one cut are dropped). */
  callArguments: string[];
  truncated: boolean;
}

/**
 * Cut a reply to `limit` tokens: the content first, then each call's arguments, share a budget of
 * `limit * BYTES_PER_TOKEN` UTF-8 bytes. The call the budget runs out in keeps a cut (so invalid)
 * JSON text; later calls are dropped, as a model that stopped generating would not have made them.
 */
export function cutReply(reply: ReplyText, limit: number | undefined): CutReply {
  const whole = { content: reply.content, callArguments: reply.calls.map((c) => c.arguments), truncated: false };
  if (limit === undefined) return whole;
  const sent = (reply.content ?? '') + reply.calls.map((c) => c.arguments).join('');
  let budget = limit * BYTES_PER_TOKEN;
  if (utf8Length(sent) <= budget) return whole;

  const content = reply.content === null ? null : utf8Prefix(reply.content, budget);
  if (content !== null) budget -= utf8Length(content);
  const callArguments: string[] = [];
  if (content === reply.content) {
    for (const call of reply.calls) {
      const args = utf8Prefix(call.arguments, budget);
      callArguments.push(args);
      budget -= utf8Length(args);
      if (args !== call.arguments) break;
    }
  }
  return { content, callArguments, truncated: true };
}

/** The `/v1/models` entry of the server's model, with `context_length` when a window is set. */
export function modelEntry(model: string, limits: FakeLimits): Record<string, unknown> {
  return {
    id: model,
    object: 'model',
    created: 0,
    owned_by: 'loopwright-fake',
    ...(limits.contextWindow === undefined ? {} : { context_length: limits.contextWindow }),
  };
}

/** llama.cpp's `GET /props` body; `n_ctx` is left out when no window is set. */
export function propsBody(limits: FakeLimits): unknown {
  return { default_generation_settings: limits.contextWindow === undefined ? {} : { n_ctx: limits.contextWindow } };
}

/** Whether `request` is a compaction call: its first system message starts with SUMMARY_PROMPT_MARKER. */
export function isSummaryRequest(request: RecordedRequest): boolean {
  const messages = request.body?.messages;
  if (!Array.isArray(messages)) return false;
  const system = messages.find((m) => m !== null && typeof m === 'object' && m.role === 'system');
  return typeof system?.content === 'string' && system.content.startsWith(SUMMARY_PROMPT_MARKER);
}
