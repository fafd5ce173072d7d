/**
 * Streamed model calls against the fake model server's streaming (fake-model/stream.ts): the same
 * script steps give the same results streamed and unstreamed, a server set not to stream is asked
 * again without, and a cancelled call disconnects from the stream. Closer cases (chunks written by
 * hand, heartbeats, redaction, limits) are in streaming.test.ts.
 */
import { CancelledFailure } from '@temporalio/common';
import { createModelActivities } from '../../../activities/model/call-model';
import type { ToolDefinition } from '../../../common/messages';
import type { ModelCallInput, ModelCallResult } from '../../../common/model-call';
import { isStreamProgress, type ModelStreamProgress } from '../../../common/stream-types';
import { startFakeOpenAI, text, toolCalls, type FakeOpenAI } from '../../../fake-model/server';
import { mockEnv, runIn } from './fake-client';

const KEY = 'sk-test-fake-stream-0123456789';
const TOOLS: ToolDefinition[] = [
  { type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { file_path: { type: 'string' } } } } },
  { type: 'function', function: { name: 'list_dir', description: 'List a folder', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
];

let fake: FakeOpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI();
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => fake.reset());

function call(stream: boolean, env = mockEnv(), baseURL = fake.baseURL): Promise<ModelCallResult> {
  const { callModel } = createModelActivities({ apiKey: KEY, baseURL, env: {} });
  const input: ModelCallInput = { messages: [{ role: 'user', content: 'hi' }], tools: TOOLS, ...(stream ? { settings: { stream: true } } : {}) };
  return runIn(env, callModel, input);
}

const sameAs = (result: ModelCallResult): ModelCallResult => ({ ...result, durationMs: 0 });

describe('streamed calls against the fake model server', () => {
  it('text with reasoning, and two tool calls: streamed in small chunks, the results equal the unstreamed ones', async () => {
    fake.setStreaming({ chunkChars: 3, intervalMs: 1 });
    const reply = text('The answer is forty-two, as computed.', { reasoning: 'Let me think it through.' });
    const calls = toolCalls([
      { id: 'call_r', name: 'read_file', arguments: { file_path: 'notes/today.md' } },
      { id: 'call_l', name: 'list_dir', arguments: { path: 'notes' } },
    ]);
    fake.enqueue(reply, reply, calls, calls);
    const env = mockEnv();
    const progress: ModelStreamProgress[] = [];
    env.on('heartbeat', (details: unknown) => {
      if (isStreamProgress(details)) progress.push(details);
    });
    const streamedText = await call(true, env);
    expect(sameAs(streamedText)).toEqual(sameAs(await call(false)));
    expect(streamedText.message).toMatchObject({ content: 'The answer is forty-two, as computed.', reasoning_content: 'Let me think it through.' });
    expect(progress.at(-1)).toMatchObject({ done: true, text: 'The answer is forty-two, as computed.', reasoningChars: 24 });
    const streamedCalls = await call(true);
    expect(sameAs(streamedCalls)).toEqual(sameAs(await call(false)));
    expect(streamedCalls.message.tool_calls?.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments) as unknown])).toEqual([
      ['call_r', 'read_file', { file_path: 'notes/today.md' }],
      ['call_l', 'list_dir', { path: 'notes' }],
    ]);
    expect(fake.requests.map((r) => r.body?.stream ?? false)).toEqual([true, false, true, false]);
    expect(fake.requests[0]!.streamedChunks).toBeGreaterThan(10);
  });

  it('a server set not to stream: the call is made again without streaming and answers', async () => {
    const refusing = await startFakeOpenAI({ streaming: false });
    try {
      refusing.enqueue(text('answered without a stream'));
      const result = await call(true, mockEnv(), refusing.baseURL);
      expect(result.message.content).toBe('answered without a stream');
      expect(refusing.requests.map((r) => r.body?.stream ?? false)).toEqual([true, false]);
    } finally {
      await refusing.close();
    }
  });

  it('cancelling mid-stream rejects with the cancellation, and the server sees the client go', async () => {
    fake.setStreaming({ chunkChars: 2, intervalMs: 50 });
    fake.enqueue(text('a reply long enough to be cancelled while it is being written'));
    const env = mockEnv();
    let shown!: () => void;
    const firstText = new Promise<void>((resolve) => (shown = resolve));
    env.on('heartbeat', (details: unknown) => {
      if (isStreamProgress(details) && details.text !== '') shown();
    });
    const pending = call(true, env);
    await firstText;
    env.cancel();
    await expect(pending).rejects.toBeInstanceOf(CancelledFailure);
    const [aborted] = await fake.waitForAborts(1, 2000);
    expect(aborted!.streamedChunks).toBeLessThan(20);
  });
});
