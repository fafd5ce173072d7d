/**
 * The JSON bodies the fake server sends: ChatCompletion objects and OpenAI-style error objects.
 * Token counts are derived from character counts (about four characters a token) so that they are
 * deterministic and grow with the transcript, like real ones.
 */
import type { ChatCompletionRequestBody } from './recorded-request';
import type { FaultOptions, ReplyOptions, TextStep, ToolCallsStep } from './steps';

/** A tool call as it appears in a ChatCompletion message. */
export interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** The ChatCompletion object of a successful reply. */
export interface WireChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: {
    index: number;
    message: { role: 'assistant'; content: string | null; refusal: null; tool_calls?: WireToolCall[] };
    finish_reason: string;
    logprobs: null;
  }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

/** Counters that keep ids unique and deterministic across one server's life. */
export interface IdCounters {
  completion: number;
  toolCall: number;
}

/** Rough token count of some text: one token per four characters, at least one. */
export function estimateTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

/** Build the ChatCompletion for a text or tool-calls step. */
export function buildCompletion(
  step: TextStep | ToolCallsStep,
  request: ChatCompletionRequestBody | null,
  serverModel: string,
  ids: IdCounters,
  createdAtMs: number,
): WireChatCompletion {
  ids.completion += 1;
  let content: string | null;
  let toolCalls: WireToolCall[] | undefined;
  if (step.kind === 'text') {
    content = step.content;
  } else {
    content = step.options.content ?? null;
    toolCalls = step.calls.map((call) => {
      ids.toolCall += 1;
      return {
        id: call.id ?? `call_${ids.toolCall}`,
        type: 'function' as const,
        function: {
          name: call.name,
          arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
        },
      };
    });
  }
  const options: ReplyOptions = step.options;
  const completionChars =
    (content?.length ?? 0) + (toolCalls ?? []).reduce((n, c) => n + c.function.name.length + c.function.arguments.length, 0);
  const promptTokens = options.usage?.prompt_tokens ?? estimateTokens(JSON.stringify(request?.messages ?? []).length);
  const completionTokens = options.usage?.completion_tokens ?? estimateTokens(completionChars);
  const message: WireChatCompletion['choices'][number]['message'] = { role: 'assistant', content, refusal: null };
  if (toolCalls) message.tool_calls = toolCalls;
  return {
    id: `chatcmpl-fake-${ids.completion}`,
    object: 'chat.completion',
    created: Math.floor(createdAtMs / 1000),
    model: options.model ?? (typeof request?.model === 'string' ? request.model : serverModel),
    choices: [
      {
        index: 0,
        message,
        finish_reason: options.finishReason ?? (step.kind === 'text' ? 'stop' : 'tool_calls'),
        logprobs: null,
      },
    ],
    ...(options.omitUsage
      ? {}
      : {
          usage: {
            prompt_tokens: promptTokens,
            completion_tokens: completionTokens,
            total_tokens: options.usage?.total_tokens ?? promptTokens + completionTokens,
          },
        }),
  };
}

/** OpenAI's error `type` and `code` for the statuses tests use. */
const ERROR_KINDS: Record<number, { type: string; code: string | null; message: string }> = {
  400: { type: 'invalid_request_error', code: null, message: 'Invalid request.' },
  401: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided.' },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory', message: 'Permission denied.' },
  404: { type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist or you do not have access to it.' },
  408: { type: 'timeout', code: null, message: 'Request timed out.' },
  409: { type: 'conflict', code: null, message: 'Conflicting request.' },
  422: { type: 'invalid_request_error', code: null, message: 'Unprocessable request.' },
  429: { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached. Please try again later.' },
};

/** The `{error:{message,type,code,param}}` body of a fault. */
export function buildErrorBody(status: number, options: FaultOptions): unknown {
  if (options.body !== undefined) return options.body;
  const kind = ERROR_KINDS[status] ?? { type: 'server_error', code: null, message: `The server had an error (${status}).` };
  return {
    error: {
      message: options.message ?? kind.message,
      type: kind.type,
      param: null,
      code: options.code === undefined ? kind.code : options.code,
    },
  };
}

/** Headers a fault sends besides Content-Type. */
export function faultHeaders(options: FaultOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  if (options.retryAfter !== undefined) headers['retry-after'] = String(options.retryAfter);
  if (options.retryAfterMs !== undefined) headers['retry-after-ms'] = String(options.retryAfterMs);
  return headers;
}
