/**
 * The OpenAI Responses provider through the real `openai` client against the fake Responses server
 * (test/support/fake-responses.ts), which refuses what the real API refuses: the transcript mapped
 * to input items (instructions, messages, function_call and function_call_output items answering
 * each other), function tools, a stateless request (`store: false`, encrypted reasoning asked for),
 * reasoning items sent back unchanged and in order (asked again without them of a model that
 * refuses encrypted reasoning), streaming into the live output, the status
 * mapped (incomplete → length, a refusal), usage with cached tokens, and errors classified into
 * the same typed failures as Chat Completions (429 with retry-after, 5xx, 400, 401, a failure
 * mid-stream).
 */
import { ApplicationFailure } from '@temporalio/common';
import { createModelActivities } from '../../../activities/model/call-model';
import { toInputItems } from '../../../activities/model/responses/responses-request';
import { normalizeResponsesReply } from '../../../activities/model/responses/responses-reply';
import { ResponsesStreamJoiner } from '../../../activities/model/responses/responses-stream';
import type { ChatMessage, ToolDefinition } from '../../../common/messages';
import { MODEL_AUTH_ERROR, MODEL_BAD_REQUEST, MODEL_RATE_LIMITED, MODEL_SERVER_ERROR, type ModelCallInput, type ModelCallResult, type ModelFailureDetails } from '../../../common/model-call';
import { isStreamProgress, type ModelStreamProgress } from '../../../common/stream-types';
import { apiError, callTools, FAKE_RESPONSES_KEY, refuse, requestProblem, say, startFakeResponses, type FakeResponses } from '../../support/fake-responses';
import { mockEnv, runIn, sessionTranscript } from './fake-client';
import { createGrader, TURN_GRADE_FORMAT } from '../../../activities/eval/grader';

const TOOLS: ToolDefinition[] = [
  { type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] } } },
];

let fake: FakeResponses;

beforeAll(async () => {
  fake = await startFakeResponses({ plainModels: ['gpt-plain-1'] });
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => fake.reset());

function activities(key = FAKE_RESPONSES_KEY) {
  return createModelActivities({ baseURL: fake.baseURL, apiKey: key, env: {} });
}

function call(input: Partial<ModelCallInput> & { messages: ChatMessage[] }, env = mockEnv()): Promise<ModelCallResult> {
  return runIn(env, activities().callModel, { tools: TOOLS, model: 'responses:gpt-test-1', ...input });
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

describe('responses provider: requests', () => {
  it('a tool loop: the system prompt as instructions, function_call items with their call_id, function_call_output items answering them, notices as developer messages', async () => {
    fake.enqueue(
      callTools([
        { name: 'read_file', input: { file_path: 'a.md' } },
        { name: 'read_file', input: { file_path: 'b.md' } },
      ]),
      say('Both read.'),
    );
    const system: ChatMessage = { role: 'system', content: 'You are a facilitator.' };
    const user: ChatMessage = { role: 'user', content: 'Read a and b.' };
    const reply = await call({ messages: [system, user] });
    expect(reply.finishReason).toBe('tool_calls');
    const calls = reply.message.tool_calls!;
    expect(calls.map((c) => JSON.parse(c.function.arguments) as unknown)).toEqual([{ file_path: 'a.md' }, { file_path: 'b.md' }]);
    expect(calls[0]!.id).toMatch(/^call_/);

    const transcript: ChatMessage[] = [
      system,
      user,
      reply.message,
      { role: 'tool', tool_call_id: calls[0]!.id, content: 'A' },
      { role: 'tool', tool_call_id: calls[1]!.id, content: 'B' },
      { role: 'system', content: '[Loopwright] Budget warning.' },
    ];
    const second = await call({ messages: transcript });
    expect(second).toMatchObject({ message: { role: 'assistant', content: 'Both read.' }, finishReason: 'stop', model: 'gpt-test-1' });

    const body = fake.requests[1]!.body;
    expect(body).toMatchObject({ model: 'gpt-test-1', instructions: 'You are a facilitator.', max_output_tokens: 8192, store: false, include: ['reasoning.encrypted_content'], tool_choice: 'auto' });
    expect(body).not.toHaveProperty('stream');
    expect(body.tools).toEqual([{ type: 'function', name: 'read_file', description: 'Read a file', parameters: TOOLS[0]!.function.parameters, strict: false }]);
    expect(body.input).toEqual([
      { type: 'message', role: 'user', content: 'Read a and b.' },
      { type: 'function_call', call_id: calls[0]!.id, name: 'read_file', arguments: calls[0]!.function.arguments },
      { type: 'function_call', call_id: calls[1]!.id, name: 'read_file', arguments: calls[1]!.function.arguments },
      { type: 'function_call_output', call_id: calls[0]!.id, output: 'A' },
      { type: 'function_call_output', call_id: calls[1]!.id, output: 'B' },
      { type: 'message', role: 'developer', content: '[Loopwright] Budget warning.' },
    ]);
  });

  it('reasoning items are kept on the reply and sent back unchanged, in order, before its calls (the fake checks their encrypted content); reasoningEffort asks for reasoning', async () => {
    fake.enqueue(callTools([{ name: 'read_file', input: { file_path: 'a.md' } }], { reasoning: 'I should read a.md first.', text: 'Reading.' }), say('Done.'));
    const messages: ChatMessage[] = [{ role: 'user', content: 'Go.' }];
    const settings = { reasoningEffort: 'low' as const };
    const reply = await call({ messages, settings });
    expect(reply.message.reasoning_content).toBe('I should read a.md first.');
    const items = reply.message.reasoning_items!;
    expect(items).toEqual([
      { id: expect.stringMatching(/^rs_/) as string, summary: [{ type: 'summary_text', text: 'I should read a.md first.' }], encrypted_content: expect.stringMatching(/^enc_/) as string },
    ]);
    const id = reply.message.tool_calls![0]!.id;
    const next = [...messages, reply.message, { role: 'tool' as const, tool_call_id: id, content: 'A' }];
    await call({ messages: next, settings });
    const sent = fake.requests[1]!.body;
    expect(sent.reasoning).toEqual({ effort: 'low', summary: 'auto' });
    expect((sent.input as { type: string }[]).map((i) => i.type)).toEqual(['message', 'reasoning', 'message', 'function_call', 'function_call_output']);
    expect((sent.input as unknown[])[1]).toEqual({ type: 'reasoning', ...items[0] });

    // What the server would refuse, it refuses here too: a changed item, an item without its encrypted content.
    const changed = { ...reply.message, reasoning_items: [{ ...items[0]!, encrypted_content: `${items[0]!.encrypted_content!}x` }] };
    expect((await failureOf(call({ messages: [...messages, changed, next[2]!] }))).type).toBe(MODEL_BAD_REQUEST);
    const bare = { ...reply.message, reasoning_items: [{ id: items[0]!.id, summary: items[0]!.summary }] };
    const missing = await failureOf(call({ messages: [...messages, bare, next[2]!] }));
    expect(missing.message).toMatch(/not persisted when `store` is set to false/);
  });

  it("a reasoning summary that echoes the worker's key is redacted; the encrypted content goes back as it came, and the server still reads it", async () => {
    fake.enqueue(callTools([{ name: 'read_file', input: { file_path: 'a.md' } }], { reasoning: `The header said ${FAKE_RESPONSES_KEY}.` }), say('Done.'));
    const messages: ChatMessage[] = [{ role: 'user', content: 'Go.' }];
    const reply = await call({ messages });
    expect(JSON.stringify(reply.message.reasoning_items![0]!.summary)).not.toContain(FAKE_RESPONSES_KEY);
    expect(reply.message.reasoning_content).not.toContain(FAKE_RESPONSES_KEY);
    const id = reply.message.tool_calls![0]!.id;
    expect(await call({ messages: [...messages, reply.message, { role: 'tool', tool_call_id: id, content: 'A' }] })).toMatchObject({ message: { content: 'Done.' } });
  });

  it('a function_call_output with no matching call is refused by the server, and the mapping never makes one from a transcript', () => {
    expect(requestProblem({ model: 'm', input: [{ type: 'function_call_output', call_id: 'call_9', output: 'x' }] })?.message).toBe('No tool call found for function call output with call_id call_9.');
    expect(requestProblem({ model: 'm', input: [{ type: 'function_call', call_id: 'call_9', name: 'f', arguments: '{}' }] })?.message).toBe('No tool output found for function call call_9.');
    const { instructions, input } = toInputItems([
      { role: 'assistant', content: '', tool_calls: [{ id: 'call:1/x', type: 'function', function: { name: 'read_file', arguments: 'not json' } }] },
      { role: 'tool', tool_call_id: 'call:1/x', content: '' },
      // A reply of reasoning alone carries nothing the reasoning led to: it goes without it.
      { role: 'assistant', content: null, reasoning_items: [{ id: 'rs_1', summary: [], encrypted_content: 'enc' }] },
    ]);
    expect(instructions).toBe('');
    expect(input).toEqual([
      { type: 'function_call', call_id: 'call:1/x', name: 'read_file', arguments: 'not json' },
      { type: 'function_call_output', call_id: 'call:1/x', output: '' },
    ]);
    expect(requestProblem({ model: 'm', input })).toBeUndefined();
  });

  it('a model without reasoning refuses encrypted reasoning: the call is made again without it, and later calls of that model go without at once', async () => {
    fake.enqueue(say('Plain one.'), say('Plain two.'), say('Reasoning.'));
    const messages: ChatMessage[] = [{ role: 'user', content: 'Hi' }];
    const { callModel } = activities();
    const one = (model: string) => runIn(mockEnv(), callModel, { messages, tools: [], model });
    expect(await one('responses:gpt-plain-1')).toMatchObject({ message: { content: 'Plain one.' } });
    expect(await one('responses:gpt-plain-1')).toMatchObject({ message: { content: 'Plain two.' } });
    expect(await one('responses:gpt-test-1')).toMatchObject({ message: { content: 'Reasoning.' } });
    expect(fake.requests.map((r) => [r.body.model, r.body.include])).toEqual([
      ['gpt-plain-1', ['reasoning.encrypted_content']],
      ['gpt-plain-1', undefined],
      ['gpt-plain-1', undefined],
      ['gpt-test-1', ['reasoning.encrypted_content']],
    ]);
    expect(fake.requests.every((r) => r.body.store === false)).toBe(true);
  });
});

describe('responses provider: replies', () => {
  it('streamed: the same result as unstreamed, the reply shown in the heartbeats as it is written', async () => {
    const step = callTools([{ name: 'read_file', input: { file_path: 'notes/today.md' } }], { text: 'Let me look at the notes first.', reasoning: 'The notes hold the answer.' });
    fake.enqueue(step, step);
    const env = mockEnv();
    const progress: ModelStreamProgress[] = [];
    env.on('heartbeat', (details: unknown) => {
      if (isStreamProgress(details)) progress.push(details);
    });
    const messages: ChatMessage[] = [{ role: 'user', content: 'Hi' }];
    const streamed = await call({ messages, settings: { stream: true } }, env);
    const plain = await call({ messages });
    // The same reply twice: the fake numbers its items anew, so ids and encrypted contents differ.
    const same = (r: ModelCallResult) => ({ ...r, durationMs: 0, message: { ...r.message, reasoning_items: r.message.reasoning_items!.map((i) => i.summary) } });
    expect(same(streamed)).toEqual(same(plain));
    expect(streamed.message.reasoning_items![0]!.encrypted_content).toMatch(/^enc_/);
    expect(fake.requests.map((r) => r.body.stream)).toEqual([true, undefined]);
    expect(progress.at(-1)).toMatchObject({ done: true, text: 'Let me look at the notes first.', toolCalls: ['read_file'] });
    expect(progress.at(-1)!.reasoningChars).toBe('The notes hold the answer.'.length);
  });

  it('status: incomplete for max_output_tokens is a cut-off reply, a refusal is refused; streamed the same', async () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'Hi' }];
    for (const stream of [false, true]) {
      fake.enqueue(say('Half a sent', { incomplete: 'max_output_tokens' }), refuse("I can't help with that."));
      expect(await call({ messages, settings: { stream } })).toMatchObject({ finishReason: 'length', message: { content: 'Half a sent' } });
      const refused = await call({ messages, settings: { stream } });
      expect(refused).toMatchObject({ finishReason: 'content_filter', refusal: true, message: { content: "I can't help with that." } });
    }
  });

  it("usage: input and output tokens as the server counts them, the cached part of the prompt as cacheReadTokens (the fake's automatic prefix cache)", async () => {
    const system: ChatMessage = { role: 'system', content: `You are a facilitator. ${'Follow the workflow step by step. '.repeat(200)}` };
    fake.enqueue(say('One.'), say('Two.'));
    const first = await call({ messages: [system, { role: 'user', content: 'First.' }] });
    const second = await call({ messages: [system, { role: 'user', content: 'First.' }, first.message, { role: 'user', content: 'Second.' }] });
    expect(first.usage).not.toHaveProperty('cacheReadTokens');
    expect(first.usage!.promptTokens).toBeGreaterThan(1024);
    expect(second.usage!.cacheReadTokens).toBeGreaterThanOrEqual(1024);
    expect(second.usage!.cacheReadTokens! % 128).toBe(0);
    expect(second.usage!.totalTokens).toBe(second.usage!.promptTokens + second.usage!.completionTokens);
  });
});

describe('responses provider: a stream whose final event lacks the output', () => {
  it('the reply is joined from the items and their deltas (a server that never sends output_item.done nor the output at the end)', () => {
    const joiner = new ResponsesStreamJoiner();
    const events = [
      { type: 'response.created', response: { id: 'resp_1', model: 'gpt-test-1', status: 'in_progress', output: [] } },
      { type: 'response.output_item.added', output_index: 0, item: { id: 'msg_1', type: 'message', role: 'assistant', content: [] } },
      { type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'Reading ' },
      { type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'it.' },
      { type: 'response.output_item.added', output_index: 1, item: { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '' } },
      { type: 'response.function_call_arguments.delta', output_index: 1, delta: '{"file_path":' },
      { type: 'response.function_call_arguments.delta', output_index: 1, delta: '"a.md"}' },
      { type: 'response.some_future_event', output_index: 1 },
      { type: 'response.completed', response: { id: 'resp_1', model: 'gpt-test-1', status: 'completed', output: [], usage: { input_tokens: 20, output_tokens: 5, total_tokens: 25 } } },
    ];
    for (const event of events) joiner.add(event);
    expect(joiner.text()).toEqual({ preview: 'Reading it.', total: 11 });
    expect(joiner.toolCallNames()).toEqual(['read_file']);
    const reply = normalizeResponsesReply(joiner.joined());
    expect(reply).toMatchObject({
      message: { content: 'Reading it.', tool_calls: [{ id: 'call_1', function: { name: 'read_file', arguments: '{"file_path":"a.md"}' } }] },
      finishReason: 'tool_calls',
      usage: { promptTokens: 20, completionTokens: 5, totalTokens: 25 },
    });
  });
});

describe('responses provider: failures', () => {
  const messages: ChatMessage[] = [{ role: 'user', content: 'Hi' }];

  it('429 with retry-after: rate limited, retried after the delay the server asked', async () => {
    fake.enqueue(apiError(429, 'requests', 'Rate limit reached for gpt-test-1', { code: 'rate_limit_exceeded', retryAfter: '7' }));
    const failure = await failureOf(call({ messages }));
    expect(failure).toMatchObject({ type: MODEL_RATE_LIMITED, nonRetryable: false, nextRetryDelay: 7000 });
    expect(failure.details![0] as ModelFailureDetails).toMatchObject({ status: 429, providerCode: 'rate_limit_exceeded', requestId: 'req_fake_429', retryAfterMs: 7000 });
  });

  it('a 500, or a response that fails in the middle of its stream (response.failed or an error event): a server error, retried', async () => {
    fake.enqueue(
      apiError(500, 'server_error', 'The server had an error while processing your request.'),
      { kind: 'stream-failure', text: 'Partly', event: 'response.failed', code: 'server_error', message: 'The model failed.' },
      { kind: 'stream-failure', text: 'Partly', event: 'error', code: 'rate_limit_exceeded', message: 'Slow down.' },
    );
    expect(await failureOf(call({ messages }))).toMatchObject({ type: MODEL_SERVER_ERROR, nonRetryable: false });
    const failed = await failureOf(call({ messages, settings: { stream: true } }));
    expect(failed).toMatchObject({ type: MODEL_SERVER_ERROR, nonRetryable: false });
    expect(failed.message).toContain('The model failed.');
    expect(await failureOf(call({ messages, settings: { stream: true } }))).toMatchObject({ type: MODEL_RATE_LIMITED, nonRetryable: false });
  });

  it('400 and 401: not retried, the hint names OPENAI_API_KEY and never quotes the key', async () => {
    fake.enqueue(apiError(400, 'invalid_request_error', "Unsupported parameter: 'temperature' is not supported with this model."));
    expect(await failureOf(call({ messages, settings: { temperature: 0.2 } }))).toMatchObject({ type: MODEL_BAD_REQUEST, nonRetryable: true });
    const refused = await failureOf(runIn(mockEnv(), activities('sk-wrong-key-0000000000').callModel, { messages, tools: [], model: 'responses:gpt-test-1' }));
    expect(refused).toMatchObject({ type: MODEL_AUTH_ERROR, nonRetryable: true });
    expect(refused.message).toMatch(/OPENAI_API_KEY/);
    expect(refused.message).not.toContain('sk-wrong-key');
    // The request the server refused the output limit of is not made: the provider sends at least the minimum.
    fake.enqueue(say('Short.'));
    await call({ messages, settings: { maxOutputTokens: 4 } });
    expect(fake.requests.at(-1)!.body.max_output_tokens).toBe(16);
  });
});

describe('responses provider: the other model calls', () => {
  it("an eval's grader on a Responses model asks for its JSON schema as text.format; a compaction summary goes without tools", async () => {
    fake.enqueue(say('{"score": 8, "passed": true, "reason": "names the users"}'), say('The user wants a brief for Falcon.'));
    const grade = createGrader({ baseURL: fake.baseURL, apiKey: FAKE_RESPONSES_KEY, env: {} });
    const graded = await runIn(mockEnv(), grade, { rubric: 'Names the users.', model: 'responses:gpt-grader', message: 'Who uses it?', answer: 'The neighbours.' });
    expect(graded).toMatchObject({ outcome: { grade: { score: 8, passed: true } }, calls: 1, model: 'gpt-grader' });
    const schema = TURN_GRADE_FORMAT.type === 'json_schema' ? TURN_GRADE_FORMAT.json_schema : undefined;
    expect(fake.requests[0]!.body.text).toEqual({ format: { type: 'json_schema', name: schema!.name, schema: schema!.schema, strict: true } });

    const session = sessionTranscript([
      { role: 'system', content: 'Persona.' },
      { role: 'user', content: 'Please write the brief for project Falcon.' },
      { role: 'assistant', content: 'On it.' },
      { role: 'user', content: 'Good, go on.' },
    ]);
    const { summarizeContext } = createModelActivities({ baseURL: fake.baseURL, apiKey: FAKE_RESPONSES_KEY, env: {}, transcriptSource: session.source });
    const result = await runIn(mockEnv(), summarizeContext, { transcript: session.ref, view: { head: 1, from: 1, pruneBefore: 0 }, upTo: 3, maxSummaryTokens: 300, model: 'responses:gpt-test-1' });
    expect(result.summary).toBe('The user wants a brief for Falcon.');
    expect(fake.requests[1]!.body).toMatchObject({ model: 'gpt-test-1', max_output_tokens: 300, store: false });
    expect(fake.requests[1]!.body).not.toHaveProperty('tools');
  });
});
