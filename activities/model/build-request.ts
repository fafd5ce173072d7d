/**
 * The chat-completion request body of a model call, from the session's model settings. Pure: the
 * messages come in already chosen (the view) and made template-safe.
 */
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import type { ChatMessage, ToolDefinition } from '../../common/messages';
import { DEFAULT_MAX_OUTPUT_TOKENS, type ModelSettings, type TokenLimitParameter } from '../../common/model-call';

/** Host of OpenAI's own API: it wants `max_completion_tokens`; compatible servers know `max_tokens`. */
export const OPENAI_HOST = 'api.openai.com';

/** Fields `extraBody` may never set: what the call is about, and how it is read. */
const PROTECTED_FIELDS: ReadonlySet<string> = new Set(['model', 'messages', 'tools', 'stream']);

/** True when `baseURL` is OpenAI's own API (unset means OpenAI's). */
export function isOpenAIServer(baseURL: string | undefined): boolean {
  if (baseURL === undefined) return true;
  try {
    return new URL(baseURL).hostname === OPENAI_HOST;
  } catch {
    return false;
  }
}

/** What a request is built from. */
export interface RequestParts {
  model: string;
  /** The messages to send, as they go on the wire. */
  messages: ChatMessage[];
  tools: readonly ToolDefinition[];
  settings?: ModelSettings;
  /** The first-version inputs, used when `settings` leaves them out. */
  temperature?: number;
  maxTokens?: number;
  /** The configured base URL (undefined: OpenAI's). */
  baseURL: string | undefined;
  /**
   * `response_format` of this call (a structured reply). Set, `extraBody` cannot override it; null
   * sends none and drops one `extraBody` would add; undefined leaves `extraBody` free to set one.
   */
  responseFormat?: ResponseFormat | null;
}

/** The request's `response_format` (`{type: 'json_schema', json_schema: {...}}`, `json_object`, `text`). */
export type ResponseFormat = NonNullable<ChatCompletionCreateParamsNonStreaming['response_format']>;

/** The parameter the output limit is sent as (see ModelSettings.tokenParameter). */
export function tokenParameterFor(settings: ModelSettings | undefined, baseURL: string | undefined): TokenLimitParameter {
  if (settings?.tokenParameter) return settings.tokenParameter;
  return isOpenAIServer(baseURL) || settings?.reasoningEffort !== undefined ? 'max_completion_tokens' : 'max_tokens';
}

/**
 * The request body: the output limit always; temperature and `reasoning_effort` when set; tools and
 * `tool_choice` only when there are tools; `response_format` when the call asks for one; `extraBody`
 * merged in, except over model, messages, tools, stream and a `response_format` the call decides.
 */
export function buildRequest(parts: RequestParts): ChatCompletionCreateParamsNonStreaming {
  const settings = parts.settings ?? {};
  const body: ChatCompletionCreateParamsNonStreaming = { model: parts.model, messages: parts.messages as ChatCompletionCreateParamsNonStreaming['messages'] };
  if (parts.tools.length > 0) {
    body.tools = parts.tools as ChatCompletionCreateParamsNonStreaming['tools'];
    body.tool_choice = settings.toolChoice ?? 'auto';
  }
  const temperature = settings.temperature ?? parts.temperature;
  if (temperature !== undefined) body.temperature = temperature;
  if (settings.reasoningEffort !== undefined) body.reasoning_effort = settings.reasoningEffort;
  const limit = settings.maxOutputTokens ?? parts.maxTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  if (tokenParameterFor(settings, parts.baseURL) === 'max_completion_tokens') body.max_completion_tokens = limit;
  else body.max_tokens = limit;
  if (parts.responseFormat) body.response_format = parts.responseFormat;

  const extra = settings.extraBody ?? {};
  const merged: Record<string, unknown> = { ...body };
  for (const [key, value] of Object.entries(extra)) {
    if (PROTECTED_FIELDS.has(key) || (key === 'response_format' && parts.responseFormat !== undefined)) continue;
    merged[key] = value;
  }
  return merged as unknown as ChatCompletionCreateParamsNonStreaming;
}
