import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { classifyModelError } from '../../../activities/model/classify-error';
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
  MODEL_REQUEST_TIMEOUT,
  MODEL_SERVER_ERROR,
  MODEL_TIMEOUT,
  MODEL_UNEXPECTED_ERROR,
  MODEL_UNPROCESSABLE,
  NON_RETRYABLE_MODEL_FAILURES,
  type ModelFailureDetails,
} from '../../../common/model-call';

const KEY = 'sk-proj-Abc123SECRETxyz7890';
const NOW = Date.parse('2025-06-01T12:00:00Z');

/** An APIError exactly as the openai client builds it from a response. */
function apiError(status: number, headers: Record<string, string> = {}, error: Record<string, unknown> = {}): APIError {
  return APIError.generate(status, { error: { message: `server says ${status}`, type: 'some_type', code: null, ...error } }, undefined, new Headers({ 'x-request-id': 'req_42', ...headers }));
}

function classify(error: unknown, extra: Parameters<typeof classifyModelError>[1] = {}): ApplicationFailure {
  const result = classifyModelError(error, {
    secrets: [KEY],
    model: 'gpt-test',
    baseURL: 'http://127.0.0.1:9/v1',
    nowMs: NOW,
    ...extra,
  });
  expect(result).toBeInstanceOf(ApplicationFailure);
  return result as ApplicationFailure;
}

function details(failure: ApplicationFailure): ModelFailureDetails {
  return failure.details![0] as ModelFailureDetails;
}

describe('classifyModelError', () => {
  it.each([
    [400, MODEL_BAD_REQUEST, 'model name'],
    [401, MODEL_AUTH_ERROR, 'check OPENAI_API_KEY'],
    [403, MODEL_PERMISSION_DENIED, "access to model 'gpt-test'"],
    [404, MODEL_NOT_FOUND, 'OPENAI_BASE_URL (now http://127.0.0.1:9/v1)'],
    [422, MODEL_UNPROCESSABLE, 'tool schemas'],
    [418, MODEL_BAD_REQUEST, 'check OPENAI_BASE_URL'],
  ])('classifyModelError: %i is non-retryable %s with a hint (%s)', (status, type, hint) => {
    // Even with Retry-After: a bad request stays bad, so no delay is set.
    const failure = classify(apiError(status, { 'retry-after': '5' }));
    expect(failure.type).toBe(type);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.nextRetryDelay).toBeUndefined();
    expect(failure.message).toContain(`answered ${status}: server says ${status}`);
    expect(failure.message).toContain(hint);
    expect(NON_RETRYABLE_MODEL_FAILURES).toContain(type);
  });

  it('classifyModelError: 404 names the model that was asked for', () => {
    expect(classify(apiError(404)).message).toContain("model name 'gpt-test'");
  });

  it.each([
    [408, MODEL_REQUEST_TIMEOUT],
    [409, MODEL_CONFLICT],
    [429, MODEL_RATE_LIMITED],
    [500, MODEL_SERVER_ERROR],
    [502, MODEL_SERVER_ERROR],
    [503, MODEL_SERVER_ERROR],
    [504, MODEL_SERVER_ERROR],
  ])('classifyModelError: %i is retryable %s', (status, type) => {
    const failure = classify(apiError(status));
    expect(failure.type).toBe(type);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBeUndefined();
    expect(NON_RETRYABLE_MODEL_FAILURES).not.toContain(type);
  });

  it('classifyModelError: 429 insufficient_quota is non-retryable ModelQuotaExceeded', () => {
    const failure = classify(apiError(429, { 'retry-after': '20' }, { code: 'insufficient_quota' }));
    expect(failure.type).toBe(MODEL_QUOTA_EXCEEDED);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('billing');
  });

  it('classifyModelError: details carry status, provider type and code, request id', () => {
    const failure = classify(apiError(429, { 'retry-after': '2' }, { type: 'requests', code: 'rate_limit_exceeded' }));
    expect(details(failure)).toEqual({
      status: 429,
      providerType: 'requests',
      providerCode: 'rate_limit_exceeded',
      requestId: 'req_42',
      retryAfterMs: 2000,
    });
  });

  it.each([
    ['seconds', { 'retry-after': '7' }, 7000],
    ['fractional seconds', { 'retry-after': '1.5' }, 1500],
    ['an HTTP date', { 'retry-after': new Date(NOW + 30_000).toUTCString() }, 30_000],
    ['retry-after-ms', { 'retry-after-ms': '250' }, 250],
    ['retry-after-ms over retry-after', { 'retry-after-ms': '120', 'retry-after': '9' }, 120],
  ])('classifyModelError: Retry-After as %s becomes nextRetryDelay', (_what, headers, expected) => {
    const failure = classify(apiError(429, headers));
    expect(failure.nextRetryDelay).toBe(expected);
    expect(details(failure).retryAfterMs).toBe(expected);
  });

  it.each([
    ['garbage', { 'retry-after': 'soon' }],
    ['a date in the past', { 'retry-after': new Date(NOW - 5000).toUTCString() }],
    ['zero', { 'retry-after': '0' }],
    ['a negative number', { 'retry-after-ms': '-5' }],
  ])('classifyModelError: Retry-After as %s leaves the delay to the retry policy', (_what, headers) => {
    const failure = classify(apiError(503, headers));
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBeUndefined();
  });

  it('classifyModelError: a connection error is retryable and names the cause and the server', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    const error = new APIConnectionError({ cause: new TypeError('fetch failed', { cause: refused }) });
    const failure = classify(error);
    expect(failure.type).toBe(MODEL_CONNECTION_ERROR);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('ECONNREFUSED');
    expect(failure.message).toContain('http://127.0.0.1:9/v1');
  });

  it('classifyModelError: a client timeout is retryable ModelTimeout', () => {
    const failure = classify(new APIConnectionTimeoutError());
    expect(failure.type).toBe(MODEL_TIMEOUT);
    expect(failure.nonRetryable).toBe(false);
  });

  it('classifyModelError: once our signal fired, the abort becomes the signal reason (the CancelledFailure)', () => {
    const controller = new AbortController();
    const cancelled = new CancelledFailure('CANCELLED');
    controller.abort(cancelled);
    expect(classifyModelError(new APIUserAbortError(), { signal: controller.signal })).toBe(cancelled);
    // Whatever the client threw while being aborted, the answer is the cancellation.
    expect(classifyModelError(new APIConnectionError({}), { signal: controller.signal })).toBe(cancelled);
  });

  it('classifyModelError: a fired signal without a CancelledFailure reason still yields a CancelledFailure', () => {
    const controller = new AbortController();
    controller.abort();
    expect(classifyModelError(new APIUserAbortError(), { signal: controller.signal })).toBeInstanceOf(CancelledFailure);
  });

  it('classifyModelError: an abort our signal did not cause is a retryable connection error', () => {
    const failure = classify(new APIUserAbortError(), { signal: new AbortController().signal });
    expect(failure.type).toBe(MODEL_CONNECTION_ERROR);
    expect(failure.nonRetryable).toBe(false);
  });

  it('classifyModelError: Temporal failures pass through unchanged', () => {
    const own = ApplicationFailure.create({ type: 'Whatever', nonRetryable: true });
    const cancelled = new CancelledFailure('gone');
    expect(classifyModelError(own)).toBe(own);
    expect(classifyModelError(cancelled)).toBe(cancelled);
  });

  it('classifyModelError: any other error is a retryable ModelUnexpectedError', () => {
    const failure = classify(new SyntaxError('Unexpected token < in JSON'));
    expect(failure.type).toBe(MODEL_UNEXPECTED_ERROR);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('Unexpected token');
    expect(failure.cause?.name).toBe('SyntaxError');
    expect(classify('a string').message).toContain('a string');
  });

  describe('no key leakage', () => {
    const leaky = [
      ['the full key in a 401 body', apiError(401, {}, { message: `Incorrect API key provided: ${KEY}.` })],
      ['a masked key in a 401 body', apiError(401, {}, { message: 'Incorrect API key provided: sk-proj-****7890.' })],
      ['a bearer token in a 400 body', apiError(400, {}, { message: `bad header Authorization: Bearer ${KEY}` })],
      ['the key in a connection cause', new APIConnectionError({ cause: Object.assign(new Error(`proxy refused ${KEY}`), { code: undefined }) })],
      ['the key in an unexpected error', new Error(`failed with key ${KEY}`)],
    ] as const;

    it.each(leaky)('classifyModelError: %s is redacted', (_what, error) => {
      const failure = classify(error);
      const everything = JSON.stringify({
        message: failure.message,
        details: failure.details,
        cause: failure.cause?.message,
        stack: failure.cause?.stack,
      });
      expect(everything).not.toContain(KEY);
      expect(everything).not.toContain('SECRET');
      expect(everything).not.toContain('****7890');
      // The original did contain it: the test would notice a redaction that does nothing.
      const original = JSON.stringify({ m: (error as Error).message, c: String((error as Error & { cause?: unknown }).cause) });
      expect(original.includes('SECRET') || original.includes('****7890')).toBe(true);
    });

    it('classifyModelError: a configured key that does not look like sk-... is redacted too', () => {
      const localKey = 'local-token-0123456789';
      const failure = classifyModelError(apiError(401, {}, { message: `token ${localKey} rejected` }), { secrets: [localKey] });
      expect((failure as ApplicationFailure).message).not.toContain(localKey);
      expect((failure as ApplicationFailure).message).toContain('[redacted]');
    });
  });

  describe('context length', () => {
    it.each([
      ['OpenAI (code)', 400, { code: 'context_length_exceeded', message: "This model's maximum context length is 128000 tokens." }],
      ['OpenAI code alone', 400, { code: 'context_length_exceeded', message: 'Invalid request.' }],
      ['vLLM', 400, { type: 'BadRequestError', code: 400, message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens." }],
      ['Anthropic-compatible', 400, { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' }],
      ['a generic server', 400, { message: 'Input exceeds the context window of this model' }],
      ['llama.cpp (type)', 400, { type: 'exceed_context_size_error', message: 'the request exceeds the available context size' }],
      ['a 413', 413, { message: 'Too many tokens in the prompt' }],
      ['upper case', 400, { message: 'CONTEXT LENGTH EXCEEDED' }],
    ])('classifyModelError: %s becomes non-retryable ModelContextLengthExceeded', (_who, status, body) => {
      const failure = classify(apiError(status, { 'retry-after': '5' }, body));
      expect(failure.type).toBe(MODEL_CONTEXT_LENGTH_EXCEEDED);
      expect(failure.nonRetryable).toBe(true);
      expect(failure.nextRetryDelay).toBeUndefined();
      expect(NON_RETRYABLE_MODEL_FAILURES).toContain(MODEL_CONTEXT_LENGTH_EXCEEDED);
      // Says what happened and what to do about it.
      expect(failure.message).toContain(`answered ${status}`);
      expect(failure.message).toContain("transcript is too long for the model 'gpt-test'");
      expect(failure.message).toContain("compacts the model's view of the transcript and retries by itself");
      expect(failure.message).toContain('larger context');
      expect(details(failure).status).toBe(status);
    });

    it.each([
      ['an unknown parameter', 400, { code: 'unknown_parameter', message: "Unrecognized request argument supplied: 'foo'" }],
      ['max_tokens too large', 400, { code: 'invalid_value', message: 'max_tokens is too large: 100000. This model supports at most 16384 completion tokens.' }],
      ['a plain 413', 413, { message: 'Request Entity Too Large' }],
      ['context wording on a 429', 429, { message: 'Rate limit reached; context length not the problem' }],
    ])('classifyModelError: %s is not a context-length failure, while the same with context wording on a 400 is', (_what, status, body) => {
      const plain = classify(apiError(status, {}, body));
      expect(plain.type).not.toBe(MODEL_CONTEXT_LENGTH_EXCEEDED);
      expect(plain.type).toBe(status === 429 ? MODEL_RATE_LIMITED : MODEL_BAD_REQUEST);
      expect(plain.message).not.toContain('transcript');
      const saysSo = classify(apiError(400, {}, { ...body, message: `${String(body.message)} (exceeds the context window)` }));
      expect(saysSo.type).toBe(MODEL_CONTEXT_LENGTH_EXCEEDED);
    });
  });

  describe('no key leakage in details', () => {
    const everything = (failure: ApplicationFailure): string => JSON.stringify({ message: failure.message, details: failure.details });

    it('classifyModelError: a key echoed in error.type and error.code is redacted in details and message', () => {
      const error = apiError(401, {}, { type: `invalid_key ${KEY}`, code: KEY, message: 'Unauthorized' });
      // The original carries it where the old classifier copied it verbatim.
      expect(error.type).toContain(KEY);
      const failure = classify(error);
      expect(everything(failure)).not.toContain('SECRET');
      expect(details(failure).providerType).toBe('invalid_key [redacted]');
      expect(details(failure).providerCode).toBe('[redacted]');
    });

    it('classifyModelError: a configured key echoed in the request id is redacted', () => {
      const localKey = 'local-token-0123456789';
      const failure = classifyModelError(apiError(500, { 'x-request-id': `req-${localKey}` }), { secrets: [localKey] }) as ApplicationFailure;
      expect(details(failure).requestId).toBe('req-[redacted]');
    });

    it('classifyModelError: a configured key cut by the quoting limit is still redacted, not half shown', () => {
      const localKey = 'local-token-0123456789';
      // The key straddles the 500-character cut.
      const failure = classifyModelError(apiError(400, {}, { message: `${'x'.repeat(490)}${localKey} rest` }), { secrets: [localKey] }) as ApplicationFailure;
      expect(failure.message).not.toContain('local');
      expect(failure.message).toContain('[redacted]');
    });

    it('classifyModelError: a numeric provider code becomes a string', () => {
      const failure = classify(apiError(500, {}, { code: 500 }));
      expect(details(failure).providerCode).toBe('500');
    });
  });

  describe('no base URL credentials in messages', () => {
    const BASE = 'http://alice:s3cretPass@127.0.0.1:9/v1';
    const inBase = (failure: ApplicationFailure): string => JSON.stringify({ message: failure.message, details: failure.details, cause: failure.cause?.message, stack: failure.cause?.stack });

    it.each([
      ['a 404 hint', apiError(404)],
      ['a 401 hint', apiError(401)],
      ['a 418 hint', apiError(418)],
      ['a timeout', new APIConnectionTimeoutError()],
      ['an abort', new APIUserAbortError()],
      ['a refused connection', new APIConnectionError({ cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) })],
      // What Node's fetch throws for such a URL, which the openai client wraps: it quotes the URL.
      [
        "fetch's own complaint",
        new APIConnectionError({
          cause: new TypeError(`Request cannot be constructed from a URL that includes credentials: ${BASE}/chat/completions`),
        }),
      ],
      ['a server echoing the password', apiError(401, {}, { message: 'bad basic auth for alice / s3cretPass' })],
      ['an unexpected error', new Error(`GET ${BASE}/models failed`)],
    ])('classifyModelError: %s never shows the user or password of the base URL', (_what, error) => {
      const failure = classify(error, { baseURL: BASE });
      expect(inBase(failure)).not.toContain('s3cretPass');
      expect(inBase(failure)).not.toContain('alice');
    });

    it('classifyModelError: hints name the base URL without its credentials', () => {
      expect(classify(apiError(404), { baseURL: BASE }).message).toContain('OPENAI_BASE_URL (now http://127.0.0.1:9/v1)');
      expect(classify(new APIConnectionTimeoutError(), { baseURL: BASE }).message).toContain('server at http://127.0.0.1:9/v1 did not');
    });
  });
});
