/**
 * Turning whatever the openai client threw into what Temporal should do about it. Errors are split
 * by who can fix them: time (429, 5xx, timeouts, lost connections: retried, honouring Retry-After),
 * the operator (bad key, unknown model, malformed request: fail at once with what to fix), or nobody
 * because the activity was cancelled (rethrown so Temporal records a cancellation, not a failure).
 * Pure: no clock, no I/O, so every branch is unit-tested without a server.
 */
import { ApplicationFailure, CancelledFailure, TemporalFailure } from '@temporalio/common';
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import {
  MODEL_AUTH_ERROR,
  MODEL_BAD_REQUEST,
  MODEL_CONFLICT,
  MODEL_CONNECTION_ERROR,
  MODEL_NOT_FOUND,
  MODEL_PERMISSION_DENIED,
  MODEL_QUOTA_EXCEEDED,
  MODEL_RATE_LIMITED,
  MODEL_REQUEST_TIMEOUT,
  MODEL_SERVER_ERROR,
  MODEL_TIMEOUT,
  MODEL_UNEXPECTED_ERROR,
  MODEL_UNPROCESSABLE,
  type ModelFailureDetails,
  type ModelFailureType,
} from '../../common/model-call';
import { redactSecrets } from './redact';
import { retryAfterMs } from './retry-after';

/** What the classifier knows about the call besides the error. */
export interface ClassifyContext {
  /** Secrets to keep out of every message (the API key). */
  secrets?: readonly (string | undefined)[];
  /** Model requested, named in hints. */
  model?: string;
  /** Base URL used, named in hints (never holds a key). */
  baseURL?: string;
  /** The activity's cancellation signal: once it fired, any error means "cancelled". */
  signal?: AbortSignal;
  /** Now, for Retry-After HTTP dates (default Date.now()). */
  nowMs?: number;
}

/** Longest provider message quoted in a failure. */
const MAX_PROVIDER_MESSAGE = 500;

/** Return the error the model activity should throw for `error`. */
export function classifyModelError(error: unknown, context: ClassifyContext = {}): Error {
  if (context.signal?.aborted) return cancellationOf(context.signal);
  // Already a Temporal failure (ours, or a CancelledFailure from the SDK): it says what it means.
  if (error instanceof TemporalFailure) return error;
  const redact = (text: string): string => redactSecrets(text, context.secrets ?? []);
  const where = context.baseURL ? ` at ${context.baseURL}` : '';

  if (error instanceof APIUserAbortError) {
    // Aborted, but not by our cancellation signal: treat it as a lost connection and try again.
    return failure(MODEL_CONNECTION_ERROR, `The model request${where} was aborted unexpectedly; it will be retried.`, false, emptyDetails());
  }
  if (error instanceof APIConnectionTimeoutError) {
    return failure(MODEL_TIMEOUT, `The model server${where} did not answer in time; it will be retried.`, false, emptyDetails());
  }
  if (error instanceof APIConnectionError) {
    const reason = redact(connectionReason(error));
    return failure(
      MODEL_CONNECTION_ERROR,
      `Could not reach the model server${where} (${reason.replace(/\.$/, '')}). It will be retried; check OPENAI_BASE_URL if it persists.`,
      false,
      emptyDetails(),
    );
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    return fromStatus(error, error.status, context, redact);
  }

  const message = redact(error instanceof Error ? error.message : String(error));
  const cause = new Error(message);
  cause.name = error instanceof Error ? error.name : 'Error';
  if (error instanceof Error && error.stack) cause.stack = redact(error.stack);
  return ApplicationFailure.create({
    type: MODEL_UNEXPECTED_ERROR,
    message: `The model call failed unexpectedly: ${message}`,
    nonRetryable: false,
    details: [emptyDetails()],
    cause,
  });
}

function fromStatus(
  error: APIError,
  status: number,
  context: ClassifyContext,
  redact: (text: string) => string,
): ApplicationFailure {
  const body = (error.error ?? {}) as { message?: unknown };
  const said = redact(truncate(typeof body.message === 'string' ? body.message : error.message));
  const details: ModelFailureDetails = {
    status,
    providerType: error.type ?? null,
    providerCode: error.code ?? null,
    requestId: error.requestID ?? null,
    retryAfterMs: retryAfterMs(error.headers, context.nowMs ?? Date.now()),
  };
  const model = context.model ? ` '${context.model}'` : '';
  const base = context.baseURL ? ` (now ${context.baseURL})` : '';
  const server = `The model server answered ${status}: ${said}`;

  switch (status) {
    case 400:
      return failure(MODEL_BAD_REQUEST, `${server}. Fix the request: check the model name${model} and that this server supports tools and the options sent.`, true, details);
    case 401:
      return failure(MODEL_AUTH_ERROR, `${server}. The API key was refused: check OPENAI_API_KEY (and OPENAI_BASE_URL${base} if you use another server).`, true, details);
    case 403:
      return failure(MODEL_PERMISSION_DENIED, `${server}. The key may not use this model or endpoint: check the key's project and organisation access to model${model}.`, true, details);
    case 404:
      return failure(MODEL_NOT_FOUND, `${server}. Check the model name${model} (LOOPWRIGHT_MODEL or the session's model) and OPENAI_BASE_URL${base}; it usually ends in /v1.`, true, details);
    case 422:
      return failure(MODEL_UNPROCESSABLE, `${server}. The server could not process the request: check the request options and tool schemas for this server.`, true, details);
    case 408:
      return failure(MODEL_REQUEST_TIMEOUT, `${server}. It will be retried.`, false, details);
    case 409:
      return failure(MODEL_CONFLICT, `${server}. It will be retried.`, false, details);
    case 429:
      if (details.providerCode === 'insufficient_quota') {
        return failure(MODEL_QUOTA_EXCEEDED, `${server}. The account is out of quota: check the plan and billing of the key in OPENAI_API_KEY.`, true, details);
      }
      return failure(MODEL_RATE_LIMITED, `${server}. Rate limited; it will be retried.`, false, details);
    default:
      if (status >= 400 && status < 500) {
        return failure(MODEL_BAD_REQUEST, `${server}. The server rejected the request: check OPENAI_BASE_URL${base} and the model name${model}.`, true, details);
      }
      return failure(MODEL_SERVER_ERROR, `${server}. It will be retried.`, false, details);
  }
}

function failure(type: ModelFailureType, message: string, nonRetryable: boolean, details: ModelFailureDetails): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable,
    details: [details],
    ...(!nonRetryable && details.retryAfterMs !== null ? { nextRetryDelay: details.retryAfterMs } : {}),
  });
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
