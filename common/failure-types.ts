/**
 * Stable `type` strings of every Temporal failure Loopwright raises, in one file. Clients in any
 * language match on these (the `temporal` CLI, Python, ...), so they never change once published.
 */

/** A one-shot session's turn hit `maxIterations`; details[0] is the partial TurnResult. */
export const MAX_ITERATIONS_EXCEEDED = 'LoopwrightMaxIterationsExceeded';

/** A one-shot session's turn failed (model error that retries could not fix); details[0] is the TurnResult. */
export const TURN_FAILED = 'LoopwrightTurnFailed';

/** A one-shot turn whose reply the server cut off at the output limit (details[0] is the partial turn result). */
export const REPLY_TRUNCATED = 'LoopwrightReplyTruncated';

/** A one-shot turn stopped by a token or cost budget (details[0] is the partial turn result). */
export const BUDGET_EXCEEDED = 'LoopwrightBudgetExceeded';

/** A one-shot turn whose saved document still failed its checklist after the last verify attempt (details[0] is the turn result, with its report). */
export const VERIFICATION_FAILED = 'LoopwrightVerificationFailed';

/** A one-shot turn the model refused or the server's content filter stopped (details[0] is the turn result). */
export const REPLY_REFUSED = 'LoopwrightReplyRefused';

/** Agent initialisation failed (bad bundle, agent file or critical action): fix the bundle. */
export const AGENT_INIT_FAILED = 'LoopwrightAgentInitFailed';

/**
 * The run that held a turn continued as new before the turn finished; the turn goes on in the next
 * run. `details[0]` is `{ turn }`: collect its result with the `awaitTurn` update on the latest run
 * (the typed client does this by itself).
 */
export const CONTINUED_AS_NEW = 'LoopwrightContinuedAsNew';

/** Input the session refuses: a mistyped field, an empty or too large message. */
export const BAD_INPUT = 'LoopwrightBadInput';

/** A message or result is larger than one Temporal payload may safely be; nothing was recorded. */
export const TOO_LARGE = 'LoopwrightTooLarge';

/** The transcript carried into a new run does not match its hash: a bug, never retried. */
export const TRANSCRIPT_MISMATCH = 'LoopwrightTranscriptMismatch';

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
 * The reply is larger than the activity may return (DEFAULT_MAX_REPLY_BYTES unless configured), or
 * the HTTP body the server sent passed the reply-body limit as it was read, decoded
 * (DEFAULT_MAX_REPLY_BODY_BYTES unless configured; a compression bomb or a body that never ends).
 * `details[0]` names the limit and the bytes seen. Non-retryable: the call was paid for, and a
 * repeat would pay again for a likely similar reply.
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

/*
 * Refusals of the `send` update (all non-retryable: a retry would be refused the same way).
 */

/** A turn is running; wait for it to finish or interrupt it. */
export const BUSY = 'LoopwrightBusy';
/** The session was asked to end and takes no more messages. */
export const SESSION_ENDING = 'LoopwrightSessionEnding';
/** The session failed (e.g. its agent could not be initialised); start a new one. */
export const SESSION_FAILED = 'LoopwrightSessionFailed';
