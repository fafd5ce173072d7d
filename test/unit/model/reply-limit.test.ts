/**
 * The reply-body limit: every body the model activities read from the model server (chat
 * completions, success or error, and describeModel's GETs) stops at `maxReplyBodyBytes` decoded
 * bytes, with the request aborted; the model call then fails `ModelReplyTooLarge`, non-retryable,
 * naming the limit and the bytes read. Through the real openai client over HTTP.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import { APIConnectionError } from 'openai';
import { createModelActivities, type ModelActivityOptions } from '../../../activities/model/call-model';
import { classifyModelError } from '../../../activities/model/classify-error';
import { limitedFetch, ReplyBodyTooLargeError } from '../../../activities/model/reply-limit';
import { DEFAULT_MAX_REPLY_BODY_BYTES, DEFAULT_MAX_REPLY_BYTES, MODEL_REPLY_TOO_LARGE, MODEL_SERVER_ERROR, type ModelFailureDetails } from '../../../common/model-call';
import { bombBody } from '../../../fake-model/bombs';
import { bomb, endless, fault, type FakeOpenAI, raw, startFakeOpenAI, type Step } from '../../../fake-model/server';
import { mockEnv, rejectionOf, runIn } from './fake-client';

const KEY = 'sk-test-limit-0123456789';
const LIMIT = 64 * 1024;
const BOMB_BYTES = 64 * 1024 * 1024;
let fake: FakeOpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  await Promise.all((['gzip', 'deflate', 'br'] as const).map((encoding) => bombBody(encoding, BOMB_BYTES)));
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => fake.reset());

function callModel(options: ModelActivityOptions = {}): Promise<unknown> {
  const { callModel: call } = createModelActivities({ apiKey: KEY, baseURL: fake.baseURL, env: {}, maxReplyBodyBytes: LIMIT, ...options });
  return runIn(mockEnv(), call, { messages: [{ role: 'user', content: 'hi' }], tools: [] });
}

/** A chat completion's JSON with `content` (sent raw: the fake server would cut a long text at its output limit). */
function completion(content: string): string {
  return JSON.stringify({ id: 'c', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] });
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await rejectionOf(promise);
  expect(error).toBeInstanceOf(ApplicationFailure);
  return error as ApplicationFailure;
}

describe('reply-body limit', () => {
  it('defaults: the body may be four times the reply limit (4 MB)', () => {
    expect(DEFAULT_MAX_REPLY_BODY_BYTES).toBe(4 * DEFAULT_MAX_REPLY_BYTES);
  });

  it.each<[string, Step, number]>([
    ['a gzip bomb', bomb('gzip', { inflatedBytes: BOMB_BYTES }), 200],
    ['a deflate bomb', bomb('deflate', { inflatedBytes: BOMB_BYTES }), 200],
    ['a brotli bomb', bomb('br', { inflatedBytes: BOMB_BYTES }), 200],
    ['a gzip bomb in a 500 reply', bomb('gzip', { inflatedBytes: BOMB_BYTES, status: 500 }), 500],
    ['a gzip bomb in a 429 reply', bomb('gzip', { inflatedBytes: BOMB_BYTES, status: 429 }), 429],
    ['an endless body', endless(), 200],
    ['an endless deflate stream', endless({ encoding: 'deflate' }), 200],
    ['a plain reply over the limit', raw(200, completion('x'.repeat(LIMIT + 1))), 200],
    ['an error body over the limit', fault(500, { message: 'y'.repeat(LIMIT + 1) }), 500],
  ])('callModel: %s fails ModelReplyTooLarge at once, naming the limit and the bytes read', async (_what, step, status) => {
    fake.enqueue(step);
    const before = process.memoryUsage().arrayBuffers;
    const failure = await failureOf(callModel());
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(32 * 1024 * 1024);
    expect(failure.type).toBe(MODEL_REPLY_TOO_LARGE);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain(`answered ${status} with a reply body over the limit of ${LIMIT} bytes`);
    const details = failure.details![0] as ModelFailureDetails;
    expect(details).toMatchObject({ status, limitBytes: LIMIT });
    expect(details.receivedBytes).toBeGreaterThan(LIMIT);
    expect(details.receivedBytes).toBeLessThan(LIMIT + 1024 * 1024);
    expect(failure.message).toContain(`(${details.receivedBytes} bytes read, decoded)`);
  });

  it('callModel: an endless body is not drained: the request is aborted once the limit is passed', async () => {
    fake.enqueue(endless());
    await failureOf(callModel());
    const [aborted] = await fake.waitForAborts(1);
    expect(aborted!.bodyBytes).toBeLessThan(LIMIT + 8 * 1024 * 1024);
  });

  it('callModel: replies and error bodies within the limit are read as before', async () => {
    fake.enqueue(raw(200, completion('x'.repeat(LIMIT - 1024))), fault(503, { message: 'busy' }));
    await expect(callModel()).resolves.toMatchObject({ message: { content: 'x'.repeat(LIMIT - 1024) } });
    const failure = await failureOf(callModel());
    expect(failure.type).toBe(MODEL_SERVER_ERROR);
    expect(failure.message).toContain('busy');
  });

  it('callModel: maxReplyBytes bounds the reply message, and sets the body limit to four times it', async () => {
    fake.enqueue(raw(200, completion('z'.repeat(3000))), raw(200, `{"choices":[{"message":{"content":"${'q'.repeat(5000)}`));
    const small = await failureOf(callModel({ maxReplyBytes: 2000, maxReplyBodyBytes: undefined }));
    expect(small.message).toMatch(/The model reply is \d+ bytes, over the limit of 2000 bytes/);
    const body = await failureOf(callModel({ maxReplyBytes: 1000, maxReplyBodyBytes: undefined }));
    expect(body.message).toContain('over the limit of 4000 bytes');
  });

  it('limitedFetch: a body at the limit passes whole, with status and headers', async () => {
    fake.enqueue(raw(200, 'a'.repeat(100), { 'x-extra': 'kept' }));
    const response = await limitedFetch(100)(`${fake.baseURL}/chat/completions`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-extra')).toBe('kept');
    await expect(response.text()).resolves.toBe('a'.repeat(100));
  });

  it('limitedFetch: an error body over the limit rejects the fetch itself; a success body errors as it is read', async () => {
    fake.enqueue(raw(500, 'b'.repeat(101)), raw(200, 'c'.repeat(101)));
    const fetch = limitedFetch(100);
    await expect(fetch(`${fake.baseURL}/chat/completions`, { method: 'POST', body: '{}' })).rejects.toEqual(new ReplyBodyTooLargeError(100, 101, 500));
    const response = await fetch(`${fake.baseURL}/chat/completions`, { method: 'POST', body: '{}' });
    await expect(response.text()).rejects.toBeInstanceOf(ReplyBodyTooLargeError);
  });

  it("classifyModelError: the limit error found under the openai client's connection error", () => {
    const cause = new ReplyBodyTooLargeError(10, 20, 502);
    const failure = classifyModelError(new APIConnectionError({ cause }), { baseURL: 'http://host/v1' }) as ApplicationFailure;
    expect(failure.type).toBe(MODEL_REPLY_TOO_LARGE);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('The model server at http://host/v1 answered 502 with a reply body over the limit of 10 bytes (20 bytes read, decoded)');
    expect(failure.details).toEqual([expect.objectContaining({ status: 502, limitBytes: 10, receivedBytes: 20 })]);
  });
});

describe('describeModel within the limit', () => {
  let server: Server;
  let baseURL: string;

  beforeAll(async () => {
    const gzip = await bombBody('gzip', BOMB_BYTES);
    server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': gzip.length });
      res.end(gzip);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('describeModel: bombs on every route give no window, within bounded memory, and never fail', async () => {
    const { describeModel } = createModelActivities({ apiKey: KEY, baseURL, env: {}, maxReplyBodyBytes: LIMIT });
    const before = process.memoryUsage().arrayBuffers;
    const description = await describeModel({ model: 'm' });
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(32 * 1024 * 1024);
    expect(description).toMatchObject({ model: 'm', contextWindow: null });
  });
});
