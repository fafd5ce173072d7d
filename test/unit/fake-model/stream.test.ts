/**
 * Streamed replies of the fake model server (`"stream": true`), read with the real openai client:
 * the chunks assemble to exactly the non-streamed reply of the same step, at a pace tests can set.
 */
import OpenAI, { APIConnectionError, APIUserAbortError, BadRequestError, RateLimitError } from 'openai';
import { DEFAULT_CHUNK_CHARS, delay, drop, fault, hang, startFakeOpenAI, text, toolCalls, type FakeOpenAI, type FakeOpenAIOptions, type Step } from '../../../fake-model/server';

/** A request's parameters without `stream` (each test says how it asks). */
type Params = Omit<OpenAI.ChatCompletionCreateParamsNonStreaming, 'stream'>;
type Chunk = OpenAI.ChatCompletionChunk;

const USER = [{ role: 'user' as const, content: 'Hello there' }];
const PARAMS: Params = { model: 'gpt-test', messages: USER };
const INCLUDE_USAGE = { stream_options: { include_usage: true } };

/** Servers started by a test, closed after it. */
const started: FakeOpenAI[] = [];

async function start(options: FakeOpenAIOptions = {}): Promise<{ fake: FakeOpenAI; client: OpenAI }> {
  const fake = await startFakeOpenAI(options);
  started.push(fake);
  return { fake, client: new OpenAI({ apiKey: 'sk-test', baseURL: fake.baseURL, maxRetries: 0 }) };
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((fake) => fake.close()));
});

/** Every chunk of a streamed request, and what the client's stream helper assembles from them. */
async function streamed(client: OpenAI, params: Params): Promise<{ chunks: Chunk[]; final: OpenAI.ChatCompletion }> {
  const stream = client.chat.completions.stream(params);
  const chunks: Chunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const final = await stream.finalChatCompletion();
  // The helper adds `parsed: null` to each message (its own field, not the server's).
  for (const choice of final.choices) delete (choice.message as { parsed?: unknown }).parsed;
  return { chunks, final };
}

/**
 * The same step answered non-streamed by one fresh server and streamed by another (fresh servers
 * so the completion and call ids match); the `created` second may differ by one.
 */
async function bothWays(
  step: Step,
  params: Params = PARAMS,
  options: FakeOpenAIOptions = {},
): Promise<{ plain: OpenAI.ChatCompletion; chunks: Chunk[]; final: OpenAI.ChatCompletion; fake: FakeOpenAI }> {
  const a = await start(options);
  const b = await start(options);
  a.fake.enqueue(step);
  b.fake.enqueue(step);
  const plain = await a.client.chat.completions.create(params);
  const { chunks, final } = await streamed(b.client, params);
  expect(Math.abs(final.created - plain.created)).toBeLessThanOrEqual(1);
  return { plain, chunks, final: { ...final, created: plain.created }, fake: b.fake };
}

describe('fake-openai streaming', () => {
  it('fake-openai stream: a text reply assembles to the non-streamed one, usage chunk last with include_usage', async () => {
    const { plain, chunks, final, fake } = await bothWays(text('Hi, I am the facilitator.'), { ...PARAMS, ...INCLUDE_USAGE });

    expect(final).toEqual(plain);
    expect(plain.usage).toEqual({ prompt_tokens: 7, completion_tokens: 7, total_tokens: 14 });
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === plain.id && c.model === 'gpt-test')).toBe(true);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    // 25 characters in pieces of DEFAULT_CHUNK_CHARS (4): 7 content chunks.
    const pieces = chunks.slice(1, -2).map((c) => c.choices[0]!.delta.content);
    expect(DEFAULT_CHUNK_CHARS).toBe(4);
    expect(pieces).toEqual(['Hi, ', 'I am', ' the', ' fac', 'ilit', 'ator', '.']);
    const finish = chunks[chunks.length - 2]!;
    expect(finish.choices).toEqual([{ index: 0, delta: {}, finish_reason: 'stop', logprobs: null }]);
    const last = chunks[chunks.length - 1]!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual(plain.usage);
    // Every other chunk says `usage: null`, as OpenAI's do.
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(fake.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(fake.requests[0]!.status).toBe(200);
    expect(fake.requests[0]!.streamedChunks).toBe(chunks.length);
  });

  it('fake-openai stream: the wire is text/event-stream with data lines and a final [DONE]', async () => {
    const { fake } = await start();
    fake.enqueue(text('abcdef'));
    const response = await fetch(`${fake.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...PARAMS, stream: true }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('x-request-id')).toBe('req_fake_1');
    const events = (await response.text()).split('\n\n');
    expect(events.pop()).toBe('');
    expect(events.every((e) => e.startsWith('data: '))).toBe(true);
    expect(events[events.length - 1]).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice('data: '.length)) as Chunk);
    expect(chunks.map((c) => c.choices[0]!.delta.content ?? null)).toEqual(['', 'abcd', 'ef', null]);
    // No include_usage: no usage field at all.
    expect(chunks.some((c) => 'usage' in c)).toBe(false);
  });

  it('fake-openai stream: two tool calls with long arguments, split over chunks, assemble to the same calls and ids', async () => {
    const long = { file_path: 'docs/brief.md', content: 'x'.repeat(50) };
    const step = toolCalls(
      [
        { name: 'save_output', arguments: long },
        { name: 'read_file', arguments: '{"file_path": "a.md"', id: 'call_custom' },
      ],
      { content: 'Saving.' },
    );
    const { plain, chunks, final } = await bothWays(step);

    expect(final).toEqual({ ...plain, usage: undefined });
    expect(plain.choices[0]!.finish_reason).toBe('tool_calls');
    expect(plain.choices[0]!.message.tool_calls!.map((c) => c.id)).toEqual(['call_1', 'call_custom']);
    // No include_usage: the streamed reply has no usage, the non-streamed one has.
    expect(final.usage).toBeUndefined();
    expect(plain.usage).toBeDefined();

    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    const firstOfEach = calls.filter((c) => c.id !== undefined);
    expect(firstOfEach).toEqual([
      { index: 0, id: 'call_1', type: 'function', function: { name: 'save_output', arguments: '' } },
      { index: 1, id: 'call_custom', type: 'function', function: { name: 'read_file', arguments: '' } },
    ]);
    const args0 = calls.filter((c) => c.index === 0 && c.id === undefined);
    expect(args0.length).toBe(Math.ceil(JSON.stringify(long).length / 4));
    expect(args0.every((c) => Object.keys(c).sort().join() === 'function,index' && Object.keys(c.function!).join() === 'arguments')).toBe(true);
    expect(args0.map((c) => c.function!.arguments).join('')).toBe(JSON.stringify(long));
    // Order: role, content, the first call, the second call, finish.
    const kinds = chunks.map((c) => {
      const delta = c.choices[0]!.delta;
      return delta.role ? 'role' : delta.content ? 'content' : delta.tool_calls ? `call${delta.tool_calls[0]!.index}` : 'finish';
    });
    expect(kinds.filter((k, i) => k !== kinds[i - 1])).toEqual(['role', 'content', 'call0', 'call1', 'finish']);
    expect(chunks[chunks.length - 1]!.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('fake-openai stream: a reply cut by the output limit streams the same cut text and finish_reason length', async () => {
    const long = 'abcdefghijklmnopqrstuvwxyz'.repeat(10);
    const cutText = await bothWays(text(long), { ...PARAMS, max_tokens: 10, ...INCLUDE_USAGE });
    expect(cutText.final).toEqual(cutText.plain);
    expect(cutText.plain.choices[0]!.finish_reason).toBe('length');
    expect(cutText.plain.choices[0]!.message.content).toBe(long.slice(0, 40));

    // The server's own cap, cut inside the second call's arguments: the third call is dropped.
    const step = toolCalls([
      { name: 'a', arguments: { text: 'x'.repeat(20) } },
      { name: 'b', arguments: { text: 'y'.repeat(40) } },
      { name: 'c', arguments: {} },
    ]);
    const cutCalls = await bothWays(step, { ...PARAMS, ...INCLUDE_USAGE }, { maxOutputTokens: 12 });
    expect(cutCalls.final).toEqual(cutCalls.plain);
    expect(cutCalls.plain.choices[0]!.finish_reason).toBe('length');
    expect(cutCalls.plain.choices[0]!.message.tool_calls!.map((c) => (c.type === 'function' ? c.function.name : c.type))).toEqual(['a', 'b']);
    expect(cutCalls.plain.usage!.completion_tokens).toBe(12);
  });

  it('fake-openai stream: usage overrides stream as given; omitUsage sends no usage chunk even with include_usage', async () => {
    const override = await bothWays(text('ok', { usage: { prompt_tokens: 1000, completion_tokens: 3 } }), { ...PARAMS, ...INCLUDE_USAGE });
    expect(override.final).toEqual(override.plain);
    expect(override.final.usage).toEqual({ prompt_tokens: 1000, completion_tokens: 3, total_tokens: 1003 });

    const omitted = await bothWays(text('ok', { omitUsage: true, finishReason: 'end_turn', model: 'other' }), { ...PARAMS, ...INCLUDE_USAGE });
    expect(omitted.final).toEqual(omitted.plain);
    expect(omitted.plain.usage).toBeUndefined();
    expect(omitted.plain.choices[0]!.finish_reason).toBe('end_turn');
    expect(omitted.chunks.every((c) => !('usage' in c) && c.choices.length === 1 && c.model === 'other')).toBe(true);
  });

  it('fake-openai stream: reasoning streams as reasoning_content deltas before the content', async () => {
    const { fake, client } = await start();
    fake.enqueue(text('Done.', { reasoning: 'I should greet them.' }), text('Done.', { reasoning: 'I should greet them.' }));
    const plain = await client.chat.completions.create(PARAMS);
    expect(plain.choices[0]!.message).toMatchObject({ content: 'Done.', reasoning_content: 'I should greet them.' });

    const stream = await client.chat.completions.create({ ...PARAMS, stream: true });
    const deltas: Record<string, unknown>[] = [];
    for await (const chunk of stream) deltas.push(chunk.choices[0]!.delta as Record<string, unknown>);
    const reasoning = deltas.filter((d) => typeof d.reasoning_content === 'string');
    expect(reasoning.map((d) => d.reasoning_content).join('')).toBe('I should greet them.');
    expect(reasoning).toHaveLength(5);
    const firstContent = deltas.findIndex((d) => typeof d.content === 'string' && d.content !== '');
    expect(deltas.indexOf(reasoning[reasoning.length - 1]!)).toBeLessThan(firstContent);
    expect(deltas.map((d) => d.content ?? '').join('')).toBe('Done.');
  });

  it('fake-openai stream: chunkChars counts characters, not UTF-16 units', async () => {
    const { plain, chunks, final } = await bothWays(text('😀é😀ab'), { ...PARAMS, ...INCLUDE_USAGE }, { streaming: { chunkChars: 1 } });
    expect(final).toEqual(plain);
    expect(chunks.map((c) => c.choices[0]?.delta.content).filter(Boolean)).toEqual(['😀', 'é', '😀', 'a', 'b']);
  });
});

describe('fake-openai streaming pace', () => {
  it('fake-openai stream: setStreaming sets the piece size and the pause; the reply is read while it is written', async () => {
    const { fake, client } = await start();
    fake.setStreaming({ chunkChars: 5, intervalMs: 30 });
    fake.enqueue(text('Hello, world! How are you?'));
    const stream = await client.chat.completions.create({ ...PARAMS, stream: true });
    const contents: string[] = [];
    const seenWhileWriting: (number | null)[] = [];
    let chunkCount = 0;
    for await (const chunk of stream) {
      chunkCount += 1;
      const content = chunk.choices[0]?.delta.content;
      if (content) {
        contents.push(content);
        seenWhileWriting.push(fake.requests[0]!.status);
      }
    }
    expect(contents).toEqual(['Hello', ', wor', 'ld! H', 'ow ar', 'e you', '?']);
    // role + 6 pieces + finish.
    expect(chunkCount).toBe(8);
    // The first pieces reached the client before the server had finished the reply.
    expect(seenWhileWriting[0]).toBeNull();
    expect(fake.requests[0]!.status).toBe(200);
    expect(fake.requests[0]!.streamedChunks).toBe(8);
  });

  it('fake-openai stream: firstChunkAt is when the first content chunk went out, after the role chunk', async () => {
    const { fake, client } = await start({ streaming: { chunkChars: 3, intervalMs: 40 } });
    fake.enqueue(text('abcdef'));
    const stream = await client.chat.completions.create({ ...PARAMS, stream: true });
    let firstContentAt: number | undefined;
    let pendingAtRoleChunk: number | undefined = -1;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (delta?.role) pendingAtRoleChunk = fake.requests[0]!.firstChunkAt;
      if (delta?.content) firstContentAt ??= Date.now();
    }
    const record = fake.requests[0]!;
    expect(pendingAtRoleChunk).toBeUndefined();
    // The role chunk goes at once and the first content one a pause later.
    expect(record.firstChunkAt! - record.receivedAt).toBeGreaterThanOrEqual(30);
    expect(firstContentAt!).toBeGreaterThanOrEqual(record.firstChunkAt!);
  });

  it('fake-openai stream: firstChunkAt counts a tool-call delta, and is set at once when unpaced; absent unstreamed', async () => {
    const { fake, client } = await start();
    fake.enqueue(toolCalls([{ name: 'read_file', arguments: { file_path: 'a' } }]), text('plain'));
    await streamed(client, PARAMS);
    expect(fake.requests[0]!.firstChunkAt).toBeGreaterThanOrEqual(fake.requests[0]!.receivedAt);
    await client.chat.completions.create(PARAMS);
    expect(fake.requests[1]!.firstChunkAt).toBeUndefined();
  });

  it('fake-openai stream: the start option sets the pace; reset() restores the default', async () => {
    const { fake, client } = await start({ streaming: { chunkChars: 2 } });
    fake.enqueue(text('abcdef'));
    const first = await streamed(client, { ...PARAMS });
    expect(first.chunks).toHaveLength(5);

    fake.reset();
    fake.enqueue(text('abcdef'));
    const second = await streamed(client, { ...PARAMS });
    expect(second.chunks).toHaveLength(4);
  });

  it('fake-openai stream: holdAfterChunks stops a stream half written until releaseStreams(); later streams pass until the setting changes', async () => {
    const { fake, client } = await start();
    fake.setStreaming({ chunkChars: 2, intervalMs: 1, holdAfterChunks: 3 });
    fake.enqueue(text('abcdefgh'), text('ijkl'), text('mnop'));
    const stream = await client.chat.completions.create({ ...PARAMS, stream: true });
    const contents: string[] = [];
    const reading = (async () => {
      for await (const chunk of stream) if (chunk.choices[0]?.delta.content) contents.push(chunk.choices[0].delta.content);
    })();
    // role + 'ab' + 'cd', then the stream waits, however long.
    for (let i = 0; i < 200 && fake.heldStreams() === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(fake.heldStreams()).toBe(1);
    await new Promise((r) => setTimeout(r, 50));
    expect(contents).toEqual(['ab', 'cd']);
    expect([fake.requests[0]!.status, fake.requests[0]!.streamedChunks]).toEqual([null, 3]);
    fake.releaseStreams();
    await reading;
    expect(contents).toEqual(['ab', 'cd', 'ef', 'gh']);
    expect([fake.requests[0]!.status, fake.heldStreams()]).toEqual([200, 0]);
    // Released: the next stream passes its hold.
    expect((await streamed(client, PARAMS)).final.choices[0]!.message.content).toBe('ijkl');
    // A new setting holds again.
    fake.setStreaming({ chunkChars: 2, holdAfterChunks: 1 });
    const held = streamed(client, PARAMS);
    for (let i = 0; i < 200 && fake.heldStreams() === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(fake.heldStreams()).toBe(1);
    fake.releaseStreams();
    expect((await held).final.choices[0]!.message.content).toBe('mnop');
    expect(() => fake.setStreaming({ holdAfterChunks: 0 })).toThrow('holdAfterChunks must be a whole number >= 1, got 0');
  });

  it("fake-openai stream: a reply's own stream rate paces and holds it alone; its release lets it go, releaseStreams() does not", async () => {
    const { fake, client } = await start();
    // The server's setting holds after one chunk; the replies with a rate of their own ignore it.
    fake.setStreaming({ chunkChars: 8, holdAfterChunks: 1 });
    let letGo: () => void = () => undefined;
    const release = new Promise<void>((resolve) => (letGo = resolve));
    fake.enqueue(text('abcdefgh', { stream: { chunkChars: 2, holdAfterChunks: 3, release } }), text('ijklmn', { stream: { chunkChars: 3 } }));
    const stream = await client.chat.completions.create({ ...PARAMS, stream: true });
    const contents: string[] = [];
    const reading = (async () => {
      for await (const chunk of stream) if (chunk.choices[0]?.delta.content) contents.push(chunk.choices[0].delta.content);
    })();
    for (let i = 0; i < 200 && fake.requests[0]?.streamedChunks !== 3; i++) await new Promise((r) => setTimeout(r, 5));
    // role + 'ab' + 'cd', held by its own hold: the server's holds do not count it, and their release does not let it go.
    fake.releaseStreams();
    await new Promise((r) => setTimeout(r, 50));
    expect(contents).toEqual(['ab', 'cd']);
    expect([fake.requests[0]!.status, fake.requests[0]!.streamedChunks, fake.heldStreams()]).toEqual([null, 3, 0]);
    // Another reply streams at its own pace meanwhile.
    const other = await streamed(client, PARAMS);
    expect(other.chunks.map((c) => c.choices[0]?.delta.content).filter(Boolean)).toEqual(['ijk', 'lmn']);
    letGo();
    await reading;
    expect(contents).toEqual(['ab', 'cd', 'ef', 'gh']);
    expect(fake.requests[0]!.status).toBe(200);
    // A rate given with a reply is checked as the server's setting is: the request gets a 500.
    fake.enqueue(text('x', { stream: { chunkChars: 0 } }));
    await expect(streamed(client, PARAMS)).rejects.toThrow('chunkChars must be a whole number >= 1, got 0');
  });

  it('fake-openai stream: setStreaming rejects a chunk size below 1 and a negative pause', async () => {
    const { fake } = await start();
    expect(() => fake.setStreaming({ chunkChars: 0 })).toThrow('chunkChars must be a whole number >= 1');
    expect(() => fake.setStreaming({ chunkChars: 2.5 })).toThrow('chunkChars');
    expect(() => fake.setStreaming({ intervalMs: -1 })).toThrow('intervalMs must be a number >= 0');
    await expect(startFakeOpenAI({ streaming: { chunkChars: 0 } })).rejects.toThrow('chunkChars');
  });

  it('fake-openai stream: a client leaving mid-stream stops the sending and counts as aborted', async () => {
    const { fake, client } = await start({ streaming: { chunkChars: 1, intervalMs: 15 } });
    fake.enqueue(text('x'.repeat(200)), text('after'));
    const stream = await client.chat.completions.create({ ...PARAMS, stream: true });
    const announced = new Promise((resolve) => fake.events.once('aborted', resolve));
    let received = 0;
    // Leaving the loop makes the client abort the request and close the connection.
    for await (const chunk of stream) {
      void chunk;
      received += 1;
      if (received === 3) break;
    }
    await fake.waitForAborts(1);
    expect(await announced).toBe(fake.requests[0]);
    expect(fake.abortedCount()).toBe(1);
    expect(fake.requests[0]!.status).toBeNull();
    const sent = fake.requests[0]!.streamedChunks!;
    expect(sent).toBeGreaterThanOrEqual(3);
    expect(sent).toBeLessThan(202);
    // Nothing more is written after the client left.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fake.requests[0]!.streamedChunks).toBe(sent);
    // The server goes on answering.
    fake.setStreaming({});
    const next = await streamed(client, PARAMS);
    expect(next.final.choices[0]!.message.content).toBe('after');
  });

  it('fake-openai stream: close() ends a stream in progress without counting an abort', async () => {
    const { fake, client } = await start({ streaming: { intervalMs: 50 } });
    fake.enqueue(text('x'.repeat(400)));
    const stream = await client.chat.completions.create({ ...PARAMS, stream: true });
    const reading = (async () => {
      for await (const chunk of stream) void chunk;
    })().catch((e: unknown) => e);
    await fake.close();
    // The client sees the connection end under an unfinished stream.
    expect(String(await reading)).toMatch(/terminated/);
    expect(fake.abortedCount()).toBe(0);
  });
});

describe('fake-openai streaming with the other steps', () => {
  it('fake-openai stream: a fault is an HTTP error before any stream', async () => {
    const { fake, client } = await start();
    fake.enqueue(fault(429, { retryAfter: 3 }));
    const error = await client.chat.completions.create({ ...PARAMS, stream: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).headers.get('retry-after')).toBe('3');
    expect(fake.requests[0]!.status).toBe(429);
    expect(fake.requests[0]!.streamedChunks).toBeUndefined();
  });

  it('fake-openai stream: delay streams after the pause; drop is a connection error; hang waits for the client', async () => {
    const { fake, client } = await start();
    fake.enqueue(delay(100, text('late')), drop(), hang());
    const late = await streamed(client, PARAMS);
    expect(late.final.choices[0]!.message.content).toBe('late');

    const dropped = await client.chat.completions.create({ ...PARAMS, stream: true }).catch((e: unknown) => e);
    expect(dropped).toBeInstanceOf(APIConnectionError);
    expect(fake.abortedCount()).toBe(0);

    const controller = new AbortController();
    const pending = client.chat.completions.create({ ...PARAMS, stream: true }, { signal: controller.signal });
    await fake.waitForRequests(3);
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(APIUserAbortError);
    await fake.waitForAborts(1);
    expect(fake.requests[2]!.aborted).toBe(true);
  });
});

describe('fake-openai server that does not stream', () => {
  it('fake-openai stream: streaming false answers stream: true with a 400 about stream, without spending a step', async () => {
    const { fake, client } = await start({ streaming: false });
    fake.enqueue(text('plain only'));
    const error = await client.chat.completions.create({ ...PARAMS, stream: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    const err = error as BadRequestError;
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/stream is not supported/);
    expect(err.param).toBe('stream');
    expect(err.type).toBe('invalid_request_error');
    expect(fake.requests[0]!.body).toMatchObject({ stream: true });
    expect(fake.requests[0]!.status).toBe(400);
    expect(fake.remaining()).toBe(1);

    // Non-streamed requests are answered as always; stream: false is not a stream.
    const plain = await client.chat.completions.create({ ...PARAMS, stream: false });
    expect(plain.choices[0]!.message.content).toBe('plain only');
  });

  it('fake-openai stream: setStreaming(false) and back at run time', async () => {
    const { fake, client } = await start();
    fake.setStreaming(false);
    fake.enqueue(text('one'));
    await expect(client.chat.completions.create({ ...PARAMS, stream: true })).rejects.toBeInstanceOf(BadRequestError);
    fake.setStreaming({ chunkChars: 8 });
    const { final } = await streamed(client, PARAMS);
    expect(final.choices[0]!.message.content).toBe('one');
  });
});
