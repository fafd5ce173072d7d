/**
 * The JSON bodies the fake server sends: ChatCompletion objects and OpenAI-style error objects.
 * Usage is the project's token estimate (common/token-estimate.ts) unless a step overrides it:
 * `prompt_tokens` is the request's prompt estimate, `completion_tokens` the estimate of the text
 * sent (content followed by every tool call's arguments, as one text), `total_tokens` their sum.
 * A reply over the request's output limit is cut (limits.ts) and ends with `finish_reason: "length"`.
 * A streamed reply (stream.ts) is cut into chunks from the same ChatCompletion object.
 */
import { estimateTextTokens } from '../common/token-estimate';
import { cutReply } from './limits';
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
    message: { role: 'assistant'; content: string | null; refusal: null; reasoning_content?: string; tool_calls?: WireToolCall[] };
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

/** Build the ChatCompletion for a text or tool-calls step. */
export function buildCompletion(
  step: TextStep | ToolCallsStep,
  request: ChatCompletionRequestBody | null,
  serverModel: string,
  ids: IdCounters,
  createdAtMs: number,
  /** The request's prompt tokens by the project's estimate (`promptTokensOf`). */
  promptTokens: number,
  /** Most output tokens the reply may have (`outputLimitOf`); undefined for no limit. */
  outputLimit: number | undefined,
): WireChatCompletion {
  ids.completion += 1;
  const calls =
    step.kind === 'text'
      ? []
      : step.calls.map((call) => ({
          call,
          arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
        }));
  const content = step.kind === 'text' ? step.content : (step.options.content ?? null);
  const cut = cutReply({ content, calls }, outputLimit);
  let toolCalls: WireToolCall[] | undefined;
  if (step.kind === 'tool_calls') {
    toolCalls = cut.callArguments.map((args, i) => {
      ids.toolCall += 1;
      const call = calls[i]!.call;
      return { id: call.id ?? `call_${ids.toolCall}`, type: 'function' as const, function: { name: call.name, arguments: args } };
    });
  }
  const options: ReplyOptions = step.options;
  const sent = (cut.content ?? '') + cut.callArguments.join('');
  const promptUsage = options.usage?.prompt_tokens ?? promptTokens;
  const completionUsage = options.usage?.completion_tokens ?? estimateTextTokens(sent);
  const message: WireChatCompletion['choices'][number]['message'] = { role: 'assistant', content: cut.content, refusal: null };
  if (options.reasoning !== undefined) message.reasoning_content = options.reasoning;
  // A tool-calls reply cut inside its content has no calls left to send.
  if (toolCalls && (toolCalls.length > 0 || !cut.truncated)) message.tool_calls = toolCalls;
  const finishReason = cut.truncated ? 'length' : (options.finishReason ?? (step.kind === 'text' ? 'stop' : 'tool_calls'));
  return {
    id: `chatcmpl-fake-${ids.completion}`,
    object: 'chat.completion',
    created: Math.floor(createdAtMs / 1000),
    model: options.model ?? (typeof request?.model === 'string' ? request.model : serverModel),
    choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
    ...(options.omitUsage
      ? {}
      : {
          usage: {
            prompt_tokens: promptUsage,
            completion_tokens: completionUsage,
            total_tokens: options.usage?.total_tokens ?? promptUsage + completionUsage,
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

/**
 * The 400 a server that cannot do structured replies sends for a request with `response_format`
 * (the fake's `responseFormat: false`), worded as a llama.cpp build without JSON-schema support.
 */
export const RESPONSE_FORMAT_REFUSAL_BODY = {
  error: {
    message: "Unsupported parameter: 'response_format' (json_schema) is not supported by this server.",
    type: 'invalid_request_error',
    param: 'response_format',
    code: 'unsupported_parameter',
  },
};
