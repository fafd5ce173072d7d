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

/*
 * Failure `type` strings of the model call. Clients and the workflow match on them, so they never
 * change once published. Retryable ones are left to the activity's retry policy (with
 * `nextRetryDelay` from Retry-After when the server sent one); the others fail at once because only
 * the operator can fix them.
 */

/** 429: the server asks us to slow down. Retryable. */
export const MODEL_RATE_LIMITED = 'ModelRateLimited';
/** 429 with code `insufficient_quota`: the account is out of credit; retrying will not help. Non-retryable. */
export const MODEL_QUOTA_EXCEEDED = 'ModelQuotaExceeded';
/** 5xx (or another unexpected status): the server failed. Retryable. */
export const MODEL_SERVER_ERROR = 'ModelServerError';
/** No HTTP response at all (refused, reset, DNS). Retryable. */
export const MODEL_CONNECTION_ERROR = 'ModelConnectionError';
/** The client-side request timeout expired. Retryable. */
export const MODEL_TIMEOUT = 'ModelTimeout';
/** 408: the server timed the request out. Retryable. */
export const MODEL_REQUEST_TIMEOUT = 'ModelRequestTimeout';
/** 409: a conflicting request; OpenAI documents it as safe to retry. Retryable. */
export const MODEL_CONFLICT = 'ModelConflict';
/** A 2xx reply we cannot use (no choices, no message). Retryable: the next sample may be fine. */
export const MODEL_BAD_RESPONSE = 'ModelBadResponse';
/** 400 (and other 4xx not listed here): the request is wrong for this server. Non-retryable. */
export const MODEL_BAD_REQUEST = 'ModelBadRequest';
/** 401, or no API key for a server that needs one. Non-retryable. */
export const MODEL_AUTH_ERROR = 'ModelAuthError';
/** 403: the key is valid but may not use this model or endpoint. Non-retryable. */
export const MODEL_PERMISSION_DENIED = 'ModelPermissionDenied';
/** 404: unknown model or wrong base URL. Non-retryable. */
export const MODEL_NOT_FOUND = 'ModelNotFound';
/** 422: the server understood but cannot process the request. Non-retryable. */
export const MODEL_UNPROCESSABLE = 'ModelUnprocessable';
/**
 * 400 or 413 saying the prompt does not fit the model's context window: the session's transcript
 * has outgrown the model. The same transcript fails the same way every time. Non-retryable.
 */
export const MODEL_CONTEXT_LENGTH_EXCEEDED = 'ModelContextLengthExceeded';
/**
 * The reply is larger than the activity may return (DEFAULT_MAX_REPLY_BYTES unless configured).
 * Non-retryable: the call was paid for, and a repeat would pay again for a likely similar reply.
 */
export const MODEL_REPLY_TOO_LARGE = 'ModelReplyTooLarge';
/** Anything else thrown while calling the model (a bug or an unknown client error). Retryable. */
export const MODEL_UNEXPECTED_ERROR = 'ModelUnexpectedError';

/** Every failure type the model call may raise. */
export type ModelFailureType =
  | typeof MODEL_RATE_LIMITED
  | typeof MODEL_QUOTA_EXCEEDED
  | typeof MODEL_SERVER_ERROR
  | typeof MODEL_CONNECTION_ERROR
  | typeof MODEL_TIMEOUT
  | typeof MODEL_REQUEST_TIMEOUT
  | typeof MODEL_CONFLICT
  | typeof MODEL_BAD_RESPONSE
  | typeof MODEL_BAD_REQUEST
  | typeof MODEL_AUTH_ERROR
  | typeof MODEL_PERMISSION_DENIED
  | typeof MODEL_NOT_FOUND
  | typeof MODEL_UNPROCESSABLE
  | typeof MODEL_CONTEXT_LENGTH_EXCEEDED
  | typeof MODEL_REPLY_TOO_LARGE
  | typeof MODEL_UNEXPECTED_ERROR;

/** The failure types that end a call at once (the activity also marks them `nonRetryable`). */
export const NON_RETRYABLE_MODEL_FAILURES: readonly ModelFailureType[] = [
  MODEL_QUOTA_EXCEEDED,
  MODEL_BAD_REQUEST,
  MODEL_AUTH_ERROR,
  MODEL_PERMISSION_DENIED,
  MODEL_NOT_FOUND,
  MODEL_UNPROCESSABLE,
  MODEL_CONTEXT_LENGTH_EXCEEDED,
  MODEL_REPLY_TOO_LARGE,
];

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
