import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import { createModelActivities, type ModelActivities, type ModelActivityOptions } from '../../../activities/model/call-model';
import { ModelConfigError } from '../../../activities/model/model-config';
import type { ChatMessage, ToolDefinition } from '../../../common/messages';
import {
  DEFAULT_MODEL,
  MODEL_AUTH_ERROR,
  MODEL_BAD_REQUEST,
  MODEL_BAD_RESPONSE,
  MODEL_CONNECTION_ERROR,
  MODEL_RATE_LIMITED,
  MODEL_SERVER_ERROR,
  type ModelCallInput,
  type ModelCallResult,
} from '../../../common/model-call';
import { delay, drop, fault, hang, raw, startFakeOpenAI, text, toolCalls, type FakeOpenAI } from '../../../fake-model/server';

const KEY = 'sk-test-Key0123456789SECRET';
const MESSAGES: ChatMessage[] = [
  { role: 'system', content: 'You are a facilitator.' },
  { role: 'user', content: 'Start the intake.' },
];
const TOOLS: ToolDefinition[] = [
  {
    type: 'function',
    function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { file_path: { type: 'string' } } } },
  },
];

let fake: FakeOpenAI;
let logs: LogEntry[];

beforeAll(async () => {
  fake = await startFakeOpenAI();
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => {
  fake.reset();
  logs = [];
});

/** A mock activity environment whose log lines are kept for assertions instead of printed. */
function mockEnv(info: ConstructorParameters<typeof MockActivityEnvironment>[0] = {}): MockActivityEnvironment {
  return new MockActivityEnvironment(info, { logger: new DefaultLogger('TRACE', (entry) => logs.push(entry)) });
}

function activities(options: ModelActivityOptions = {}): ModelActivities {
  return createModelActivities({ apiKey: KEY, baseURL: fake.baseURL, env: {}, ...options });
}

/** Run `callModel` inside the mock activity context (typed: MockActivityEnvironment.run infers unknown). */
function runIn(env: MockActivityEnvironment, callModel: ModelActivities['callModel'], input: ModelCallInput): Promise<ModelCallResult> {
  return env.run(callModel, input) as Promise<ModelCallResult>;
}

function run(input: Partial<ModelCallInput> = {}, options: ModelActivityOptions = {}, env = mockEnv()): Promise<ModelCallResult> {
  const { callModel } = activities(options);
  return runIn(env, callModel, { messages: MESSAGES, tools: TOOLS, ...input });
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApplicationFailure);
  return error as ApplicationFailure;
}

describe('callModel', () => {
  it('callModel: returns a text reply with usage, model, finish reason and duration', async () => {
    fake.enqueue(text('Welcome! What is the project called?', { usage: { prompt_tokens: 40, completion_tokens: 9 } }));
    const result = await run({}, { defaultModel: 'gpt-test' });
    expect(result.message).toEqual({ role: 'assistant', content: 'Welcome! What is the project called?' });
    expect(result.usage).toEqual({ promptTokens: 40, completionTokens: 9, totalTokens: 49 });
    expect(result.model).toBe('gpt-test');
    expect(result.finishReason).toBe('stop');
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('callModel: normalises tool calls, keeping malformed arguments as text', async () => {
    fake.enqueue(
      toolCalls([
        { name: 'read_file', arguments: { file_path: '{bundle-root}/workflows/intake/workflow.yaml' } },
        { name: 'read_file', arguments: '{"file_path": "unterminated' },
      ]),
    );
    const result = await run();
    expect(result.finishReason).toBe('tool_calls');
    expect(result.message.content).toBeNull();
    expect(result.message.tool_calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"file_path":"{bundle-root}/workflows/intake/workflow.yaml"}' } },
      { id: 'call_2', type: 'function', function: { name: 'read_file', arguments: '{"file_path": "unterminated' } },
    ]);
  });

  it('callModel: sends messages, tools with tool_choice auto, temperature and max_tokens', async () => {
    fake.enqueue(text('ok'));
    await run({ temperature: 0.2, maxTokens: 512 });
    const [request] = await fake.waitForRequests(1);
    expect(request!.body).toEqual({
      model: DEFAULT_MODEL,
      messages: MESSAGES,
      tools: TOOLS,
      tool_choice: 'auto',
      temperature: 0.2,
      max_tokens: 512,
    });
    expect(request!.hasAuthorization).toBe(true);
  });

  it('callModel: an empty tool list sends neither tools nor tool_choice', async () => {
    fake.enqueue(text('ok'));
    await run({ tools: [] });
    const body = fake.requests[0]!.body!;
    expect('tools' in body).toBe(false);
    expect('tool_choice' in body).toBe(false);
  });

  it('callModel: the model comes from the input, else the options, else LOOPWRIGHT_MODEL, else the default', async () => {
    fake.enqueue(text('1'), text('2'), text('3'), text('4'));
    await run({ model: 'from-input' }, { defaultModel: 'from-options' });
    await run({}, { defaultModel: 'from-options', env: { LOOPWRIGHT_MODEL: 'from-env' } });
    await run({}, { env: { LOOPWRIGHT_MODEL: 'from-env' } });
    await run();
    expect(fake.requests.map((r) => r.body!.model)).toEqual(['from-input', 'from-options', 'from-env', DEFAULT_MODEL]);
  });

  it('callModel: base URL and key can come from the environment alone', async () => {
    fake.enqueue(text('env ok'));
    const { callModel } = createModelActivities({ env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: fake.baseURL } });
    const result = await runIn(mockEnv(), callModel, { messages: MESSAGES, tools: [] });
    expect(result.message.content).toBe('env ok');
    expect(fake.requests).toHaveLength(1);
  });

  it('callModel: a compatible server needs no API key (a placeholder is sent)', async () => {
    fake.enqueue(text('no key needed'));
    const { callModel } = createModelActivities({ env: { OPENAI_BASE_URL: fake.baseURL } });
    const result = await runIn(mockEnv(), callModel, { messages: MESSAGES, tools: [] });
    expect(result.message.content).toBe('no key needed');
  });

  it('callModel: no key for OpenAI itself fails at once, naming OPENAI_API_KEY, without a request', async () => {
    const { callModel } = createModelActivities({ env: {} });
    const failure = await failureOf(runIn(mockEnv(), callModel, { messages: MESSAGES, tools: [] }));
    expect(failure.type).toBe(MODEL_AUTH_ERROR);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('OPENAI_API_KEY is not set');
  });

  it('callModel: 429 with Retry-After is a retryable failure with nextRetryDelay', async () => {
    fake.enqueue(fault(429, { retryAfter: 3 }));
    const failure = await failureOf(run());
    expect(failure.type).toBe(MODEL_RATE_LIMITED);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBe(3000);
  });

  it('callModel: 401 is non-retryable and never shows the key', async () => {
    fake.enqueue(fault(401, { message: `Incorrect API key provided: ${KEY}` }));
    const failure = await failureOf(run());
    expect(failure.type).toBe(MODEL_AUTH_ERROR);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('check OPENAI_API_KEY');
    expect(failure.message).not.toContain(KEY);
    expect(JSON.stringify(logs, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(KEY);
  });

  it('callModel: 5xx, a dropped connection and a reply without choices are retryable', async () => {
    fake.enqueue(fault(502), drop(), raw(200, { id: 'x', object: 'chat.completion', created: 0, model: 'm', choices: [] }));
    const server = await failureOf(run());
    const dropped = await failureOf(run());
    const empty = await failureOf(run());
    expect([server.type, dropped.type, empty.type]).toEqual([MODEL_SERVER_ERROR, MODEL_CONNECTION_ERROR, MODEL_BAD_RESPONSE]);
    expect([server.nonRetryable, dropped.nonRetryable, empty.nonRetryable]).toEqual([false, false, false]);
  });

  it('callModel: an unreachable server is a retryable connection error', async () => {
    const closed = await startFakeOpenAI();
    const baseURL = closed.baseURL;
    await closed.close();
    const failure = await failureOf(run({}, { baseURL }));
    expect(failure.type).toBe(MODEL_CONNECTION_ERROR);
    expect(failure.message).toContain('ECONNREFUSED');
  });

  it('callModel: malformed input is a non-retryable ModelBadRequest naming the field', async () => {
    const failure = await failureOf(run({ messages: [] }));
    expect(failure.type).toBe(MODEL_BAD_REQUEST);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('messages');
    expect(fake.requests).toHaveLength(0);
  });

  it('callModel: cancelling the activity aborts the HTTP request and surfaces a CancelledFailure', async () => {
    fake.enqueue(hang());
    const env = mockEnv();
    const pending = run({}, {}, env);
    await fake.waitForRequests(1);
    env.cancel();
    await expect(pending).rejects.toBeInstanceOf(CancelledFailure);
    const aborted = await fake.waitForAborts(1);
    expect(aborted[0]!.index).toBe(0);
    expect(fake.abortedCount()).toBe(1);
  });

  it('callModel: heartbeats while waiting and stops when the reply is in', async () => {
    fake.enqueue(delay(400, text('slow but sure')));
    const env = mockEnv();
    let beats = 0;
    env.on('heartbeat', () => {
      beats += 1;
    });
    const result = await run({}, { heartbeatIntervalMs: 50 }, env);
    expect(result.message.content).toBe('slow but sure');
    // Every 50 ms for 400 ms (none at once); allow for slow timers.
    expect(beats).toBeGreaterThanOrEqual(5);
    const afterReply = beats;
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(beats).toBe(afterReply);
  });

  it('callModel: heartbeats faster than the interval when the heartbeat timeout demands it', async () => {
    fake.enqueue(delay(300, text('ok')));
    const env = mockEnv({ heartbeatTimeoutMs: 100 });
    let beats = 0;
    env.on('heartbeat', () => {
      beats += 1;
    });
    await run({}, { heartbeatIntervalMs: 10_000 }, env);
    // Every 50 ms (half the timeout) rather than every 10 s.
    expect(beats).toBeGreaterThanOrEqual(4);
  });

  it('callModel: logs structured facts, and payloads only when LOOPWRIGHT_LOG_PAYLOADS=1', async () => {
    fake.enqueue(text('quiet reply'), text('loud reply'));
    await run();
    const quiet = logs.filter((l) => l.message.startsWith('Model call'));
    expect(quiet.map((l) => l.message)).toEqual(['Model call finished']);
    expect(quiet[0]!.meta).toMatchObject({ model: DEFAULT_MODEL, finishReason: 'stop', toolCalls: [] });
    expect(JSON.stringify(quiet.map((l) => l.meta))).not.toContain('quiet reply');

    logs = [];
    await run({}, { env: { LOOPWRIGHT_LOG_PAYLOADS: '1' } });
    const loud = JSON.stringify(logs.filter((l) => l.message.startsWith('Model call')).map((l) => l.meta));
    expect(loud).toContain('loud reply');
    expect(loud).toContain('Start the intake.');
    expect(loud).not.toContain(KEY);
  });

  it('callModel: an invalid setting fails when the activities are created, naming it', () => {
    expect(() => createModelActivities({ env: { OPENAI_BASE_URL: 'localhost:11434' } })).toThrow(ModelConfigError);
    expect(() => createModelActivities({ env: { OPENAI_BASE_URL: 'localhost:11434' } })).toThrow('OPENAI_BASE_URL');
  });
});
