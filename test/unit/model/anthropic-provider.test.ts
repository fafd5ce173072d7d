/**
 * The Anthropic Messages provider through the real `@anthropic-ai/sdk` client against the fake
 * Messages server (test/support/fake-anthropic.ts), which refuses what the real API refuses: the
 * transcript mapped to Messages (system prompt, tool_use / tool_result blocks, consecutive results
 * in one user message, thinking blocks sent back unchanged), tools and `max_tokens`, streaming into
 * the live output, stop reasons, usage with cached tokens, and errors classified into the same
 * typed failures as Chat Completions (429 with retry-after, 529, 400, 401, an error mid-stream).
 */
import { ApplicationFailure } from '@temporalio/common';
import { createModelActivities } from '../../../activities/model/call-model';
import { toMessages } from '../../../activities/model/anthropic/anthropic-request';
import { messagesUsage } from '../../../activities/model/anthropic/anthropic-reply';
import type { ChatMessage, ToolDefinition } from '../../../common/messages';
import { MODEL_AUTH_ERROR, MODEL_BAD_REQUEST, MODEL_RATE_LIMITED, MODEL_SERVER_ERROR, type ModelCallInput, type ModelCallResult, type ModelFailureDetails } from '../../../common/model-call';
import { isStreamProgress, type ModelStreamProgress } from '../../../common/stream-types';
import { apiError, FAKE_ANTHROPIC_KEY, requestProblem, say, startFakeAnthropic, useTools, type FakeAnthropic } from '../../support/fake-anthropic';
import { fakeClient, mockEnv, runIn, sessionTranscript } from './fake-client';
import { ModelProviders } from '../../../activities/model/providers';
import { createGrader, GRADER_SYSTEM_PROMPT } from '../../../activities/eval/grader';
import { resolveModelConfig } from '../../../activities/model/model-config';

const TOOLS: ToolDefinition[] = [
  { type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] } } },
];

let fake: FakeAnthropic;

beforeAll(async () => {
  fake = await startFakeAnthropic();
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => fake.reset());

function activities(key: string | undefined = FAKE_ANTHROPIC_KEY) {
  // The Chat Completions side points nowhere: every call here must go to the Messages server.
  return createModelActivities({ baseURL: 'http://127.0.0.1:9/v1', env: {}, ...(key !== undefined ? { anthropicApiKey: key } : {}), anthropicBaseURL: fake.baseURL });
}

const call_ = (input: Partial<ModelCallInput> & { messages: ChatMessage[] }): Promise<ModelCallResult> => call(input);

function call(input: Partial<ModelCallInput> & { messages: ChatMessage[] }, env = mockEnv()): Promise<ModelCallResult> {
  return runIn(env, activities().callModel, { tools: TOOLS, model: 'anthropic:claude-test-1', ...input });
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

describe('anthropic provider: requests', () => {
  it('a tool loop: system prompt apart, tool_use and tool_result blocks, two results in one user message, notices as user text', async () => {
    const first = useTools([
      { name: 'read_file', input: { file_path: 'a.md' } },
      { name: 'read_file', input: { file_path: 'b.md' } },
    ]);
    fake.enqueue(first, say('Both read.'));
    const system: ChatMessage = { role: 'system', content: 'You are a facilitator.' };
    const user: ChatMessage = { role: 'user', content: 'Read a and b.' };
    const reply = await call({ messages: [system, user] });
    expect(reply.finishReason).toBe('tool_calls');
    const calls = reply.message.tool_calls!;
    expect(calls.map((c) => JSON.parse(c.function.arguments) as unknown)).toEqual([{ file_path: 'a.md' }, { file_path: 'b.md' }]);

    const transcript: ChatMessage[] = [
      system,
      user,
      reply.message,
      { role: 'tool', tool_call_id: calls[0]!.id, content: 'A' },
      { role: 'tool', tool_call_id: calls[1]!.id, content: 'B' },
      { role: 'system', content: '[Loopwright] Budget warning.' },
    ];
    const second = await call({ messages: transcript });
    expect(second).toMatchObject({ message: { role: 'assistant', content: 'Both read.' }, finishReason: 'stop', model: 'claude-test-1' });

    const body = fake.requests[1]!.body;
    // Cache breakpoints: the system prompt (tools before it), where the previous call ended, and the end of this one.
    const mark = { cache_control: { type: 'ephemeral' } };
    expect(body).toMatchObject({ model: 'claude-test-1', max_tokens: 8192, system: [{ type: 'text', text: 'You are a facilitator.', ...mark }], tool_choice: { type: 'auto' } });
    expect(body.tools).toEqual([{ name: 'read_file', description: 'Read a file', input_schema: TOOLS[0]!.function.parameters }]);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Read a and b.', ...mark }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: calls[0]!.id, name: 'read_file', input: { file_path: 'a.md' } },
          { type: 'tool_use', id: calls[1]!.id, name: 'read_file', input: { file_path: 'b.md' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: calls[0]!.id, content: 'A' },
          { type: 'tool_result', tool_use_id: calls[1]!.id, content: 'B' },
          { type: 'text', text: '[Loopwright] Budget warning.', ...mark },
        ],
      },
    ]);
  });

  it('thinking blocks are kept and sent back unchanged (the fake checks their signature), reasoningEffort asks for thinking', async () => {
    fake.enqueue(useTools([{ name: 'read_file', input: { file_path: 'a.md' } }], { thinking: 'I should read a.md first.', text: 'Reading.' }), say('Done.'));
    const messages: ChatMessage[] = [{ role: 'user', content: 'Go.' }];
    const reply = await call({ messages, settings: { reasoningEffort: 'low', maxOutputTokens: 4096 } });
    expect(reply.message.reasoning_content).toBe('I should read a.md first.');
    expect(reply.message.thinking_blocks).toEqual([{ type: 'thinking', thinking: 'I should read a.md first.', signature: expect.stringMatching(/^sig-/) as string }]);
    const id = reply.message.tool_calls![0]!.id;
    await call({ messages: [...messages, reply.message, { role: 'tool', tool_call_id: id, content: 'A' }], settings: { reasoningEffort: 'low', maxOutputTokens: 4096 } });
    const sent = fake.requests[1]!.body;
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect((sent.messages as { content: unknown[] }[])[1]!.content[0]).toEqual(reply.message.thinking_blocks![0]);

    // A block changed on the way is refused by the server, as Anthropic's is: the check above can fail.
    const changed = {
      ...reply.message,
      thinking_blocks: [
        { type: 'thinking' as const, thinking: 'something else', signature: reply.message.thinking_blocks![0]!.type === 'thinking' ? reply.message.thinking_blocks![0]!.signature : '' },
      ],
    };
    const refused = await failureOf(call({ messages: [...messages, changed, { role: 'tool', tool_call_id: id, content: 'A' }] }));
    expect(refused.type).toBe(MODEL_BAD_REQUEST);
  });

  it('a transcript from another provider maps too: an assistant first, empty texts, odd ids and arguments that are not JSON', () => {
    const { messages, system } = toMessages([
      { role: 'assistant', content: '', tool_calls: [{ id: 'call:1/x', type: 'function', function: { name: 'read_file', arguments: 'not json' } }] },
      { role: 'tool', tool_call_id: 'call:1/x', content: '' },
    ]);
    expect(system).toEqual([]);
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: '(The conversation continues.)' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1_x', name: 'read_file', input: { arguments: 'not json' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1_x', content: '(empty)' }] },
    ]);
    expect(requestProblem({ model: 'm', max_tokens: 1, messages })).toBeUndefined();
  });
});

describe('anthropic provider: replies', () => {
  it('streamed: the same result as unstreamed, the reply shown in the heartbeats as it is written', async () => {
    const steps = [useTools([{ name: 'read_file', input: { file_path: 'notes/today.md' } }], { text: 'Let me look at the notes first.' })];
    fake.enqueue(...steps, ...steps);
    const env = mockEnv();
    const progress: ModelStreamProgress[] = [];
    env.on('heartbeat', (details: unknown) => {
      if (isStreamProgress(details)) progress.push(details);
    });
    const messages: ChatMessage[] = [{ role: 'user', content: 'Hi' }];
    const streamed = await call({ messages, settings: { stream: true } }, env);
    const plain = await call({ messages });
    expect({ ...streamed, durationMs: 0 }).toEqual({ ...plain, durationMs: 0 });
    expect(fake.requests.map((r) => r.body.stream)).toEqual([true, undefined]);
    expect(progress.at(-1)).toMatchObject({ done: true, text: 'Let me look at the notes first.', toolCalls: ['read_file'] });
  });

  it('stop reasons: max_tokens is a cut-off reply, refusal a refusal', async () => {
    fake.enqueue(say('Half a sent', 'max_tokens'), { kind: 'reply', content: [], stopReason: 'refusal' });
    const messages: ChatMessage[] = [{ role: 'user', content: 'Hi' }];
    expect(await call({ messages })).toMatchObject({ finishReason: 'length', message: { content: 'Half a sent' } });
    const refused = await call({ messages });
    expect(refused).toMatchObject({ finishReason: 'content_filter', refusal: true });
    expect(refused.message.content).toMatch(/declined/);
  });

  it('usage: the prompt counts cache reads and writes, which are said apart', () => {
    const estimates = { promptTokens: () => 0, completionTokens: () => 0 };
    expect(messagesUsage({ input_tokens: 10, cache_creation_input_tokens: 200, cache_read_input_tokens: 3000, output_tokens: 7 }, estimates).usage).toEqual({
      promptTokens: 3210,
      completionTokens: 7,
      totalTokens: 3217,
      cacheReadTokens: 3000,
      cacheWriteTokens: 200,
    });
    expect(messagesUsage({ input_tokens: 5, output_tokens: 2 }, estimates).usage).toEqual({ promptTokens: 5, completionTokens: 2, totalTokens: 7 });
  });
});

describe('anthropic provider: failures', () => {
  const messages: ChatMessage[] = [{ role: 'user', content: 'Hi' }];

  it('429 with retry-after: rate limited, retried after the delay the server asked', async () => {
    fake.enqueue(apiError(429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit', '7'));
    const failure = await failureOf(call({ messages }));
    expect(failure).toMatchObject({ type: MODEL_RATE_LIMITED, nonRetryable: false, nextRetryDelay: 7000 });
    expect(failure.details![0] as ModelFailureDetails).toMatchObject({ status: 429, providerType: 'rate_limit_error', requestId: 'req_fake_429', retryAfterMs: 7000 });
  });

  it('529 overloaded, before the reply or in the middle of its stream: a server error, retried', async () => {
    fake.enqueue(apiError(529, 'overloaded_error', 'Overloaded'), { kind: 'stream-error', text: 'Partly', type: 'overloaded_error', message: 'Overloaded' });
    expect(await failureOf(call({ messages }))).toMatchObject({ type: MODEL_SERVER_ERROR, nonRetryable: false });
    const midway = await failureOf(call({ messages, settings: { stream: true } }));
    expect(midway).toMatchObject({ type: MODEL_SERVER_ERROR, nonRetryable: false });
    expect((midway.details![0] as ModelFailureDetails).status).toBe(529);
  });

  it('400 invalid request and 401: not retried, the hint names ANTHROPIC_API_KEY; no key at all fails before any request', async () => {
    fake.enqueue(apiError(400, 'invalid_request_error', 'max_tokens: 99999999 > 64000, which is the maximum allowed'));
    expect(await failureOf(call({ messages }))).toMatchObject({ type: MODEL_BAD_REQUEST, nonRetryable: true });
    const refused = await failureOf(runIn(mockEnv(), activities('sk-ant-wrong-key-0000000000').callModel, { messages, tools: [], model: 'anthropic:claude-test-1' }));
    expect(refused).toMatchObject({ type: MODEL_AUTH_ERROR, nonRetryable: true });
    expect(refused.message).toMatch(/ANTHROPIC_API_KEY/);
    expect(refused.message).not.toContain('sk-ant-wrong-key');
    const requests = fake.requests.length;
    const { callModel } = createModelActivities({ baseURL: 'http://127.0.0.1:9/v1', env: {}, provider: 'anthropic' });
    const missing = await failureOf(runIn(mockEnv(), callModel, { messages, tools: [], model: 'claude-test-1' }));
    expect(missing).toMatchObject({ type: MODEL_AUTH_ERROR, nonRetryable: true });
    expect(missing.message).toMatch(/ANTHROPIC_API_KEY is not set/);
    expect(fake.requests.length).toBe(requests);
  });
});

describe('anthropic provider: prompt cache', () => {
  it('a tool loop reading 12 KB per call: from the third call on, over 80 % of the prompt is read from the cache, and the cost is a fraction of the uncached one', async () => {
    const system: ChatMessage = { role: 'system', content: `You are a facilitator. ${'Follow the workflow step by step. '.repeat(150)}` };
    const transcript: ChatMessage[] = [system, { role: 'user', content: 'Read the ten chapters, one per call.' }];
    const usages: NonNullable<ModelCallResult['usage']>[] = [];
    for (let call = 1; call <= 10; call++) {
      fake.enqueue(useTools([{ name: 'read_file', input: { file_path: `chapter-${call}.md` } }]));
      const reply = await call_({ messages: transcript });
      usages.push(reply.usage!);
      transcript.push(reply.message, { role: 'tool', tool_call_id: reply.message.tool_calls![0]!.id, content: chapter(call) });
    }
    // The first call writes the system prompt and its messages; each later one reads what the one before wrote.
    expect(usages[0]!.cacheReadTokens).toBeUndefined();
    expect(usages[0]!.cacheWriteTokens).toBeGreaterThan(0);
    for (const usage of usages.slice(1)) expect(usage.cacheReadTokens).toBeGreaterThan(0);
    const later = usages.slice(2);
    const read = later.reduce((n, u) => n + (u.cacheReadTokens ?? 0), 0);
    const prompt = later.reduce((n, u) => n + u.promptTokens, 0);
    expect(read / prompt).toBeGreaterThan(0.8);
    // Priced as Anthropic prices them (reads a tenth, writes a quarter more), against every prompt token at full price.
    const cost = usages.reduce((n, u) => n + (u.promptTokens - (u.cacheReadTokens ?? 0) - (u.cacheWriteTokens ?? 0)) + 0.1 * (u.cacheReadTokens ?? 0) + 1.25 * (u.cacheWriteTokens ?? 0), 0);
    const uncached = usages.reduce((n, u) => n + u.promptTokens, 0);
    expect(cost / uncached).toBeLessThan(0.4);
  });

  it('the fake caches only what a breakpoint marks, from its minimum size on: a prompt without markers is never read from the cache', async () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'x'.repeat(8000) }];
    const { provider } = new ModelProviders(resolveModelConfig({ anthropicApiKey: FAKE_ANTHROPIC_KEY, anthropicBaseURL: fake.baseURL }, {}), fakeClient().client).resolve('anthropic:claude-test-1');
    const send = (cache: boolean) => runIn(mockEnv(), () => provider.prepare({ model: 'claude-test-1', messages, tools: [], label: 'test', cache }).send(), undefined);
    fake.enqueue(say('a'), say('b'), say('c'), say('d'));
    expect((await send(false)).reply.usage).not.toHaveProperty('cacheWriteTokens');
    expect((await send(false)).reply.usage).not.toHaveProperty('cacheReadTokens');
    expect((await send(true)).reply.usage).toMatchObject({ cacheWriteTokens: expect.any(Number) as number });
    expect((await send(true)).reply.usage).toMatchObject({ cacheReadTokens: expect.any(Number) as number });
  });
});

describe('anthropic provider: the other model calls', () => {
  it('a compaction summary of an Anthropic session goes to Messages: no tools, max_tokens the summary limit, no cache breakpoints', async () => {
    const session = sessionTranscript([
      { role: 'system', content: 'Persona.' },
      { role: 'user', content: 'Please write the brief for project Falcon.' },
      { role: 'assistant', content: 'On it.' },
      { role: 'user', content: 'Good, go on.' },
    ]);
    const { summarizeContext } = createModelActivities({
      baseURL: 'http://127.0.0.1:9/v1',
      env: {},
      anthropicApiKey: FAKE_ANTHROPIC_KEY,
      anthropicBaseURL: fake.baseURL,
      transcriptSource: session.source,
    });
    fake.enqueue(say('The user wants a brief for Falcon.'));
    const result = await runIn(mockEnv(), summarizeContext, { transcript: session.ref, view: { head: 1, from: 1, pruneBefore: 0 }, upTo: 3, maxSummaryTokens: 300, model: 'anthropic:claude-test-1' });
    expect(result.summary).toBe('The user wants a brief for Falcon.');
    const body = fake.requests[0]!.body;
    expect(body).toMatchObject({ model: 'claude-test-1', max_tokens: 300 });
    expect(body).not.toHaveProperty('tools');
    expect(JSON.stringify(body)).not.toContain('cache_control');
  });

  it("an eval's grader on an Anthropic model grades through Messages, without a response_format the API does not take", async () => {
    fake.enqueue(say('{"score": 8, "passed": true, "reason": "names the users"}'));
    const grade = createGrader({ baseURL: 'http://127.0.0.1:9/v1', env: {}, anthropicApiKey: FAKE_ANTHROPIC_KEY, anthropicBaseURL: fake.baseURL });
    const call = await runIn(mockEnv(), grade, { rubric: 'Names the users.', model: 'anthropic:claude-grader', message: 'Who uses it?', answer: 'The neighbours.' });
    expect(call).toMatchObject({ outcome: { grade: { score: 8, passed: true } }, calls: 1, model: 'claude-grader' });
    expect(fake.requests[0]!.body).not.toHaveProperty('response_format');
    expect(fake.requests[0]!.body.system).toEqual([{ type: 'text', text: GRADER_SYSTEM_PROMPT }]);
  });
});

/** Twelve kilobytes of text that differ from chapter to chapter. */
function chapter(n: number): string {
  return Array.from({ length: 240 }, (_, i) => `Chapter ${n}, line ${i}: the street's tool library lends drills.`)
    .join('\n')
    .slice(0, 12_000);
}
