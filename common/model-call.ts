/**
 * The model-call activity's input, result and failure types. Plain data and string constants only:
 * the workflow reads them to decide what a failed call means, the worker produces them.
 */
import type { AssistantMessage, ChatMessage, TokenUsage, ToolDefinition, ToolResult } from './messages';
import type { ModelView } from './model-view';
import type { TranscriptRef, TranscriptSlice } from './transcript';
import type { ModelSettings } from './settings/session-settings';

// Declared in the settings table (common/settings/session-settings.ts), with their doc text.
export type { ModelSettings, TokenLimitParameter } from './settings/session-settings';

// Defaults of the session's settings, kept with the others (the settings table reads them there).
export { DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_MODEL } from './defaults';

/**
 * Largest model reply (the normalised AssistantMessage as JSON, in UTF-8 bytes) the activity
 * returns. The reply goes into workflow history, whose payloads Temporal caps (2 MB by default), and
 * into every later request; a reply near that size is a runaway generation, not an answer.
 */
export const DEFAULT_MAX_REPLY_BYTES = 1_000_000;

/**
 * How many times the reply limit an HTTP body from the model server may be, as read: decoded bytes
 * (after gzip, deflate or brotli), counted as they arrive. The body carries the reply's JSON framing,
 * escapes (`\uXXXX` for non-ASCII text is up to twice the UTF-8 size) and usage besides the message,
 * so it is allowed more than the message; anything past it is a runaway or a compression bomb.
 */
export const REPLY_BODY_FACTOR = 4;

/**
 * Largest HTTP body the model activities read from the model server (4 MB by default: the reply
 * limit times REPLY_BODY_FACTOR). The read stops and the request is aborted as soon as a body passes
 * it, so a compressed reply that inflates to gigabytes costs the worker a few MB.
 */
export const DEFAULT_MAX_REPLY_BODY_BYTES = DEFAULT_MAX_REPLY_BYTES * REPLY_BODY_FACTOR;

/** Input of the `callModel` activity: the whole transcript so far and the tools the model may call. */
export interface ModelCallInput {
  messages: ChatMessage[];
  /** Tool definitions; an empty list sends no `tools` at all. */
  tools: ToolDefinition[];
  /** Model name for this call (else the worker's configured model). */
  model?: string;
  temperature?: number;
  /** Upper bound on the reply's tokens. */
  maxTokens?: number;
  /** The session's model settings (override `temperature` and `maxTokens` above when set). */
  settings?: ModelSettings;
  /** Which part of the transcript the model sees (absent: all of it). */
  view?: ModelView;
  /**
   * Messages sent after the view that are not (yet) in the transcript: a cut-off reply and the
   * request to continue it. The reply is then not the transcript's next message.
   */
  extra?: ChatMessage[];
}

/** Result of the `callModel` activity. */
export interface ModelCallResult {
  /** The reply, normalised: `content` string or null, `tool_calls` only when there are some. */
  message: AssistantMessage;
  /** Token counts as the server reported them; null when it reported none. */
  usage: TokenUsage | null;
  /** The model that answered, as the server names it. */
  model: string;
  /** Why the model stopped (`stop`, `tool_calls`, `length`, ...), when the server said. */
  finishReason: string | null;
  /** Wall time of the HTTP call, measured in the activity. */
  durationMs: number;
  /** Set when the model refused (the message's `refusal`); the content then holds the refusal text. */
  refusal?: boolean;
  /** Problems with the server's reply that were mended (odd `usage` numbers, tool calls found in the text). */
  warnings?: string[];
  /** Estimated prompt tokens of the request as sent (the project's estimate), to calibrate against `usage`. */
  estimatedPromptTokens?: number;
  /**
   * Inline reads (`ModelRefCallInput.inline`): the results of the reply's read-only tool calls that
   * the worker ran right after the reply, in tool-call order; null for a call it left to the
   * workflow (another tool, one that failed to run, or a result past the inline size limit).
   */
  toolResults?: (ToolResult | null)[];
  /** Inline reads: the worker holds no runtime context for this run; send it with the next call. */
  inlineNeedsContext?: true;
}

/** Input of `summarizeContext`: summarise the view's messages `[view.from, upTo)` (and the view's earlier summary). */
export interface SummarizeInput {
  transcript: TranscriptRef;
  /** Messages added since the model's last reply, when small (as for `callModelV2`). */
  delta?: TranscriptSlice;
  view: ModelView;
  /** End (exclusive) of the part to summarise; an exchange boundary. */
  upTo: number;
  model?: string;
  settings?: ModelSettings;
  /** Longest summary, in tokens. */
  maxSummaryTokens: number;
}

/** Result of `summarizeContext`. */
export interface SummarizeResult {
  summary: string;
  usage: TokenUsage | null;
  warnings?: string[];
  durationMs: number;
}

/** Input of `describeModel`. */
export interface DescribeModelInput {
  model?: string;
}

/** What the model server says about a model; never fails, `contextWindow` null when it says nothing. */
export interface ModelDescription {
  model: string;
  contextWindow: number | null;
  /** Where the window came from (`/v1/models context_length`, `llama.cpp /props n_ctx`, ...), or why it is unknown. */
  source: string;
}

/* Failure types of the model call live with every other failure type, in failure-types.ts. */
export {
  MODEL_RATE_LIMITED,
  MODEL_QUOTA_EXCEEDED,
  MODEL_SERVER_ERROR,
  MODEL_CONNECTION_ERROR,
  MODEL_TIMEOUT,
  MODEL_REQUEST_TIMEOUT,
  MODEL_CONFLICT,
  MODEL_BAD_RESPONSE,
  MODEL_BAD_REQUEST,
  MODEL_AUTH_ERROR,
  MODEL_PERMISSION_DENIED,
  MODEL_NOT_FOUND,
  MODEL_UNPROCESSABLE,
  MODEL_CONTEXT_LENGTH_EXCEEDED,
  MODEL_REPLY_TOO_LARGE,
  MODEL_UNEXPECTED_ERROR,
  NON_RETRYABLE_MODEL_FAILURES,
  type ModelFailureType,
} from './failure-types';

/** `details[0]` of every model-call failure: the facts behind the message, for programs. */
export interface ModelFailureDetails {
  /** HTTP status, when there was a response. */
  status: number | null;
  /** The provider's own error type and code (e.g. `invalid_request_error`, `model_not_found`). */
  providerType: string | null;
  providerCode: string | null;
  /** The server's `x-request-id`, for support tickets. */
  requestId: string | null;
  /** Delay the server asked for (Retry-After), in milliseconds. */
  retryAfterMs: number | null;
  /** On a context-length failure: the window the server named (llama.cpp `n_ctx`, OpenAI's "maximum context length is N"). */
  contextWindow?: number | null;
  /** On a context-length failure: the prompt tokens the server counted, when it said. */
  promptTokens?: number | null;
  /** On a reply-too-large failure: the limit that was passed, in bytes. */
  limitBytes?: number;
  /** On a reply-too-large failure: the bytes read (decoded) or measured when the limit was passed. */
  receivedBytes?: number;
}
