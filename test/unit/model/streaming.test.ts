/**
 * Streamed model calls (`settings.stream`): the real openai client against a small SSE server in
 * this file, whose chunks each test writes. The reply is joined into what the unstreamed call
 * returns; heartbeats carry the text so far (redacted, batched, the last one done); a server that
 * refuses to stream or ignores `stream` still answers; cancellation and the body limit cut the stream.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { MockActivityEnvironment } from '@temporalio/testing';
import { createModelActivities, type ModelActivityOptions } from '../../../activities/model/call-model';
import { heldFrom } from '../../../activities/model/stream-progress';
import { MODEL_BAD_REQUEST, MODEL_REPLY_TOO_LARGE, type ModelCallInput, type ModelCallResult } from '../../../common/model-call';
import { isStreamProgress, type ModelStreamProgress } from '../../../common/stream-types';
import { mockEnv, rejectionOf, runIn } from './fake-client';

const KEY = 'sk-test-Key0123456789SECRET';
const USAGE = { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 };

type Handler = (res: ServerResponse, req: IncomingMessage) => Promise<void> | void;

/** A request the server received: its body, and whether the client went before the reply ended. */
interface Seen {
  body: Record<string, unknown>;
  gone: Promise<boolean>;
}

let server: Server;
let baseURL: string;
let handlers: Handler[] = [];
let seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (part: string) => (raw += part));
    req.on('end', () => {
      const gone = new Promise<boolean>((resolve) => res.on('close', () => resolve(!res.writableFinished)));
      seen.push({ body: JSON.parse(raw) as Record<string, unknown>, gone });
      void (handlers.shift() ?? json(500, { error: { message: 'no reply queued' } }))(res, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  handlers = [];
  seen = [];
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A chunk of the reply's first choice. */
function chunk(delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1700000000, model: 'served-model', choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }] };
}

/** The chunk `stream_options.include_usage` asks for: no choices, the usage. */
function usageChunk(usage: unknown = USAGE): Record<string, unknown> {
  return { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1700000000, model: 'served-model', choices: [], usage };
}

/** The unstreamed reply with `message`. */
function completion(message: Record<string, unknown>, finishReason = 'stop', usage: unknown = USAGE): Record<string, unknown> {
  return {
    id: 'chatcmpl-s',
    object: 'chat.completion',
    created: 1700000000,
    model: 'served-model',
    choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: null, ...message }, finish_reason: finishReason, logprobs: null }],
    usage,
  };
}

/** An event stream of `events` (a function is awaited in its place), `gapMs` apart, then [DONE]. */
function sse(events: (Record<string, unknown> | (() => Promise<unknown>))[], gapMs = 0): Handler {
  return async (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const event of events) {
      if (typeof event === 'function') await event();
      else if (!res.destroyed) res.write(`data: ${JSON.stringify(event)}\n\n`);
      if (gapMs > 0) await sleep(gapMs);
    }
    if (!res.destroyed) res.end('data: [DONE]\n\n');
  };
}

function json(status: number, body: unknown): Handler {
  return (res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
}

/** A mock activity environment that keeps every heartbeat's details. */
function recordingEnv(): {
  env: MockActivityEnvironment;
  beats: unknown[];
  /** When each batch (by seq) was first seen. */
  seenAt: Map<number, number>;
  progress: () => ModelStreamProgress[];
  when: (test: (p: ModelStreamProgress) => boolean) => Promise<void>;
} {
  const env = mockEnv();
  const beats: unknown[] = [];
  const seenAt = new Map<number, number>();
  const waiting: { test: (p: ModelStreamProgress) => boolean; resolve: () => void }[] = [];
  env.on('heartbeat', (details: unknown) => {
    beats.push(details);
    if (!isStreamProgress(details)) return;
    if (!seenAt.has(details.seq)) seenAt.set(details.seq, performance.now());
    for (const w of waiting.filter((w) => w.test(details))) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve();
    }
  });
  const progress = (): ModelStreamProgress[] => beats.filter(isStreamProgress);
  const when = (test: (p: ModelStreamProgress) => boolean): Promise<void> =>
    progress().some(test) ? Promise.resolve() : Promise.race([new Promise<void>((resolve) => waiting.push({ test, resolve })), sleep(3000)]);
  return { env, beats, seenAt, progress, when };
}

function call(settings: ModelCallInput['settings'], env = mockEnv(), options: ModelActivityOptions = {}): Promise<ModelCallResult> {
  const { callModel } = createModelActivities({ apiKey: KEY, baseURL, env: {}, ...options });
  return runIn(env, callModel, { messages: [{ role: 'user', content: 'hi' }], tools: [], settings });
}

/** The distinct batches (the keep-alive heartbeat repeats the latest one). */
function batches(progress: ModelStreamProgress[]): ModelStreamProgress[] {
  return progress.filter((p, i) => i === 0 || p.seq !== progress[i - 1]!.seq);
}

describe('callModel with stream: true', () => {
  it('asks for a stream with usage and returns exactly what the unstreamed call returns for the same reply', async () => {
    handlers.push(
      sse([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hello, ' }), chunk({ content: 'wor' }), chunk({ content: 'ld!' }, 'stop'), usageChunk()]),
      json(200, completion({ content: 'Hello, world!' })),
    );
    const streamed = await call({ stream: true });
    const plain = await call({});
    expect(streamed.message).toEqual({ role: 'assistant', content: 'Hello, world!' });
    expect({ ...streamed, durationMs: 0 }).toEqual({ ...plain, durationMs: 0 });
    expect(streamed.usage).toEqual({ promptTokens: 12, completionTokens: 3, totalTokens: 15 });
    expect(seen[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect('stream' in seen[1]!.body || 'stream_options' in seen[1]!.body).toBe(false);
  });

  it('joins two tool calls by index, with their arguments split across chunks, and shows their names', async () => {
    handlers.push(
      sse([
        chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"file_' } }] }),
        chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'list_dir', arguments: '{"pa' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: 'path":"a.txt"}' } }] }),
        chunk({ tool_calls: [{ index: 1, function: { arguments: 'th":"."}' } }] }),
        chunk({}, 'tool_calls'),
        usageChunk(),
      ]),
    );
    const { env, progress } = recordingEnv();
    const result = await call({ stream: true }, env);
    expect(result.finishReason).toBe('tool_calls');
    expect(result.message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '{"file_path":"a.txt"}' } },
        { id: 'call_b', type: 'function', function: { name: 'list_dir', arguments: '{"path":"."}' } },
      ],
    });
    expect(progress().at(-1)).toMatchObject({ done: true, text: '', toolCalls: ['read_file', 'list_dir'] });
  });

  it('finish_reason length is kept, and a stream without a usage chunk gives no usage', async () => {
    handlers.push(sse([chunk({ role: 'assistant', content: 'cut o' }), chunk({ content: 'ff' }, 'length')]));
    const result = await call({ stream: true });
    expect(result).toMatchObject({ finishReason: 'length', usage: null, message: { content: 'cut off' } });
    expect(result.warnings).toBeUndefined();
  });

  it('keeps reasoning_content joined; heartbeats count its characters and never show it', async () => {
    handlers.push(sse([chunk({ role: 'assistant', reasoning_content: 'Think ' }), chunk({ reasoning_content: 'hard.' }), chunk({ content: 'Answer' }, 'stop'), usageChunk()]));
    const { env, beats, progress } = recordingEnv();
    const result = await call({ stream: true }, env);
    expect(result.message).toEqual({ role: 'assistant', content: 'Answer', reasoning_content: 'Think hard.' });
    expect(progress().at(-1)).toMatchObject({ done: true, text: 'Answer', reasoningChars: 11 });
    expect(JSON.stringify(beats)).not.toContain('Think');
  });

  it('a streamed refusal and a tool call written as text come out as they do unstreamed', async () => {
    handlers.push(
      sse([chunk({ role: 'assistant', refusal: 'I cannot ' }), chunk({ refusal: 'help with that.' }, 'stop')]),
      sse([chunk({ role: 'assistant', content: '<tool_call>{"name": "read_file", ' }), chunk({ content: '"arguments": {"file_path": "a"}}</tool_call>' }, 'stop')]),
    );
    const { env, progress } = recordingEnv();
    const refused = await call({ stream: true }, env);
    expect(refused).toMatchObject({ refusal: true, message: { content: 'I cannot help with that.' } });
    expect(progress().at(-1)).toMatchObject({ done: true, text: 'I cannot help with that.' });
    const { callModel } = createModelActivities({ apiKey: KEY, baseURL, env: {} });
    const tools = [{ type: 'function' as const, function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object' } } }];
    const written = await runIn(mockEnv(), callModel, { messages: [{ role: 'user', content: 'hi' }], tools, settings: { stream: true } });
    expect(written.message.tool_calls).toEqual([{ id: expect.any(String), type: 'function', function: { name: 'read_file', arguments: '{"file_path":"a"}' } }]);
    expect(written.warnings).toEqual([expect.stringContaining('as <tool_call> text')]);
  });

  it('heartbeats: the first text at once, then growing text in batches with seq increasing, the last one done', async () => {
    const { env, beats, seenAt, progress, when } = recordingEnv();
    const words = Array.from({ length: 30 }, (_, i) => `w${i} `);
    handlers.push(
      sse(
        [
          chunk({ role: 'assistant', reasoning_content: 'Hmm. ' }),
          chunk({ content: 'First ' }),
          // Nothing more is sent until a heartbeat has shown the first text.
          () => when((p) => p.text === 'First '),
          ...words.map((w) => chunk({ content: w })),
          chunk({}, 'stop'),
        ],
        10,
      ),
    );
    const result = await call({ stream: true }, env, { heartbeatIntervalMs: 15 });
    const all = progress();
    const sent = batches(all);
    expect(sent[0]).toEqual({ kind: 'loopwright.stream', attempt: 1, seq: 1, text: '', reasoningChars: 5 });
    // The first text goes at once (10 ms after the reasoning's batch), not with the next batch 100 ms on.
    expect(sent[1]).toMatchObject({ seq: 2, text: 'First ' });
    expect(seenAt.get(2)! - seenAt.get(1)!).toBeLessThan(60);
    expect(sent.map((p) => p.seq)).toEqual(sent.map((_, i) => i + 1));
    expect(sent.every((p, i) => i === 0 || p.text.startsWith(sent[i - 1]!.text))).toBe(true);
    expect(sent.every((p) => p.attempt === 1 && p.kind === 'loopwright.stream')).toBe(true);
    // About every 100 ms over some 300 ms of chunks: far fewer batches than chunks.
    expect(sent.length).toBeLessThan(words.length / 2);
    expect(sent.length).toBeGreaterThanOrEqual(3);
    expect(all.at(-1)).toEqual({ kind: 'loopwright.stream', attempt: 1, seq: sent.length, text: result.message.content, reasoningChars: 5, done: true });
    expect(sent.filter((p) => p.done)).toHaveLength(1);
    // The keep-alive heartbeat (every 15 ms here) never blanked the progress once it was shown.
    const first = beats.findIndex(isStreamProgress);
    expect(beats.slice(first).every(isStreamProgress)).toBe(true);
  });

  it('the API key echoed in the stream is redacted in heartbeats and the result, and never shown in part', async () => {
    const { env, beats, progress, when } = recordingEnv();
    handlers.push(
      sse([
        chunk({ role: 'assistant', content: 'Your key is ' }),
        () => when((p) => p.text === 'Your key is '),
        chunk({ content: KEY.slice(0, 12) }),
        // A batch goes out while only the key's first half has arrived.
        () => sleep(250),
        chunk({ content: `${KEY.slice(12)}, and base64 ${Buffer.from(KEY).toString('base64')}.` }, 'stop'),
      ]),
    );
    const result = await call({ stream: true }, env);
    expect(result.message.content).toBe('Your key is [redacted], and base64 [redacted].');
    expect(progress().at(-1)).toMatchObject({ done: true, text: result.message.content });
    expect(batches(progress()).length).toBeGreaterThanOrEqual(3);
    const shown = JSON.stringify(beats);
    expect(shown).not.toContain('sk-t');
    expect(shown).not.toContain(Buffer.from(KEY).toString('base64').slice(0, 8));
  });

  it('a server that refuses to stream (400 naming stream_options) is asked again at once without, and not asked to stream again', async () => {
    const refusing = `${baseURL}/refusing`;
    handlers.push(
      json(400, { error: { message: 'stream_options: Extra inputs are not permitted', type: 'invalid_request_error' } }),
      json(200, completion({ content: 'plain after all' })),
      json(200, completion({ content: 'plain again' })),
    );
    const first = await call({ stream: true }, mockEnv(), { baseURL: refusing });
    const second = await call({ stream: true }, mockEnv(), { baseURL: refusing });
    expect([first.message.content, second.message.content]).toEqual(['plain after all', 'plain again']);
    expect(seen.map((s) => s.body.stream ?? false)).toEqual([true, false, false]);
  });

  it('any other 400 fails as today (ModelBadRequest), without asking again', async () => {
    handlers.push(json(400, { error: { message: 'Unknown model', type: 'invalid_request_error' } }));
    const failure = await rejectionOf(call({ stream: true }));
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).type).toBe(MODEL_BAD_REQUEST);
    expect(seen).toHaveLength(1);
  });

  it('a server that ignores stream and answers plain JSON is read as that reply', async () => {
    handlers.push(json(200, completion({ content: 'not streamed' }, 'stop')));
    const result = await call({ stream: true });
    expect(result).toMatchObject({ message: { role: 'assistant', content: 'not streamed' }, finishReason: 'stop', usage: { totalTokens: 15 } });
    expect(seen).toHaveLength(1);
  });

  it('cancelling the activity mid-stream rejects with the cancellation and closes the connection at once', async () => {
    const { env, when } = recordingEnv();
    handlers.push(sse([chunk({ role: 'assistant', content: 'Partial' }), () => seen[0]!.gone]));
    const pending = call({ stream: true }, env);
    await when((p) => p.text === 'Partial');
    const cancelledAt = Date.now();
    env.cancel();
    await expect(pending).rejects.toBeInstanceOf(CancelledFailure);
    await expect(seen[0]!.gone).resolves.toBe(true);
    expect(Date.now() - cancelledAt).toBeLessThan(1000);
  });

  it('a stream over the reply-body limit fails ModelReplyTooLarge, and the request is aborted', async () => {
    const piece = 'x'.repeat(200);
    handlers.push(sse([chunk({ role: 'assistant', content: '' }), ...Array.from({ length: 100 }, () => chunk({ content: piece })), chunk({}, 'stop')], 2));
    const failure = await rejectionOf(call({ stream: true }, mockEnv(), { maxReplyBodyBytes: 8 * 1024 }));
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).type).toBe(MODEL_REPLY_TOO_LARGE);
    expect((failure as ApplicationFailure).nonRetryable).toBe(true);
    expect((failure as ApplicationFailure).message).toContain('over the limit of 8192 bytes');
    await expect(seen[0]!.gone).resolves.toBe(true);
  });

  it('a streamed reply over the reply limit fails as an unstreamed one does', async () => {
    handlers.push(sse([chunk({ role: 'assistant', content: 'y'.repeat(1500) }), chunk({ content: 'y'.repeat(1500) }, 'stop')]));
    const failure = await rejectionOf(call({ stream: true }, mockEnv(), { maxReplyBytes: 2000, maxReplyBodyBytes: 100_000 }));
    expect((failure as ApplicationFailure).type).toBe(MODEL_REPLY_TOO_LARGE);
    expect((failure as ApplicationFailure).message).toMatch(/The model reply is \d+ bytes, over the limit of 2000 bytes/);
  });
});

describe('heldFrom', () => {
  it('holds back an end that could start a secret, in any form, and nothing else', () => {
    expect(heldFrom('Your key is sk-te', [KEY])).toBe('Your key is '.length);
    expect(heldFrom('Your key is sk-tx', [KEY])).toBe('Your key is sk-tx'.length);
    expect(heldFrom('encoded: %73%6B%2D%7', [KEY])).toBe('encoded: '.length);
    const base64 = Buffer.from(KEY).toString('base64');
    expect(heldFrom(`b64 ${base64.slice(0, 10)}`, [KEY])).toBe(4);
    expect(heldFrom('anything sk-te', [])).toBe('anything sk-te'.length);
  });
});
