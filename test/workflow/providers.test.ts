/**
 * Sessions through the Anthropic Messages provider on the real dev server: tool calls, an approval
 * and a streamed reply shown in the live output; a session whose model fails on one provider and
 * falls back to a model on the other, keeping its transcript; a worker killed with SIGKILL
 * mid-call, replaced by another that makes the call again; and a session through the OpenAI
 * Responses provider (a tool call after reasoning, the reasoning item sent back through the
 * transcript, a streamed reply); a Responses session that falls back to Anthropic and back, keeping
 * its transcript, an approval and its budget; and a worker killed mid-call on Responses. The
 * Messages server is the fake of test/support/fake-anthropic.ts
 * and the Responses server that of test/support/fake-responses.ts, both refusing a transcript mapped
 * wrong; Chat Completions is the fake model server. One dev server for the file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { LoopwrightClient } from '../../client/session-client';
import { streamProgress } from '../../client/session-events';
import type { AssistantMessage, ChatMessage } from '../../common/messages';
import { callCost } from '../../common/model-cost';
import type { ModelStreamProgress } from '../../common/stream-types';
import { type FakeOpenAI, startFakeOpenAI, text } from '../../fake-model/server';
import { apiError, FAKE_ANTHROPIC_KEY, say, startFakeAnthropic, useTools, type FakeAnthropic } from '../support/fake-anthropic';
import * as responsesFake from '../support/fake-responses';
import { copyExampleBundle, startSessionHarness, type SessionHarness } from '../support/session-harness';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

jest.setTimeout(90_000);

/** Two keys, so a request tells which worker process made it. */
const KEY_A = `${FAKE_ANTHROPIC_KEY}-a`;
const KEY_B = `${FAKE_ANTHROPIC_KEY}-b`;
const RESPONSES_KEY_A = `${responsesFake.FAKE_RESPONSES_KEY}-a`;
const RESPONSES_KEY_B = `${responsesFake.FAKE_RESPONSES_KEY}-b`;

let h: SessionHarness;
let anthropic: FakeAnthropic;
let responses: responsesFake.FakeResponses;
let loopwright: LoopwrightClient;
let bundleCopy: ReturnType<typeof copyExampleBundle>;
const processes: WorkerProcess[] = [];
/** The worker processes the crash tests kill, started with the file's other workers (their own task queues; idle until then). */
let anthropicVictim: WorkerProcess;
let responsesVictim: WorkerProcess;
/**
 * The crash tests' own model servers: those tests run concurrently with the others (most of their
 * time is spent waiting for the killed call's heartbeat timeout and retry), so nothing they
 * script or record is shared with, or reset by, another test.
 */
let crashAnthropic: FakeAnthropic;
let crashResponses: responsesFake.FakeResponses;
let crashChat: FakeOpenAI;
/**
 * A killed worker holds its sessions' next steps (and the queries that read their transcripts) for
 * its sticky timeout before another worker may take them; the victims' is short, as the 1 s of
 * startWorkerProcess would be most of what the crash tests wait for after the heartbeat timeout.
 */
const VICTIM_STICKY_TIMEOUT = '200ms';
beforeAll(async () => {
  [h, anthropic, responses, crashAnthropic, crashResponses, crashChat] = await Promise.all([
    startSessionHarness(),
    startFakeAnthropic({ keys: [FAKE_ANTHROPIC_KEY] }),
    responsesFake.startFakeResponses({ keys: [responsesFake.FAKE_RESPONSES_KEY] }),
    startFakeAnthropic({ keys: [KEY_A, KEY_B] }),
    responsesFake.startFakeResponses({ keys: [RESPONSES_KEY_A, RESPONSES_KEY_B] }),
    startFakeOpenAI(),
  ]);
  bundleCopy = copyExampleBundle();
  const victim = (env: Record<string, string>) =>
    startWorkerProcess({ TEMPORAL_ADDRESS: h.server.address, LOOPWRIGHT_STICKY_TIMEOUT: VICTIM_STICKY_TIMEOUT, ...env }).then((p) => {
      processes.push(p);
      return p;
    });
  const [worker] = await Promise.all([
    h.startWorker({
      activities: { model: { baseURL: h.fake.baseURL, apiKey: 'test-key', anthropicBaseURL: anthropic.baseURL, anthropicApiKey: FAKE_ANTHROPIC_KEY } },
    }),
    // The first worker of the Anthropic crash test: a process of its own, so it can be killed; its key tells its calls apart.
    victim({
      LOOPWRIGHT_TASK_QUEUE: 'providers-crash',
      OPENAI_BASE_URL: crashChat.baseURL,
      OPENAI_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: crashAnthropic.baseURL,
      ANTHROPIC_API_KEY: KEY_A,
    }).then((p) => (anthropicVictim = p)),
    // And that of the Responses crash test.
    victim({ LOOPWRIGHT_TASK_QUEUE: 'providers-crash-responses', OPENAI_BASE_URL: crashResponses.baseURL, OPENAI_API_KEY: RESPONSES_KEY_A }).then((p) => (responsesVictim = p)),
  ]);
  loopwright = worker.loopwright;
}, 120_000);

afterAll(async () => {
  await Promise.all(processes.map((p) => p.kill('SIGKILL')));
  await h?.close();
  await anthropic?.close();
  await responses?.close();
  await crashAnthropic?.close();
  await crashResponses?.close();
  await crashChat?.close();
  bundleCopy?.cleanup();
});

beforeEach(() => {
  h.fake.reset();
  anthropic.reset();
  responses?.reset();
});

function assistants(messages: ChatMessage[]): AssistantMessage[] {
  return messages.filter((m): m is AssistantMessage => m.role === 'assistant');
}

test('anthropic session: a read after thinking (the block sent back unchanged through the transcript), a write approved by a human, and a streamed reply seen in the live output while it is written', async () => {
  const saved = path.join(bundleCopy.bundle, 'docs', 'provider.md');
  anthropic.enqueue(
    useTools([{ name: 'read_file', input: { file_path: '{bundle-root}/config.yaml' } }], { text: 'Reading the config first.', thinking: 'The config names the output folder; read it first.' }),
    useTools([{ name: 'save_output', input: { file_path: '{output_folder}/provider.md', content: '# From Claude\n' } }]),
    say('Saved the notes to provider.md, as you asked.'),
  );
  const session = await loopwright.start({
    bundlePath: bundleCopy.bundle,
    agentId: 'facilitator',
    model: 'anthropic:claude-test-1',
    approval: { policy: 'writes' },
    modelSettings: { stream: true },
  });
  const turn = session.send('Read the config, then save the notes.');
  let state = await session.state();
  while (state.pendingApprovals.length === 0) {
    await new Promise((r) => setTimeout(r, 25));
    state = await session.state();
  }
  expect(state.pendingApprovals).toEqual([expect.objectContaining({ tool: 'save_output', preview: expect.stringContaining('# From Claude') as string })]);
  expect(fs.existsSync(saved)).toBe(false);
  const callId = state.pendingApprovals[0]!.callId;
  // The next call (after the write) streams its first words and waits until released.
  const release = anthropic.pauseStreams();
  await session.approve(callId);

  // The live output shows the words written so far while the call runs.
  let progress: ModelStreamProgress | undefined;
  while (!progress?.text) {
    await new Promise((r) => setTimeout(r, 25));
    progress = await streamProgress(session, h.client);
  }
  // Only the first piece was sent ("Saved"); the reporter may hold back its end while the reply is written.
  expect(['Save', 'Saved']).toContain(progress.text);
  expect(progress.done).not.toBe(true);
  release();
  const result = await turn;
  expect(result).toMatchObject({ success: true, response: 'Saved the notes to provider.md, as you asked.' });
  expect(fs.readFileSync(saved, 'utf8')).toBe('# From Claude\n');

  // What reached the server: the tool results as tool_result blocks answering each tool_use.
  expect(anthropic.requests.map((r) => [r.body.model, r.body.stream])).toEqual([
    ['claude-test-1', true],
    ['claude-test-1', true],
    ['claude-test-1', true],
  ]);
  // The thinking block went back unchanged (the fake checks its signature) through the session's transcript.
  const second = anthropic.requests[1]!.body.messages as { role: string; content: { type: string; thinking?: string }[] }[];
  expect(second[1]!.content[0]).toMatchObject({ type: 'thinking', thinking: 'The config names the output folder; read it first.' });
  const last = anthropic.requests[2]!.body.messages as { role: string; content: { type: string; tool_use_id?: string }[] }[];
  expect(last.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'tool_result', tool_use_id: callId }] });
  expect(h.fake.requests).toHaveLength(0);
  expect(result.usage.promptTokens).toBeGreaterThan(0);
  await session.end();
});

test('provider switch: a turn whose Anthropic model is gone falls back to a Chat Completions model with the whole transcript; the next turn is back on Anthropic with it', async () => {
  anthropic.enqueue(useTools([{ name: 'read_file', input: { file_path: '{bundle-root}/config.yaml' } }]), say('The config names the output folder.'));
  const session = await loopwright.start({
    bundlePath: bundleCopy.bundle,
    agentId: 'facilitator',
    model: 'anthropic:claude-test-1',
    fallbackModels: ['openai:loopwright-fake-model'],
    budget: { prices: { '*': { input: 3, output: 15 } } },
  });
  const first = await session.send('What does the config say?');
  expect(first).toMatchObject({ success: true, response: 'The config names the output folder.' });
  const firstCall = assistants(await session.turnMessages(first))[0]!.tool_calls![0]!;

  // Turn 2: the model is not found on Anthropic; the fallback answers through Chat Completions.
  anthropic.enqueue(apiError(404, 'not_found_error', 'model: claude-test-1'));
  h.fake.enqueue(text('Still here, through the other provider.'));
  const second = await session.send('Are you there?');
  expect(second).toMatchObject({ success: true, response: 'Still here, through the other provider.' });
  const chat = h.fake.requests[0]!.body!;
  expect(chat.model).toBe('loopwright-fake-model');
  expect(chat.messages!.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
  expect(chat.messages![2]).toMatchObject({ role: 'assistant', tool_calls: [{ id: firstCall.id, function: { name: 'read_file' } }] });
  expect(chat.messages![3]).toMatchObject({ role: 'tool', tool_call_id: firstCall.id });

  // Turn 3: the session's model again, on Anthropic, with both providers' replies in its transcript.
  anthropic.enqueue(say('Back on Messages.'));
  const third = await session.send('And now?');
  expect(third).toMatchObject({ success: true, response: 'Back on Messages.' });
  const messages = anthropic.requests.at(-1)!.body.messages as { role: string; content: { type: string; text?: string }[] }[];
  expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user']);
  expect(messages[5]!.content).toEqual([{ type: 'text', text: 'Still here, through the other provider.' }]);
  // Budgets count both providers' calls; Anthropic's cached prompt tokens at their prices (costs add up linearly).
  const state = await session.state();
  expect(state.usage.totalTokens).toBe(first.usage.totalTokens + second.usage.totalTokens + third.usage.totalTokens);
  expect(first.usage.cacheWriteTokens).toBeGreaterThan(0);
  expect(third.usage.cacheReadTokens).toBeGreaterThan(0);
  const price = { input: 3, output: 15 };
  expect(state.budget!.cost.used).toBeCloseTo(callCost(first.usage, price) + callCost(second.usage, price) + callCost(third.usage, price), 4);
  expect(state.budget!.cost.used).toBeLessThan(callCost(first.usage, price, false) + callCost(second.usage, price, false) + callCost(third.usage, price, false));
  await session.end();
});

test.concurrent('crash: a worker killed with SIGKILL during an Anthropic call is replaced; the call is made again and the turn completes once', async () => {
  const taskQueue = 'providers-crash';
  // The first worker is a process of its own (started before the file's tests), so it can be killed; its key tells its calls apart.
  const victim = anthropicVictim;
  // This test's own server (the test runs concurrently with the others).
  const anthropic = crashAnthropic;
  anthropic.enqueue({ kind: 'hang' }, say('Answered after the crash.'));
  const lw = new LoopwrightClient(h.client, taskQueue);
  const session = await lw.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator', model: 'anthropic:claude-test-1', timeouts: { modelHeartbeat: '2 seconds' } });
  const turn = session.send('Hello?');
  await anthropic.waitForRequests(1, 60_000);
  const keyOf = (i: number) => anthropic.requests[i]!.headers.authorization?.replace(/^Bearer /, '') ?? anthropic.requests[i]!.headers['x-api-key'];
  expect(keyOf(0)).toBe(KEY_A);
  await victim.kill('SIGKILL');
  // The replacement, in this process, with its own key.
  await h.startWorker({ taskQueue, activities: { model: { baseURL: crashChat.baseURL, apiKey: 'test-key', anthropicBaseURL: anthropic.baseURL, anthropicApiKey: KEY_B } } });

  const result = await turn;
  expect(result).toMatchObject({ success: true, response: 'Answered after the crash.' });
  expect(anthropic.requests).toHaveLength(2);
  expect(anthropic.requests[1]!.body.messages).toEqual(anthropic.requests[0]!.body.messages);
  expect(keyOf(1)).toBe(KEY_B);
  expect(assistants(await session.turnMessages(result))).toHaveLength(1);
  expect(victim.output()).not.toContain(KEY_A);
  await session.end();
});

test('responses session: a read after reasoning (the reasoning item sent back unchanged through the transcript) and a streamed reply seen in the live output while it is written', async () => {
  // A worker whose OpenAI server is the Responses fake.
  const { loopwright: lw } = await h.startWorker({ activities: { model: { baseURL: responses.baseURL, apiKey: responsesFake.FAKE_RESPONSES_KEY } } });
  responses.enqueue(
    responsesFake.callTools([{ name: 'read_file', input: { file_path: '{bundle-root}/config.yaml' } }], { reasoning: 'The config names the output folder; read it first.' }),
    responsesFake.say('The config names the output folder.'),
  );
  const session = await lw.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator', model: 'responses:gpt-test-1', modelSettings: { stream: true } });
  // The second call streams its first words and waits until released.
  const release = responses.pauseStreams();
  const turn = session.send('What does the config say?');
  let progress: ModelStreamProgress | undefined;
  while (!progress?.text) {
    await new Promise((r) => setTimeout(r, 25));
    progress = await streamProgress(session, h.client);
  }
  expect(['The ', 'The c']).toContain(progress.text);
  expect(progress.done).not.toBe(true);
  release();
  const result = await turn;
  expect(result).toMatchObject({ success: true, response: 'The config names the output folder.' });

  expect(responses.requests.map((r) => [r.body.model, r.body.stream, r.body.store])).toEqual([
    ['gpt-test-1', true, false],
    ['gpt-test-1', true, false],
  ]);
  // The reasoning item went back unchanged (the fake checks its encrypted content), before the call it led to and its output.
  const input = responses.requests[1]!.body.input as { type: string; call_id?: string }[];
  const call = assistants(await session.turnMessages(result))[0]!.tool_calls![0]!;
  expect(input.slice(-3)).toEqual([
    expect.objectContaining({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'The config names the output folder; read it first.' }] }),
    expect.objectContaining({ type: 'function_call', call_id: call.id, name: 'read_file' }),
    expect.objectContaining({ type: 'function_call_output', call_id: call.id }),
  ]);
  expect(h.fake.requests).toHaveLength(0);
  expect(result.usage.promptTokens).toBeGreaterThan(0);
  await session.end();
});

test('provider switch: a Responses session with an approved write falls back to an Anthropic model with the whole transcript when its model is gone; the next turn is back on Responses, budgets counting both', async () => {
  const saved = path.join(bundleCopy.bundle, 'docs', 'switch.md');
  const { loopwright: lw } = await h.startWorker({
    activities: { model: { baseURL: responses.baseURL, apiKey: responsesFake.FAKE_RESPONSES_KEY, anthropicBaseURL: anthropic.baseURL, anthropicApiKey: FAKE_ANTHROPIC_KEY } },
  });
  responses.enqueue(
    responsesFake.callTools([{ name: 'save_output', input: { file_path: '{output_folder}/switch.md', content: '# Switch\n' } }], { reasoning: 'Save the notes first.' }),
    responsesFake.say('Saved.'),
    responsesFake.apiError(404, 'invalid_request_error', 'The model `gpt-test-1` does not exist.', { code: 'model_not_found' }),
    responsesFake.say('Back on Responses.'),
  );
  anthropic.enqueue(say('Still here, through Messages.'));
  const session = await lw.start({
    bundlePath: bundleCopy.bundle,
    agentId: 'facilitator',
    model: 'responses:gpt-test-1',
    fallbackModels: ['anthropic:claude-test-1'],
    approval: { policy: 'writes' },
    budget: { prices: { '*': { input: 3, output: 15 } } },
  });
  const turn = session.send('Save the notes.');
  let state = await session.state();
  while (state.pendingApprovals.length === 0) {
    await new Promise((r) => setTimeout(r, 25));
    state = await session.state();
  }
  const callId = state.pendingApprovals[0]!.callId;
  await session.approve(callId);
  const first = await turn;
  expect(first).toMatchObject({ success: true, response: 'Saved.' });
  expect(fs.readFileSync(saved, 'utf8')).toBe('# Switch\n');

  // Turn 2: the model is not found on Responses; the fallback answers through Messages with the call and its result.
  const second = await session.send('Are you there?');
  expect(second).toMatchObject({ success: true, response: 'Still here, through Messages.' });
  const messages = anthropic.requests[0]!.body.messages as { role: string; content: { type: string; id?: string; tool_use_id?: string }[] }[];
  expect(anthropic.requests[0]!.body.model).toBe('claude-test-1');
  expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
  expect(messages[1]!.content).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'tool_use', id: callId })]));
  expect(messages[2]!.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: callId });
  // The tools went to both providers under the same names.
  const names = (tools: unknown) => (tools as { name: string }[]).map((t) => t.name).sort();
  expect(names(anthropic.requests[0]!.body.tools)).toEqual(names(responses.requests[0]!.body.tools));

  // Turn 3: the session's model again, on Responses, its reasoning item and Messages' reply in the input.
  const third = await session.send('And now?');
  expect(third).toMatchObject({ success: true, response: 'Back on Responses.' });
  const input = responses.requests.at(-1)!.body.input as { type?: string; role?: string; call_id?: string; content?: unknown }[];
  expect(input.map((i) => i.role ?? i.type)).toEqual(['user', 'reasoning', 'function_call', 'function_call_output', 'assistant', 'user', 'assistant', 'user']);
  expect(JSON.stringify(input[6]!.content)).toContain('Still here, through Messages.');
  expect(input[2]).toMatchObject({ call_id: callId, name: 'save_output' });

  state = await session.state();
  expect(state.usage.totalTokens).toBe(first.usage.totalTokens + second.usage.totalTokens + third.usage.totalTokens);
  const price = { input: 3, output: 15 };
  expect(state.budget!.cost.used).toBeCloseTo(callCost(first.usage, price) + callCost(second.usage, price) + callCost(third.usage, price), 4);
  expect(h.fake.requests).toHaveLength(0);
  await session.end();
});

test.concurrent('crash: a worker killed with SIGKILL during a Responses call is replaced; the call is made again and the turn completes once', async () => {
  const taskQueue = 'providers-crash-responses';
  const victim = responsesVictim;
  const responses = crashResponses;
  responses.enqueue({ kind: 'hang' }, responsesFake.say('Answered after the crash.'));
  const lw = new LoopwrightClient(h.client, taskQueue);
  const session = await lw.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator', model: 'responses:gpt-test-1', timeouts: { modelHeartbeat: '2 seconds' } });
  const turn = session.send('Hello?');
  await responses.waitForRequests(1, 60_000);
  const keyOf = (i: number) => responses.requests[i]!.headers.authorization?.replace(/^Bearer /, '');
  expect(keyOf(0)).toBe(RESPONSES_KEY_A);
  await victim.kill('SIGKILL');
  await h.startWorker({ taskQueue, activities: { model: { baseURL: responses.baseURL, apiKey: RESPONSES_KEY_B } } });

  const result = await turn;
  expect(result).toMatchObject({ success: true, response: 'Answered after the crash.' });
  expect(responses.requests).toHaveLength(2);
  expect(responses.requests[1]!.body.input).toEqual(responses.requests[0]!.body.input);
  expect(keyOf(1)).toBe(RESPONSES_KEY_B);
  expect(assistants(await session.turnMessages(result))).toHaveLength(1);
  expect(victim.output()).not.toContain(RESPONSES_KEY_A);
  await session.end();
});

test('compaction: one asked for on an Anthropic session says how many cached prompt tokens it cost, in its record and the session state', async () => {
  anthropic.enqueue(useTools([{ name: 'read_file', input: { file_path: '{bundle-root}/config.yaml' } }]), say('The config names the output folder.'), say('Noted.'));
  const session = await loopwright.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator', model: 'anthropic:claude-test-1', context: { keepRecent: 1 } });
  await session.send('What does the config say?');
  const second = await session.send('Thanks.');
  const cached = (second.usage.cacheReadTokens ?? 0) + (second.usage.cacheWriteTokens ?? 0);
  expect(cached).toBeGreaterThan(0);
  // Turn 1's result is stubbed: what the cache held past the prompt, the question and the call is lost.
  const record = await session.compact();
  expect(record).toMatchObject({ reason: 'requested', pruned: 1, summarized: 0 });
  expect(record!.cachedTokensLost).toBeGreaterThan(0);
  expect(record!.cachedTokensLost).toBeLessThan(cached);
  expect((await session.state()).context!.lastCompaction).toEqual(record);
  await session.end();
});
