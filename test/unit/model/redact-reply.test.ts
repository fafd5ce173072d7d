/**
 * What the model activity returns and logs holds the key in no encoding: replies (content,
 * reasoning, tool calls, model name, warnings), failures (message, details, cause) and log lines,
 * through the real openai client against the fake server echoing the key. The placeholder key of a
 * server that needs none is no secret and is left alone.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { LogEntry } from '@temporalio/worker';
import { createModelActivities } from '../../../activities/model/call-model';
import { redactingLogger } from '../../../activities/model/client-logger';
import { redactReply } from '../../../activities/redaction/redact-reply';
import { fault, type FakeOpenAI, raw, startFakeOpenAI, text, toolCalls } from '../../../fake-model/server';
import { mockEnv, rejectionOf, runIn } from './fake-client';

const KEY = 'sk-echo-Hq4wE8rT1yU5iO9pA3sD';

/** The key as servers have been seen to echo it. */
const ECHOES = [
  Buffer.from(`Authorization: Bearer ${KEY}`).toString('base64'),
  Buffer.from(`Bearer ${KEY}`).toString('base64url'),
  Buffer.from(KEY).toString('hex').toUpperCase(),
  [...Buffer.from(KEY)].map((b) => `%${b.toString(16)}`).join(''),
  [...KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
  `x-api-key: ${KEY.split('').reverse().join('')}`,
];

/** Forms of the key to search for: plain, hex, and the middle of its base64 at each offset, both alphabets. */
function forms(key = KEY): string[] {
  const out = [key, Buffer.from(key).toString('hex')];
  for (const prefix of ['', 'x', 'xy']) {
    const middle = Buffer.from(prefix + key)
      .toString('base64')
      .slice(8, 24);
    out.push(middle, middle.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return out;
}

/** The forms found in `text`, as it is or with its percent and \\u escapes decoded. */
function leaks(text: string): string[] {
  const decoded = text.replace(/%([0-9a-f]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16))).replace(/\\+u([0-9a-f]{4})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
  return forms().filter((form) => [text, decoded].some((t) => t.includes(form) || t.toLowerCase().includes(form.toLowerCase())));
}

/** Log lines with their fields, as text. */
function logText(logs: LogEntry[]): string {
  return logs.map((entry) => `${entry.message} ${JSON.stringify(entry.meta ?? {}, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`).join('\n');
}

let fake: FakeOpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI();
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => fake.reset());

function callModel(logs: LogEntry[], apiKey = KEY): Promise<unknown> {
  const { callModel: call } = createModelActivities({ apiKey, baseURL: fake.baseURL, env: {} });
  return runIn(mockEnv(logs), call, { messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: {} } }] });
}

describe('redaction of what the model server sends', () => {
  it('callModel: a reply echoing the key in every encoding returns and logs it in none', async () => {
    const echo = ECHOES.join(' | ');
    fake.enqueue(toolCalls([{ name: 'read_file', arguments: { file_path: echo } }], { content: `Here: ${echo}`, model: Buffer.from(KEY).toString('base64') }));
    const logs: LogEntry[] = [];
    const result = await callModel(logs);
    const returned = JSON.stringify(result);
    expect(leaks(returned)).toEqual([]);
    expect(returned).toMatch(/"content":"Here: [^"]*\[redacted\]/);
    expect(leaks(logText(logs))).toEqual([]);
  });

  it('callModel: reasoning and usage warnings are redacted too', async () => {
    const body = {
      id: 'c',
      object: 'chat.completion',
      created: 0,
      model: 'm',
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'ok', reasoning_content: `I saw ${ECHOES[0]}` } }],
      usage: { prompt_tokens: ECHOES[3], completion_tokens: 1, total_tokens: 2 },
    };
    fake.enqueue(raw(200, body));
    const result = (await callModel([])) as { message: { reasoning_content: string }; warnings?: string[] };
    expect(result.message.reasoning_content).toMatch(/^I saw \S*\[redacted\]/);
    expect(leaks(JSON.stringify(result))).toEqual([]);
  });

  it.each([
    ['a 401 message', fault(401, { message: `Incorrect API key: ${ECHOES.join(', ')}` })],
    ['a 500 with the key in type and code', fault(500, { body: { error: { message: 'bad', type: ECHOES[0], code: ECHOES[2] } } })],
    ['a 400 that is not JSON', raw(400, `headers were: authorization: Bearer ${KEY}\n${ECHOES.join('\n')}`, { 'content-type': 'text/plain' })],
    ['a 403 with the request echoed as JSON', fault(403, { body: { error: { message: JSON.stringify({ headers: { authorization: `Bearer ${KEY}`, 'x-api-key': KEY } }) } } })],
  ])('callModel: %s leaves the key in no field of the failure or the logs', async (_what, step) => {
    fake.enqueue(step);
    const logs: LogEntry[] = [];
    const failure = await rejectionOf(callModel(logs));
    expect(failure).toBeInstanceOf(ApplicationFailure);
    const { message, details, cause, stack } = failure as ApplicationFailure;
    expect(leaks(JSON.stringify({ message, details, cause: cause?.message, stack }))).toEqual([]);
    expect(leaks(logText(logs))).toEqual([]);
  });

  it('callModel: the placeholder key of a server that needs none is no secret', async () => {
    fake.enqueue(text('Sign-in is not-needed here.'));
    const { callModel: call } = createModelActivities({ baseURL: fake.baseURL, env: {} });
    const result = (await runIn(mockEnv(), call, { messages: [{ role: 'user', content: 'hi' }], tools: [] })) as { message: { content: string } };
    expect(result.message.content).toBe('Sign-in is not-needed here.');
  });

  it('redactReply: without secrets the reply is returned as it is', () => {
    const reply = { message: { role: 'assistant' as const, content: 'x' }, usage: null, model: 'm', finishReason: 'stop' };
    expect(redactReply(reply, [])).toBe(reply);
  });

  it("redactingLogger: the openai client's log lines (OPENAI_LOG) are redacted", () => {
    const lines: string[] = [];
    const sink = { error: (l: string) => lines.push(l), warn: (l: string) => lines.push(l), info: (l: string) => lines.push(l), debug: (l: string) => lines.push(l) };
    const logger = redactingLogger([KEY], sink);
    logger.debug('[log_1] response parsed', { body: { choices: [{ message: { content: ECHOES.join(' ') } }] }, headers: { 'set-cookie': 'sid=abcdef' } });
    logger.info(`sent with ${KEY}`);
    expect(lines).toHaveLength(2);
    expect(leaks(lines.join('\n'))).toEqual([]);
    expect(lines[0]).toContain('response parsed');
  });
});
