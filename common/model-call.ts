/**
 * The model-call activity's input, result and failure types. Plain data and string constants only:
 * the workflow reads them to decide what a failed call means, the worker produces them.
 */
import type { AssistantMessage, ChatMessage, TokenUsage, ToolDefinition } from './messages';

/** Model used when neither the session nor `LOOPWRIGHT_MODEL` names one. */
export const DEFAULT_MODEL = 'gpt-4o-mini';

/**
 * Largest model reply (the normalised AssistantMessage as JSON, in UTF-8 bytes) the activity
 * returns. The reply goes into workflow history, whose payloads Temporal caps (2 MB by default), and
 * into every later request; a reply near that size is a runaway generation, not an answer.
 */
export const DEFAULT_MAX_REPLY_BYTES = 1_000_000;

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
}
