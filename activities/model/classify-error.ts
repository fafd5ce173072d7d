/**
 * Turning whatever the provider's client threw (the openai client, or Anthropic's) into what
 * Temporal should do about it. Errors are split
 * by who can fix them: time (429, 5xx, timeouts, lost connections: retried, honouring Retry-After),
 * the operator (bad key, unknown model, malformed request, a transcript over the model's context:
 * fail at once with what to fix), or nobody because the activity was cancelled (rethrown so
 * Temporal records a cancellation, not a failure). Every text of a failure built here (message,
 * details, cause) is redacted: failures are kept in workflow history, and servers echo what they
 * were sent. Pure: no clock, no I/O, so every branch is unit-tested without a server.
 */
import { ApplicationFailure, CancelledFailure, TemporalFailure } from '@temporalio/common';
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import * as AnthropicErrors from '@anthropic-ai/sdk/error';
import {
  MODEL_AUTH_ERROR,
  MODEL_BAD_REQUEST,
  MODEL_CONFLICT,
  MODEL_CONNECTION_ERROR,
  MODEL_CONTEXT_LENGTH_EXCEEDED,
  MODEL_NOT_FOUND,
  MODEL_PERMISSION_DENIED,
  MODEL_QUOTA_EXCEEDED,
  MODEL_RATE_LIMITED,
  MODEL_REPLY_TOO_LARGE,
  MODEL_REQUEST_TIMEOUT,
  MODEL_SERVER_ERROR,
  MODEL_TIMEOUT,
  MODEL_UNEXPECTED_ERROR,
  MODEL_UNPROCESSABLE,
  type ModelFailureDetails,
  type ModelFailureType,
} from '../../common/model-call';
import { redactSecrets, redactUrl, secretsOfUrl } from '../redaction/redact';
import { replyBodyTooLarge } from './reply-limit';
import { retryAfterMs, type HeaderReader } from './retry-after';

/** What the classifier knows about the call besides the error. */
export interface ClassifyContext {
  /** Secrets to keep out of every message (the API key). */
  secrets?: readonly (string | undefined)[];
  /** Model requested, named in hints. */
  model?: string;
  /**
   * Base URL used, named in hints. Its userinfo (`user:pass@`) is never printed, and its username
   * and password are redacted wherever they appear, so the configured value may be passed as is.
   */
  baseURL?: string;
  /** The activity's cancellation signal: once it fired, any error means "cancelled". */
  signal?: AbortSignal;
  /** Now, for Retry-After HTTP dates (default Date.now()). */
  nowMs?: number;
  /** The variable hints name for the key (default OPENAI_API_KEY). */
  keyVariable?: string;
  /** The variable hints name for the base URL (default OPENAI_BASE_URL). */
  baseUrlVariable?: string;
}

/** Longest provider message (or error type, code, request id) quoted in a failure. */
const MAX_PROVIDER_MESSAGE = 500;

/** Statuses with which servers refuse a prompt that does not fit (413 from some servers and proxies). */
const CONTEXT_LENGTH_STATUSES: readonly number[] = [400, 413];

/**
 * How servers say the prompt does not fit the model's context window, matched in lowercase with '_'
 * and '-' read as spaces, so one list covers codes, types and messages. Plain substrings, not
 * regular expressions: the server's text is untrusted and may be long.
 */
const CONTEXT_LENGTH_PHRASES: readonly string[] = [
  // OpenAI, Azure, Groq: code `context_length_exceeded`; OpenAI and vLLM: "maximum context length".
  'context length',
  // "exceeds the context window".
  'context window',
  // llama.cpp: type `exceed_context_size_error`, "exceeds the available context size".
  'context size',
  'too many tokens',
  // Anthropic: "prompt is too long: 210000 tokens > 200000 maximum".
  'prompt is too long',
];

/**
 * The status an Anthropic error type stands for: an error event inside a stream has no status of
 * its own, only the type (`overloaded_error` midway through a reply is a 529 all the same).
 */
const STATUS_OF_ANTHROPIC_TYPE: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** The redaction applied to every text of a failure. */
type Redact = (text: string) => string;

/** Return the error the model activity should throw for `error`. */
export function classifyModelError(error: unknown, context: ClassifyContext = {}): Error {
  if (context.signal?.aborted) return cancellationOf(context.signal);
  // Already a Temporal failure (ours, or a CancelledFailure from the SDK): it says what it means.
  if (error instanceof TemporalFailure) return error;
  // The base URL's own credentials are secrets too, whether or not the caller listed them.
  const secrets = [...(context.secrets ?? []), ...secretsOfUrl(context.baseURL)];
  const redact: Redact = (text) => redactSecrets(text, secrets);
  // Hints name the server, but never with the credentials its URL may carry.
  const baseURL = context.baseURL ? redactUrl(context.baseURL) : undefined;
  const where = baseURL ? ` at ${baseURL}` : '';

  // Before the connection errors: an error body over the limit reaches us as a fetch failure.
  const tooLarge = replyBodyTooLarge(error);
  if (tooLarge) {
    return failure(
      MODEL_REPLY_TOO_LARGE,
      `The model server${where} answered ${tooLarge.status} with a reply body over the limit of ${tooLarge.limitBytes} bytes ` +
        `(${tooLarge.receivedBytes} bytes read, decoded); the request was aborted and is not retried, since a repeat would likely ` +
        'be as large. A server that compresses a runaway reply, or never ends one, sends this; the limit is maxReplyBodyBytes ' +
        '(LOOPWRIGHT_MAX_REPLY_BODY_BYTES).',
      true,
      { ...emptyDetails(), status: tooLarge.status, limitBytes: tooLarge.limitBytes, receivedBytes: tooLarge.receivedBytes },
      redact,
    );
  }
  if (error instanceof APIUserAbortError || error instanceof AnthropicErrors.APIUserAbortError) {
    // Aborted, but not by our cancellation signal: treat it as a lost connection and try again.
    return failure(MODEL_CONNECTION_ERROR, `The model request${where} was aborted unexpectedly; it will be retried.`, false, emptyDetails(), redact);
  }
  if (error instanceof APIConnectionTimeoutError || error instanceof AnthropicErrors.APIConnectionTimeoutError) {
    return failure(MODEL_TIMEOUT, `The model server${where} did not answer in time; it will be retried.`, false, emptyDetails(), redact);
  }
  if (error instanceof APIConnectionError || error instanceof AnthropicErrors.APIConnectionError) {
    const reason = redact(connectionReason(error));
    return failure(
      MODEL_CONNECTION_ERROR,
      `Could not reach the model server${where} (${reason.replace(/\.$/, '')}). It will be retried; check ${context.baseUrlVariable ?? 'OPENAI_BASE_URL'} if it persists.`,
      false,
      emptyDetails(),
      redact,
    );
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    const body = (error.error ?? {}) as { message?: unknown };
    const facts = {
      status: error.status,
      headers: error.headers,
      body: error.error,
      bodyMessage: body.message,
      message: error.message,
      type: error.type,
      code: error.code,
      requestID: error.requestID,
    };
    return fromStatus(facts, { ...context, baseURL }, redact);
  }
  const anthropicStatus = error instanceof AnthropicErrors.APIError ? (error.status ?? STATUS_OF_ANTHROPIC_TYPE[String(error.type)]) : undefined;
  if (error instanceof AnthropicErrors.APIError && anthropicStatus !== undefined) {
    // Anthropic's body is {type: 'error', error: {type, message}}; the client reads both out.
    const inner = ((error.error ?? {}) as { error?: { message?: unknown; type?: unknown } }).error ?? {};
    const facts = {
      status: anthropicStatus,
      headers: error.headers,
      body: error.error,
      bodyMessage: error.apiMessage ?? inner.message,
      message: error.message,
      type: error.type ?? inner.type,
      code: error.errorCode,
      requestID: error.requestID,
    };
    return fromStatus(facts, { ...context, baseURL }, redact);
  }

  const message = redact(error instanceof Error ? error.message : String(error));
  // A fresh error, not the original: its own cause chain and extra fields are not redacted.
  const cause = new Error(message);
  cause.name = error instanceof Error ? error.name : 'Error';
  if (error instanceof Error && error.stack) cause.stack = error.stack;
  return failure(MODEL_UNEXPECTED_ERROR, `The model call failed unexpectedly: ${message}`, false, emptyDetails(), redact, cause);
}

/** What an HTTP error of either client says, read the same way. */
interface StatusError {
  status: number;
  headers: HeaderReader | undefined;
  /** The error body as parsed JSON. */
  body: unknown;
  /** The provider's own message in the body. */
  bodyMessage: unknown;
  /** The client's message. */
  message: string;
  type: unknown;
  code: unknown;
  requestID: unknown;
}

/** A failure for an HTTP error status; `context.baseURL` is already free of credentials here. */
function fromStatus(error: StatusError, context: ClassifyContext, redact: Redact): ApplicationFailure {
  const { status } = error;
  const bodyMessage = typeof error.bodyMessage === 'string' ? error.bodyMessage : undefined;
  // Redacted before it is cut: a cut through a secret would leave its first part unrecognised.
  const said = truncate(redact(bodyMessage ?? error.message));
  const details: ModelFailureDetails = {
    status,
    providerType: providerText(error.type),
    providerCode: providerText(error.code),
    requestId: providerText(error.requestID),
    retryAfterMs: retryAfterMs(error.headers, context.nowMs ?? Date.now()),
  };
  const model = context.model ? ` '${context.model}'` : '';
  const base = context.baseURL ? ` (now ${context.baseURL})` : '';
  const server = `The model server answered ${status}: ${said}`;
  const fail = (type: ModelFailureType, hint: string, nonRetryable: boolean): ApplicationFailure => failure(type, `${server}. ${hint}`, nonRetryable, details, redact);

  // Before the plain 400: the same prompt would fail the same way on every attempt; the workflow
  // recovers by compacting the model's view, not by retrying the activity.
  if (CONTEXT_LENGTH_STATUSES.includes(status) && saysContextTooLong([error.code, error.type, bodyMessage, error.message])) {
    const sizes = contextSizes(error.body, [bodyMessage, error.message]);
    details.contextWindow = sizes.contextWindow;
    details.promptTokens = sizes.promptTokens;
    const facts = [sizes.contextWindow !== null ? `window ${sizes.contextWindow} tokens` : null, sizes.promptTokens !== null ? `prompt ${sizes.promptTokens} tokens` : null].filter((f) => f !== null);
    return fail(
      MODEL_CONTEXT_LENGTH_EXCEEDED,
      `The session's transcript is too long for the model${model}${facts.length > 0 ? ` (${facts.join(', ')})` : ''}. ` +
        "The session compacts the model's view of the transcript and retries by itself; if it still does not fit, " +
        "a model with a larger context window (LOOPWRIGHT_MODEL or the session's model) or a lower output limit " +
        '(maxOutputTokens) helps.',
      true,
    );
  }

  const key = context.keyVariable ?? 'OPENAI_API_KEY';
  const urlVariable = context.baseUrlVariable ?? 'OPENAI_BASE_URL';
  switch (status) {
    case 400:
      return fail(MODEL_BAD_REQUEST, `Fix the request: check the model name${model} and that this server supports tools and the options sent.`, true);
    case 401:
      return fail(MODEL_AUTH_ERROR, `The API key was refused: check ${key} (and ${urlVariable}${base} if you use another server).`, true);
    case 403:
      return fail(MODEL_PERMISSION_DENIED, `The key may not use this model or endpoint: check the key's project and organisation access to model${model}.`, true);
    case 404:
      return fail(MODEL_NOT_FOUND, `Check the model name${model} (LOOPWRIGHT_MODEL or the session's model) and ${urlVariable}${base}; it usually ends in /v1.`, true);
    case 422:
      return fail(MODEL_UNPROCESSABLE, 'The server could not process the request: check the request options and tool schemas for this server.', true);
    case 408:
      return fail(MODEL_REQUEST_TIMEOUT, 'It will be retried.', false);
    case 409:
      return fail(MODEL_CONFLICT, 'It will be retried.', false);
    case 429:
      if (details.providerCode === 'insufficient_quota') {
        return fail(MODEL_QUOTA_EXCEEDED, `The account is out of quota: check the plan and billing of the key in ${key}.`, true);
      }
      return fail(MODEL_RATE_LIMITED, 'Rate limited; it will be retried.', false);
    case 529:
      // Anthropic's "overloaded_error": the service, not this request; a later attempt usually passes.
      return fail(MODEL_SERVER_ERROR, 'The provider is overloaded; it will be retried.', false);
    default:
      if (status >= 400 && status < 500) {
        return fail(MODEL_BAD_REQUEST, `The server rejected the request: check ${urlVariable}${base} and the model name${model}.`, true);
      }
      return fail(MODEL_SERVER_ERROR, 'It will be retried.', false);
  }
}

/**
 * The failure to throw, with every text in it redacted: the whole message (hints quote the model
 * and the server, not only the provider's words), each string of the details (servers echo keys in
 * error types and codes too), and the cause's message and stack.
 */
function failure(type: ModelFailureType, message: string, nonRetryable: boolean, details: ModelFailureDetails, redact: Redact, cause?: Error): ApplicationFailure {
  const safeDetails = redactDetails(details, redact);
  if (cause) {
    cause.message = redact(cause.message);
    if (cause.stack) cause.stack = redact(cause.stack);
  }
  return ApplicationFailure.create({
    type,
    message: redact(message),
    nonRetryable,
    details: [safeDetails],
    ...(cause ? { cause } : {}),
    ...(!nonRetryable && safeDetails.retryAfterMs !== null ? { nextRetryDelay: safeDetails.retryAfterMs } : {}),
  });
}

/** A copy of `details` with every string redacted; generic over the fields, so new ones are covered too. */
function redactDetails(details: ModelFailureDetails, redact: Redact): ModelFailureDetails {
  const entries = Object.entries(details).map(([key, value]) => [key, typeof value === 'string' ? redact(value) : value]);
  return Object.fromEntries(entries) as ModelFailureDetails;
}

/**
 * A provider's error type, code or request id as a string (some compatible servers send numeric
 * codes such as `400`), cut to the quoting limit; null when absent.
 */
function providerText(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return typeof value === 'string' ? truncate(value) : null;
}

/** True when any of the texts says the prompt is over the model's context window (see CONTEXT_LENGTH_PHRASES). */
function saysContextTooLong(texts: readonly unknown[]): boolean {
  return texts.some((text) => {
    if (typeof text !== 'string') return false;
    const plain = text.toLowerCase().replace(/[_-]/g, ' ');
    return CONTEXT_LENGTH_PHRASES.some((phrase) => plain.includes(phrase));
  });
}

/** Longest text searched for the sizes (the server's text is untrusted and may be long). */
const MAX_SIZE_TEXT = 2000;

/**
 * The window and prompt size a context-length error names: llama.cpp's body has `n_ctx` and
 * `n_prompt_tokens`; OpenAI and vLLM say "maximum context length is 8192 tokens. However, your
 * messages resulted in 9000 tokens" (or "you requested 9000 tokens (8000 in the messages, ...)").
 */
export function contextSizes(body: unknown, texts: readonly unknown[]): { contextWindow: number | null; promptTokens: number | null } {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  let contextWindow = positiveInteger(fields.n_ctx);
  let promptTokens = positiveInteger(fields.n_prompt_tokens);
  for (const text of texts) {
    if (typeof text !== 'string') continue;
    const plain = text.slice(0, MAX_SIZE_TEXT);
    contextWindow ??= numberAfter(plain, /maximum context length is (\d{1,12}) tokens/i);
    promptTokens ??= numberAfter(plain, /resulted in (\d{1,12}) tokens/i) ?? numberAfter(plain, /\((\d{1,12}) in the messages/i) ?? numberAfter(plain, /you requested (\d{1,12}) tokens/i);
    // Anthropic: "prompt is too long: 210000 tokens > 200000 maximum".
    promptTokens ??= numberAfter(plain, /prompt is too long: (\d{1,12}) tokens/i);
    contextWindow ??= numberAfter(plain, /tokens > (\d{1,12}) maximum/i);
  }
  return { contextWindow, promptTokens };
}

function numberAfter(text: string, pattern: RegExp): number | null {
  const match = pattern.exec(text);
  return match ? positiveInteger(Number(match[1])) : null;
}

function positiveInteger(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null;
}

/** The SDK aborts the signal with a CancelledFailure; rethrowing it lets Temporal record a cancellation. */
function cancellationOf(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof CancelledFailure) return reason;
  return new CancelledFailure(typeof reason === 'string' ? reason : 'Model call cancelled');
}

function emptyDetails(): ModelFailureDetails {
  return { status: null, providerType: null, providerCode: null, requestId: null, retryAfterMs: null };
}

/** The innermost useful reason of a connection error ("fetch failed" hides ECONNREFUSED two causes down). */
function connectionReason(error: Error): string {
  const parts: string[] = [];
  let current: unknown = error;
  // Structural, not `instanceof Error`: causes from Node internals may come from another realm.
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth += 1) {
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === 'string' && code !== '') {
      if (!parts.includes(code)) parts.push(code);
    } else if (depth > 0 && typeof message === 'string' && message !== '' && message !== 'fetch failed') {
      parts.push(message);
    }
    current = cause;
  }
  return parts.length > 0 ? parts.join(': ') : error.message;
}

function truncate(text: string): string {
  return text.length > MAX_PROVIDER_MESSAGE ? `${text.slice(0, MAX_PROVIDER_MESSAGE)}...` : text;
}
