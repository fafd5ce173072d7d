import OpenAI, { BadRequestError, NotFoundError } from 'openai';
import type { ChatMessage, ToolDefinition } from '../../../common/messages';
import { SUMMARY_PROMPT_MARKER } from '../../../common/model-view';
import { estimatePromptTokens, estimateTextTokens } from '../../../common/token-estimate';
import { parseArgs } from '../../../fake-model/cli-args';
import { utf8Prefix } from '../../../common/transcript';
import { isSummaryRequest, startFakeOpenAI, text, toolCalls, type FakeOpenAI, type FakeOpenAIOptions, type RecordedRequest } from '../../../fake-model/server';

type Params = OpenAI.ChatCompletionCreateParamsNonStreaming;

/** 40 messages of 100 bytes: 40 * (4 + 25) = 1160 tokens by the estimate. */
const BIG: ChatMessage[] = Array.from({ length: 40 }, (_, i) => ({ role: 'user', content: `${i}`.padEnd(100, 'x') }));
const SMALL: ChatMessage[] = [{ role: 'user', content: 'Hello there' }];
const TOOLS: ToolDefinition[] = [{ type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { file_path: { type: 'string' } } } } }];
/** 260 ASCII bytes (65 tokens). */
const LONG = 'abcdefghijklmnopqrstuvwxyz'.repeat(10);

function params(messages: ChatMessage[], extra: Partial<Params> = {}): Params {
  return { model: 'm', messages: messages as OpenAI.ChatCompletionMessageParam[], ...extra };
}

it('fake-openai limits: the estimate of the fixtures is what the tests assume', () => {
  expect(estimatePromptTokens(BIG)).toBe(1160);
  expect(estimatePromptTokens(SMALL)).toBe(7);
});

describe('fake-openai limits', () => {
  let fake: FakeOpenAI;
  let client: OpenAI;

  async function start(options: FakeOpenAIOptions = {}): Promise<void> {
    fake = await startFakeOpenAI(options);
    client = new OpenAI({ apiKey: 'x', baseURL: fake.baseURL, maxRetries: 0 });
  }

  afterEach(async () => {
    await fake.close();
  });

  it("fake-openai limits: a prompt over the window gets OpenAI's 400 and does not spend the scripted step", async () => {
    await start({ contextWindow: 1000 });
    fake.enqueue(text('for the small prompt'));

    const error = await client.chat.completions.create(params(BIG)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    const err = error as BadRequestError;
    expect(err.status).toBe(400);
    expect(err.code).toBe('context_length_exceeded');
    expect(err.type).toBe('invalid_request_error');
    expect(err.param).toBe('messages');
    expect(err.message).toContain("This model's maximum context length is 1000 tokens. However, your messages resulted in 1160 tokens. Please reduce the length of the messages.");
    // Received and recorded, but the script is untouched.
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.status).toBe(400);
    expect(fake.requests[0]!.promptTokens).toBe(1160);
    expect(fake.remaining()).toBe(1);

    const ok = await client.chat.completions.create(params(SMALL));
    expect(ok.choices[0]!.message.content).toBe('for the small prompt');
  });

  it('fake-openai limits: llama.cpp style names n_ctx and n_prompt_tokens and never calls the responder', async () => {
    const responder = jest.fn(() => text('never'));
    await start({ contextWindow: 1000, responder });
    fake.setLimits({ contextErrorStyle: 'llamacpp' });

    const error = (await client.chat.completions.create(params(BIG)).catch((e: unknown) => e)) as BadRequestError;
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.status).toBe(400);
    expect(error.error).toEqual({
      code: 400,
      message: 'the request exceeds the available context size, try increasing it',
      type: 'exceed_context_size_error',
      n_prompt_tokens: 1160,
      n_ctx: 1000,
    });
    expect(error.type).toBe('exceed_context_size_error');
    expect(responder).not.toHaveBeenCalled();
    expect(fake.requests).toHaveLength(1);
  });

  it('fake-openai limits: a prompt that just fits is answered, one token less of window refuses it (tools count)', async () => {
    const prompt = estimatePromptTokens(SMALL, TOOLS);
    expect(prompt).toBeGreaterThan(estimatePromptTokens(SMALL));
    await start({ contextWindow: prompt, responder: () => text('') });

    const fits = await client.chat.completions.create(params(SMALL, { tools: TOOLS }));
    expect(fits.choices[0]!.finish_reason).toBe('stop');
    expect(fits.usage!.prompt_tokens).toBe(prompt);

    fake.setLimits({ contextWindow: prompt + 1 });
    await expect(client.chat.completions.create(params(SMALL, { tools: TOOLS }))).resolves.toBeDefined();

    fake.setLimits({ contextWindow: prompt - 1 });
    const refused = (await client.chat.completions.create(params(SMALL, { tools: TOOLS })).catch((e: unknown) => e)) as BadRequestError;
    expect(refused).toBeInstanceOf(BadRequestError);
    expect(refused.message).toContain(`maximum context length is ${prompt - 1} tokens`);
    expect(refused.message).toContain(`resulted in ${prompt} tokens`);
  });

  it("fake-openai limits: a long text is cut at the request's max_tokens with finish_reason length", async () => {
    await start();
    fake.enqueue(text(LONG), text(LONG), text(LONG.slice(0, 20)));

    const cut = await client.chat.completions.create(params(SMALL, { max_tokens: 5 }));
    expect(cut.choices[0]!.finish_reason).toBe('length');
    expect(cut.choices[0]!.message.content).toBe(LONG.slice(0, 20));
    expect(Buffer.byteLength(cut.choices[0]!.message.content!)).toBe(20);
    expect(cut.usage).toEqual({ prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 });

    // max_completion_tokens wins over max_tokens.
    const preferred = await client.chat.completions.create(params(SMALL, { max_tokens: 50, max_completion_tokens: 3 }));
    expect(preferred.choices[0]!.message.content).toBe(LONG.slice(0, 12));
    expect(preferred.choices[0]!.finish_reason).toBe('length');

    // A reply that fills the limit exactly is not cut.
    const exact = await client.chat.completions.create(params(SMALL, { max_tokens: 5 }));
    expect(exact.choices[0]!.finish_reason).toBe('stop');
    expect(exact.choices[0]!.message.content).toBe(LONG.slice(0, 20));
  });

  it("fake-openai limits: the server's maxOutputTokens and the rest of the window cut too", async () => {
    await start({ maxOutputTokens: 4, responder: () => text(LONG) });

    const capped = await client.chat.completions.create(params(SMALL, { max_tokens: 100 }));
    expect(capped.choices[0]!.message.content).toBe(LONG.slice(0, 16));
    expect(capped.choices[0]!.finish_reason).toBe('length');
    expect(capped.usage!.completion_tokens).toBe(4);

    const smaller = await client.chat.completions.create(params(SMALL, { max_tokens: 2 }));
    expect(smaller.choices[0]!.message.content).toBe(LONG.slice(0, 8));

    // No output cap, but a window with 3 tokens left after the 7-token prompt.
    fake.setLimits({ maxOutputTokens: undefined, contextWindow: 10 });
    const window = await client.chat.completions.create(params(SMALL));
    expect(window.choices[0]!.message.content).toBe(LONG.slice(0, 12));
    expect(window.choices[0]!.finish_reason).toBe('length');
    expect(window.usage).toEqual({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });

    // Without any limit the whole text goes out.
    fake.setLimits({ contextWindow: undefined });
    const whole = await client.chat.completions.create(params(SMALL));
    expect(whole.choices[0]!.message.content).toBe(LONG);
    expect(whole.choices[0]!.finish_reason).toBe('stop');
  });

  it('fake-openai limits: a cut never splits a character', async () => {
    await start({ responder: () => text('a😀é€b') });
    // 4 bytes: 'a' (1) fits, the emoji (4) would make 5.
    const one = await client.chat.completions.create(params(SMALL, { max_tokens: 1 }));
    expect(one.choices[0]!.message.content).toBe('a');
    // 8 bytes: 'a😀é' is 7, adding '€' (3) would make 10.
    const two = await client.chat.completions.create(params(SMALL, { max_tokens: 2 }));
    expect(two.choices[0]!.message.content).toBe('a😀é');
    expect(utf8Prefix('€€', 5)).toBe('€');
    expect(utf8Prefix('€€', 6)).toBe('€€');
  });

  it('fake-openai limits: a tool-calls step cut inside its arguments gives invalid JSON and finish_reason length', async () => {
    await start();
    const args = { file_path: 'notes.md', content: LONG };
    const argsText = JSON.stringify(args);
    fake.enqueue(
      toolCalls(
        [
          { name: 'save_output', arguments: args },
          { name: 'read_file', arguments: { file_path: 'a.md' } },
        ],
        { content: 'Saving.' },
      ),
    );

    const reply = await client.chat.completions.create(params(SMALL, { max_tokens: 10 }));
    const choice = reply.choices[0]!;
    expect(choice.finish_reason).toBe('length');
    expect(choice.message.content).toBe('Saving.');
    // 40 bytes of budget: 7 of content, 33 of the first call's arguments; the second call is never made.
    const calls = choice.message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[];
    expect(calls).toHaveLength(1);
    expect(calls[0]!.function.name).toBe('save_output');
    expect(calls[0]!.function.arguments).toBe(argsText.slice(0, 33));
    expect(() => JSON.parse(calls[0]!.function.arguments) as unknown).toThrow();
    expect(reply.usage!.completion_tokens).toBe(10);
  });

  it('fake-openai limits: a tool-calls step cut inside its content sends no calls', async () => {
    await start({ maxOutputTokens: 2 });
    fake.enqueue(toolCalls([{ name: 'read_file', arguments: { file_path: 'a.md' } }], { content: 'Let me look at the file first.' }));
    const reply = await client.chat.completions.create(params(SMALL));
    expect(reply.choices[0]!.finish_reason).toBe('length');
    expect(reply.choices[0]!.message.content).toBe('Let me l');
    expect(reply.choices[0]!.message.tool_calls).toBeUndefined();
    expect(reply.usage!.completion_tokens).toBe(2);
  });

  it("fake-openai limits: usage is the project's estimate of the prompt and of what was sent", async () => {
    await start();
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are a facilitator. Ünïcödé counts in bytes.' },
      { role: 'user', content: 'Read the brief' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"file_path":"brief.md"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: '{"content":"# Brief\\nBuild a tool library."}' },
    ];
    const calls = [{ name: 'save_output', arguments: { file_path: 'out.md', content: 'Draft €' } }];
    fake.enqueue(toolCalls(calls, { content: 'Saving the draft.' }), text('Done', { usage: { completion_tokens: 99 } }), text('x', { omitUsage: true }));

    const reply = await client.chat.completions.create(params(messages, { tools: TOOLS }));
    const prompt = estimatePromptTokens(messages, TOOLS);
    const completion = estimateTextTokens(`Saving the draft.${JSON.stringify(calls[0]!.arguments)}`);
    expect(reply.usage).toEqual({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion });
    expect(fake.requests[0]!.promptTokens).toBe(prompt);

    // A step's own usage still overrides the estimate, field by field; omitUsage still omits it.
    const overridden = await client.chat.completions.create(params(SMALL));
    expect(overridden.usage).toEqual({ prompt_tokens: 7, completion_tokens: 99, total_tokens: 106 });
    const omitted = await client.chat.completions.create(params(SMALL));
    expect(omitted.usage).toBeUndefined();
  });

  it('fake-openai limits: /v1/models lists context_length when a window is set, /v1/models/<id> answers the entry', async () => {
    await start({ contextWindow: 8192 });
    const list = await client.models.list();
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).toMatchObject({ id: 'loopwright-fake-model', object: 'model', context_length: 8192 });

    const entry = await client.models.retrieve('loopwright-fake-model');
    expect(entry).toMatchObject({ id: 'loopwright-fake-model', context_length: 8192 });

    const unknown = await client.models.retrieve('gpt-nope').catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(NotFoundError);
    expect((unknown as NotFoundError).status).toBe(404);
    expect((unknown as NotFoundError).code).toBe('model_not_found');
    expect((unknown as NotFoundError).type).toBe('invalid_request_error');
    expect((unknown as NotFoundError).message).toContain('gpt-nope');

    fake.setLimits({ contextWindow: undefined });
    const without = await client.models.retrieve('loopwright-fake-model');
    expect(without).not.toHaveProperty('context_length');
  });

  it('fake-openai limits: a model id with a slash is found', async () => {
    await start({ model: 'org/tiny-model', contextWindow: 2048 });
    const entry = await client.models.retrieve('org/tiny-model');
    expect(entry).toMatchObject({ id: 'org/tiny-model', context_length: 2048 });
  });

  it('fake-openai limits: /props answers n_ctx only when llamaProps is set', async () => {
    await start({ contextWindow: 4096 });
    const props = `http://127.0.0.1:${fake.port}/props`;
    const missing = await fetch(props);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: 'not_found' } });

    fake.setLimits({ llamaProps: true });
    const present = await fetch(props);
    expect(present.status).toBe(200);
    expect(await present.json()).toEqual({ default_generation_settings: { n_ctx: 4096 } });

    fake.setLimits({ llamaProps: undefined });
    expect((await fetch(props)).status).toBe(404);
  });

  it('fake-openai limits: the llamaProps start option serves /props', async () => {
    await start({ contextWindow: 512, llamaProps: true, contextErrorStyle: 'llamacpp' });
    const response = await fetch(`http://127.0.0.1:${fake.port}/props`);
    expect(await response.json()).toEqual({ default_generation_settings: { n_ctx: 512 } });
    expect(fake.limits()).toEqual({ contextWindow: 512, llamaProps: true, contextErrorStyle: 'llamacpp' });
  });

  it('fake-openai limits: setLimits keeps fields left out, removes fields given as undefined; reset removes all', async () => {
    await start({ contextWindow: 100, maxOutputTokens: 10 });
    fake.setLimits({ contextErrorStyle: 'llamacpp' });
    expect(fake.limits()).toEqual({ contextWindow: 100, maxOutputTokens: 10, contextErrorStyle: 'llamacpp' });
    fake.setLimits({ maxOutputTokens: undefined });
    expect(fake.limits()).toEqual({ contextWindow: 100, contextErrorStyle: 'llamacpp' });
    expect(() => fake.setLimits({ contextWindow: -1 })).toThrow('contextWindow must be a whole number');
    expect(() => fake.setLimits({ maxOutputTokens: 1.5 })).toThrow('maxOutputTokens must be a whole number');
    fake.reset();
    expect(fake.limits()).toEqual({});

    fake.enqueue(text('no limits now'));
    const reply = await client.chat.completions.create(params(BIG));
    expect(reply.choices[0]!.message.content).toBe('no limits now');
  });
});

describe('fake-openai isSummaryRequest', () => {
  function request(body: RecordedRequest['body']): RecordedRequest {
    return { index: 0, method: 'POST', path: '/v1/chat/completions', body, headers: {}, hasAuthorization: false, receivedAt: 0, aborted: false, status: null, promptTokens: 0 };
  }

  it('fake-openai: isSummaryRequest is true only when the first system message starts with the marker', () => {
    const summary = `${SUMMARY_PROMPT_MARKER}\nSummarise the conversation.`;
    expect(isSummaryRequest(request({ messages: [{ role: 'system', content: summary }, ...SMALL] }))).toBe(true);
    expect(isSummaryRequest(request({ messages: [...SMALL, { role: 'system', content: summary }] }))).toBe(true);
    expect(
      isSummaryRequest(
        request({
          messages: [
            { role: 'system', content: 'You are helpful.' },
            { role: 'system', content: summary },
          ],
        }),
      ),
    ).toBe(false);
    expect(isSummaryRequest(request({ messages: [{ role: 'system', content: `Note: ${summary}` }] }))).toBe(false);
    expect(isSummaryRequest(request({ messages: [{ role: 'user', content: summary }] }))).toBe(false);
    expect(isSummaryRequest(request({}))).toBe(false);
    expect(isSummaryRequest(request(null))).toBe(false);
  });

  it('fake-openai: a responder can answer compaction calls with a summary', async () => {
    const fake = await startFakeOpenAI({ responder: (r) => (isSummaryRequest(r) ? text('SUMMARY: all good') : text('normal reply')) });
    try {
      const client = new OpenAI({ apiKey: 'x', baseURL: fake.baseURL, maxRetries: 0 });
      const summary = await client.chat.completions.create(params([{ role: 'system', content: `${SUMMARY_PROMPT_MARKER} Summarise.` }, ...SMALL]));
      const normal = await client.chat.completions.create(params([{ role: 'system', content: 'You are the analyst.' }, ...SMALL]));
      expect(summary.choices[0]!.message.content).toBe('SUMMARY: all good');
      expect(normal.choices[0]!.message.content).toBe('normal reply');
    } finally {
      await fake.close();
    }
  });
});

describe('fake-openai cli arguments', () => {
  it('fake-openai: the command line takes the window, the output cap, the error style and /props', () => {
    expect(parseArgs([])).toEqual({ port: 0 });
    expect(parseArgs(['--port', '8787', '--context-window', '4096', '--max-output-tokens', '256', '--context-error-style', 'llamacpp', '--llama-props'])).toEqual({
      port: 8787,
      contextWindow: 4096,
      maxOutputTokens: 256,
      contextErrorStyle: 'llamacpp',
      llamaProps: true,
    });
    expect(() => parseArgs(['--context-window', 'big'])).toThrow('--context-window must be a whole number');
    expect(() => parseArgs(['--max-output-tokens', '-3'])).toThrow('--max-output-tokens must be a whole number');
    expect(() => parseArgs(['--context-error-style', 'anthropic'])).toThrow('must be openai or llamacpp');
    expect(() => parseArgs(['--context-window'])).toThrow('unknown argument');
    expect(() => parseArgs(['--port', '70000'])).toThrow('--port must be a whole number 0..65535');
  });
});
