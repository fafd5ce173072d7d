import OpenAI, { APIConnectionError, APIUserAbortError, BadRequestError, InternalServerError, RateLimitError } from 'openai';
import { delay, drop, fault, hang, raw, SCRIPT_EXHAUSTED_MESSAGE, startFakeOpenAI, text, toolCalls, type FakeOpenAI } from '../../../fake-model/server';

const USER = [{ role: 'user' as const, content: 'Hello there' }];

describe('fake-openai server', () => {
  let fake: FakeOpenAI;
  let client: OpenAI;

  beforeEach(async () => {
    fake = await startFakeOpenAI();
    client = new OpenAI({ apiKey: 'sk-test-secret', baseURL: fake.baseURL, maxRetries: 0 });
  });

  afterEach(async () => {
    await fake.close();
  });

  it('fake-openai: binds to 127.0.0.1 on a free port', () => {
    expect(fake.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(fake.port).toBeGreaterThan(0);
  });

  it('fake-openai: a text step is a valid ChatCompletion with deterministic usage', async () => {
    fake.enqueue(text('Hi, I am the facilitator.'));
    const completion = await client.chat.completions.create({ model: 'gpt-test', messages: USER });

    expect(completion.object).toBe('chat.completion');
    expect(completion.id).toBe('chatcmpl-fake-1');
    expect(completion.model).toBe('gpt-test');
    expect(typeof completion.created).toBe('number');
    expect(completion.choices).toHaveLength(1);
    expect(completion.choices[0]!.message).toMatchObject({ role: 'assistant', content: 'Hi, I am the facilitator.' });
    expect(completion.choices[0]!.message.tool_calls).toBeUndefined();
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    // The project's estimate: 4 per message + ceil(11 bytes / 4) = 7; the reply is 25 bytes, 7 tokens.
    expect(completion.usage).toEqual({ prompt_tokens: 7, completion_tokens: 7, total_tokens: 14 });
  });

  it('fake-openai: records the request body and redacts the authorization header', async () => {
    fake.enqueue(text('ok'));
    const tools = [{ type: 'function' as const, function: { name: 'read_file', description: 'Read', parameters: { type: 'object' } } }];
    await client.chat.completions.create({ model: 'gpt-test', messages: USER, tools, tool_choice: 'auto' });

    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request!.path).toBe('/v1/chat/completions');
    expect(request!.body).toMatchObject({ model: 'gpt-test', messages: USER, tools, tool_choice: 'auto' });
    expect(request!.hasAuthorization).toBe(true);
    expect(request!.headers.authorization).toBeUndefined();
    expect(JSON.stringify(request)).not.toContain('sk-test-secret');
    expect(request!.status).toBe(200);
    expect(request!.aborted).toBe(false);
  });

  it('fake-openai: tool calls get call_<n> ids, object arguments become JSON, malformed text is kept', async () => {
    fake.enqueue(
      toolCalls([
        { name: 'read_file', arguments: { file_path: 'a.md' } },
        { name: 'save_output', arguments: '{"file_path": "x.md", "content": ' },
      ]),
      toolCalls([{ name: 'read_file', arguments: {}, id: 'call_custom' }], { content: 'Loading.' }),
    );
    const first = await client.chat.completions.create({ model: 'm', messages: USER });
    const second = await client.chat.completions.create({ model: 'm', messages: USER });

    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(first.choices[0]!.message.content).toBeNull();
    expect(first.choices[0]!.message.tool_calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"file_path":"a.md"}' } },
      { id: 'call_2', type: 'function', function: { name: 'save_output', arguments: '{"file_path": "x.md", "content": ' } },
    ]);
    expect(second.choices[0]!.message.content).toBe('Loading.');
    expect(second.choices[0]!.message.tool_calls![0]!.id).toBe('call_custom');
  });

  it('fake-openai: a fault carries OpenAI error JSON and Retry-After headers to the APIError', async () => {
    fake.enqueue(fault(429, { retryAfter: 7 }), fault(429, { retryAfterMs: 250 }), fault(503, { message: 'overloaded' }));

    const rateLimited = await client.chat.completions.create({ model: 'm', messages: USER }).catch((e: unknown) => e);
    expect(rateLimited).toBeInstanceOf(RateLimitError);
    const err = rateLimited as RateLimitError;
    expect(err.status).toBe(429);
    expect(err.headers.get('retry-after')).toBe('7');
    expect(err.code).toBe('rate_limit_exceeded');
    expect(err.requestID).toBe('req_fake_1');

    const withMs = (await client.chat.completions.create({ model: 'm', messages: USER }).catch((e: unknown) => e)) as RateLimitError;
    expect(withMs.headers.get('retry-after-ms')).toBe('250');

    const server = await client.chat.completions.create({ model: 'm', messages: USER }).catch((e: unknown) => e);
    expect(server).toBeInstanceOf(InternalServerError);
    expect((server as InternalServerError).status).toBe(503);
    expect((server as InternalServerError).message).toContain('overloaded');
  });

  it('fake-openai: drop() destroys the socket, the client sees an APIConnectionError', async () => {
    fake.enqueue(drop());
    const error = await client.chat.completions.create({ model: 'm', messages: USER }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error).not.toBeInstanceOf(APIUserAbortError);
    expect(fake.requests).toHaveLength(1);
    // The server hung up, not the client: that is not an abort.
    expect(fake.abortedCount()).toBe(0);
  });

  it('fake-openai: a client abort during hang() is recorded and announced', async () => {
    fake.enqueue(hang());
    const controller = new AbortController();
    const pending = client.chat.completions.create({ model: 'm', messages: USER }, { signal: controller.signal });
    await fake.waitForRequests(1);
    const announced = new Promise((resolve) => fake.events.once('aborted', resolve));
    controller.abort();

    await expect(pending).rejects.toBeInstanceOf(APIUserAbortError);
    const aborted = await fake.waitForAborts(1);
    expect(aborted[0]!.index).toBe(0);
    expect(await announced).toBe(fake.requests[0]);
    expect(fake.abortedCount()).toBe(1);
    expect(fake.requests[0]!.status).toBeNull();
  });

  it('fake-openai: delay() answers after the pause, or not at all when the client leaves first', async () => {
    fake.enqueue(delay(150, text('late')), delay(10_000, text('never')));
    const started = Date.now();
    const late = await client.chat.completions.create({ model: 'm', messages: USER });
    expect(late.choices[0]!.message.content).toBe('late');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);

    const controller = new AbortController();
    const pending = client.chat.completions.create({ model: 'm', messages: USER }, { signal: controller.signal });
    await fake.waitForRequests(2);
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(APIUserAbortError);
    await fake.waitForAborts(1);
    expect(fake.requests[1]!.aborted).toBe(true);
  });

  it('fake-openai: an empty script with no responder fails loudly with 500', async () => {
    const error = await client.chat.completions.create({ model: 'm', messages: USER }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalServerError);
    expect((error as InternalServerError).message).toContain(SCRIPT_EXHAUSTED_MESSAGE);
  });

  it('fake-openai: the script goes first, then the responder sees each request and its index', async () => {
    const seen: number[] = [];
    fake.setResponder((request, index) => {
      seen.push(index);
      return text(`reply ${index} to ${request.body?.messages?.length ?? 0} messages`);
    });
    fake.enqueue(text('scripted'));
    const a = await client.chat.completions.create({ model: 'm', messages: USER });
    const b = await client.chat.completions.create({ model: 'm', messages: [...USER, ...USER] });
    expect(a.choices[0]!.message.content).toBe('scripted');
    expect(b.choices[0]!.message.content).toBe('reply 1 to 2 messages');
    expect(seen).toEqual([1]);
  });

  it('fake-openai: a raw step can send a completion without choices', async () => {
    fake.enqueue(raw(200, { id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [] }));
    const completion = await client.chat.completions.create({ model: 'm', messages: USER });
    expect(completion.choices).toEqual([]);
  });

  it('fake-openai: lists its model and answers unknown routes with a 404 JSON error', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['loopwright-fake-model']);

    const response = await fetch(`${fake.baseURL}/completions`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: 'not_found' } });
    expect(fake.requests).toHaveLength(0);
  });

  it('fake-openai: a body that is not JSON gets a 400', async () => {
    const response = await fetch(`${fake.baseURL}/chat/completions`, { method: 'POST', body: 'not json' });
    expect(response.status).toBe(400);
    expect(fake.requests[0]!.body).toBeNull();
  });

  it('fake-openai: waitForRequests rejects with a clear message on timeout', async () => {
    await expect(fake.waitForRequests(1, 50)).rejects.toThrow('expected 1 requests within 50 ms, saw 0');
  });

  it('fake-openai: close() returns promptly with a hanging request and a pending delay', async () => {
    fake.enqueue(hang(), delay(60_000, text('never')));
    const a = client.chat.completions.create({ model: 'm', messages: USER }).catch((e: unknown) => e);
    const b = client.chat.completions.create({ model: 'm', messages: USER }).catch((e: unknown) => e);
    await fake.waitForRequests(2);
    const started = Date.now();
    await fake.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await a).toBeInstanceOf(APIConnectionError);
    expect(await b).toBeInstanceOf(APIConnectionError);
    // Closing is not a client abort.
    expect(fake.abortedCount()).toBe(0);
  });
});

describe('fake-openai startFakeOpenAI options', () => {
  it('fake-openai: uses the given responder and model', async () => {
    const fake = await startFakeOpenAI({ model: 'tiny', responder: () => text('from responder') });
    try {
      const client = new OpenAI({ apiKey: 'x', baseURL: fake.baseURL, maxRetries: 0 });
      const completion = await client.chat.completions.create({ messages: USER } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
      expect(completion.choices[0]!.message.content).toBe('from responder');
      expect(completion.model).toBe('tiny');
    } finally {
      await fake.close();
    }
  });

  it('fake-openai: responseFormat false refuses requests with response_format (a 400, no step spent); reset() and setResponseFormat take it back', async () => {
    const fake = await startFakeOpenAI({ responseFormat: false });
    try {
      const client = new OpenAI({ apiKey: 'x', baseURL: fake.baseURL, maxRetries: 0 });
      const format = { type: 'json_schema' as const, json_schema: { name: 'r', strict: true, schema: { type: 'object' } } };
      fake.enqueue(text('plain'), text('structured'));
      const error = await client.chat.completions.create({ model: 'm', messages: USER, response_format: format }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BadRequestError);
      expect((error as BadRequestError).message).toMatch(/response_format/);
      expect((error as BadRequestError).param).toBe('response_format');
      expect(fake.requests[0]).toMatchObject({ status: 400, body: { response_format: format } });
      expect(fake.remaining()).toBe(2);
      // Without response_format the same server answers.
      expect((await client.chat.completions.create({ model: 'm', messages: USER })).choices[0]!.message.content).toBe('plain');
      fake.setResponseFormat(true);
      expect((await client.chat.completions.create({ model: 'm', messages: USER, response_format: format })).choices[0]!.message.content).toBe('structured');
      fake.setResponseFormat(false);
      fake.reset();
      fake.enqueue(text('after reset'));
      expect((await client.chat.completions.create({ model: 'm', messages: USER, response_format: format })).choices[0]!.message.content).toBe('after reset');
    } finally {
      await fake.close();
    }
  });
});
