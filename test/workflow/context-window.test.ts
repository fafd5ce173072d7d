/**
 * Real models on long sessions: the context window (compaction before a call, recovery after the
 * server refuses a prompt as too long), replies cut off at the output limit, odd usage numbers,
 * budgets and fallback models. Real dev server, real worker, the real openai client against the
 * fake model server, which enforces a window and an output limit the way real servers do.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ChatMessage } from '../../common/messages';
import type { SessionInput } from '../../common/session-types';
import type { SessionHandle } from '../../client/session-client';
import { fault, type FakeOpenAI, isSummaryRequest, type RecordedRequest, type Step, startFakeOpenAI, text, toolCalls } from '../../fake-model/server';
import { useSessionHarness } from '../support/session-harness';

jest.setTimeout(180_000);

const shared = useSessionHarness();

/** A text file of about `bytes` bytes inside the bundle copy; returns its tool path. */
function makeFile(name: string, bytes: number): string {
  const line = 'Requirements are gathered one question at a time, and every answer is kept.\n';
  fs.writeFileSync(path.join(shared.bundle, name), line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes));
  return `{bundle-root}/${name}`;
}

function start(extra: Partial<Parameters<typeof shared.loopwright.start>[0]> = {}): Promise<SessionHandle> {
  return shared.loopwright.start({ bundlePath: shared.bundle, agentId: 'facilitator', ...extra });
}

const lastUserText = (messages: ChatMessage[]): string => String([...messages].reverse().find((m) => m.role === 'user')?.content ?? '');

/**
 * Answers from the request alone: a summary request gets a short summary; `read F` asks for F once
 * and then answers; anything else is answered at once.
 */
function readingResponder(request: RecordedRequest): Step {
  if (isSummaryRequest(request)) return text('Summary: the user asked for several files to be read; each was read and acknowledged.');
  const messages = (request.body?.messages ?? []) as ChatMessage[];
  const last = messages[messages.length - 1]!;
  const match = /read (\S+)/.exec(lastUserText(messages));
  if (match && last.role === 'user') return toolCalls([{ name: 'read_file', arguments: { file_path: match[1] } }]);
  return text(`done: ${lastUserText(messages).slice(0, 40)}`);
}

test('a prompt the server refuses as too long is compacted and retried by itself', async () => {
  const { fake } = shared.h;
  fake.setResponder(readingResponder);
  const file = makeFile('ten-kb.md', 10_000);
  // The session believes in a large window; the server has 6k and says so in its 400.
  const session = await start({ context: { window: 100_000 } });
  for (let turn = 1; turn <= 3; turn++) expect((await session.send(`turn ${turn}: read ${file}`)).status).toBe('completed');
  fake.setLimits({ contextWindow: 6144, contextErrorStyle: 'llamacpp' });
  const result = await session.send('one more question');
  expect(result.status).toBe('completed');
  expect(result.compactions?.[0]?.reason).toBe('context_length');
  expect(fake.requests.some((r) => r.promptTokens > 6144)).toBe(true);
  const state = await session.state();
  expect(state.context).toMatchObject({ window: 6144, windowSource: 'server error' });
  await session.end();
});

test('a message that cannot fit even compacted fails its turn, and the next message works', async () => {
  const { fake } = shared.h;
  fake.setLimits({ contextWindow: 4096, contextErrorStyle: 'openai' });
  fake.setResponder(readingResponder);
  const session = await start({ context: { window: 4096 } });
  const huge = 'word '.repeat(8_000);
  const failed = await session.send(`please consider this: ${huge}`);
  expect(failed.status).toBe('failed');
  expect(failed.error).toMatch(/left out of what the model sees/);
  const next = await session.send('a short question');
  expect(next.status).toBe('completed');
  expect(next.response).toContain('a short question');
  await session.end();
});

test('the window is read from the server when the session names none', async () => {
  const { fake } = shared.h;
  fake.setLimits({ contextWindow: 12_000, llamaProps: true });
  fake.setResponder(readingResponder);
  const session = await start();
  await session.send('hello');
  const state = await session.state();
  expect(state.context?.window).toBe(12_000);
  expect(state.context?.windowSource).toMatch(/^server: /);
  await session.end();
});

test('a reply cut off at the output limit is continued and joined; with continuing off the turn says it was cut off', async () => {
  const { fake } = shared.h;
  fake.setLimits({ maxOutputTokens: 10 });
  const long = 'The requirements document has a scope section and a risks section. '.repeat(2);
  fake.enqueue(text(long), text(long.slice(40, 80)));
  const session = await start({ maxContinuations: 2 });
  const joined = await session.send('write it');
  expect(joined.status).toBe('completed');
  expect(joined.continuations).toBe(1);
  expect(joined.response).toBe(long.slice(0, 40) + long.slice(40, 80));
  // The continuation request carried the cut-off part and the request to go on.
  const continuation = fake.requests[fake.requests.length - 1]!.body!.messages as ChatMessage[];
  expect(continuation.slice(-2).map((m) => m.role)).toEqual(['assistant', 'user']);
  const messages = await session.messages(0);
  expect(messages.filter((m) => m.role === 'assistant')).toHaveLength(1);
  await session.end();

  fake.reset();
  fake.setLimits({ maxOutputTokens: 10 });
  fake.enqueue(text(long));
  const strict = await start({ maxContinuations: 0 });
  const cut = await strict.send('write it');
  expect(cut.status).toBe('truncated');
  expect(cut.success).toBe(false);
  expect(cut.response).toBe(long.slice(0, 40));
  expect(cut.error).toMatch(/cut off at the output limit/);
  // The Web UI's details say so too.
  const metadata = (await strict.workflow.query('__temporal_workflow_metadata')) as { currentDetails: string };
  expect(metadata.currentDetails).toMatch(/last turn 1: \*\*truncated\*\* · The reply was cut off/);
  await strict.end();
});

test('the output limit, temperature and extra body fields of the session reach the server', async () => {
  const { fake } = shared.h;
  fake.enqueue(text('ok'));
  const session = await start({ modelSettings: { maxOutputTokens: 321, temperature: 0.2, extraBody: { top_k: 20 } } });
  await session.send('hi');
  const body = fake.requests[0]!.body as Record<string, unknown>;
  expect(body).toMatchObject({ max_tokens: 321, temperature: 0.2, top_k: 20 });
  await session.end();
});

test.each([10.5, 1e19, 1e308, -5])('usage.prompt_tokens of %p never wedges the session', async (odd) => {
  const { fake } = shared.h;
  fake.enqueue(text('first', { usage: { prompt_tokens: odd, completion_tokens: 3, total_tokens: odd } }), text('second'));
  const session = await start({ searchAttributes: false });
  const first = await session.send('one');
  expect(first.status).toBe('completed');
  expect(Number.isInteger(first.usage.promptTokens)).toBe(true);
  expect(first.usage.promptTokens).toBeGreaterThanOrEqual(0);
  expect(first.usage.promptTokens).toBeLessThan(1e9);
  expect(first.modelWarnings?.join(' ')).toMatch(/prompt_tokens/);
  expect((await session.send('two')).status).toBe('completed');
  await session.end();
});

test('a turn budget warns the model and the user, then ends the turn with its own status and the partial result', async () => {
  const { fake } = shared.h;
  const file = makeFile('one-kb.md', 1_000);
  // A model that never stops reading: only the budget ends the turn.
  fake.setResponder((request) => (isSummaryRequest(request) ? text('summary') : toolCalls([{ name: 'read_file', arguments: { file_path: file } }], { content: 'still reading' })));
  const session = await start({ budget: { turnTokens: 12_000 }, maxIterations: 40 });
  const stopped = await session.send('read everything');
  expect(stopped.status).toBe('budget_exceeded');
  expect(stopped.success).toBe(false);
  expect(stopped.error).toMatch(/budget of 12000/);
  expect(stopped.response).toBe('still reading');
  expect(stopped.usage.totalTokens).toBeGreaterThanOrEqual(12_000);
  const state = await session.state();
  expect(state.budget?.turnTokens.limit).toBe(12_000);
  expect(state.budget?.warnings?.join(' ')).toMatch(/turn token budget: \d+% used/);
  // The model was told too, once.
  const last = fake.requests[fake.requests.length - 1]!.body!.messages as ChatMessage[];
  expect(last.filter((m) => typeof m.content === 'string' && m.content.includes('Budget warning'))).toHaveLength(1);
  await expect(session.budget({ turnTokens: -1 })).rejects.toThrow(/turnTokens/);
  const raised = await session.budget({ sessionTokens: 1_000 });
  expect(raised.sessionTokens.used).toBeGreaterThan(0);
  await session.end();
});

test('a session budget stops the next turn before it calls the model', async () => {
  const { fake } = shared.h;
  fake.setResponder(readingResponder);
  const session = await start({ budget: { sessionTokens: 1 } });
  const first = await session.send('hello');
  expect(first.status).toBe('completed');
  const before = fake.requests.length;
  const second = await session.send('again');
  expect(second.status).toBe('budget_exceeded');
  expect(fake.requests.length).toBe(before);
  await session.budget({ sessionTokens: 1_000_000 });
  expect((await session.send('and now')).status).toBe('completed');
  // The list shows the budgets as the last turn left them (visibility catches up within moments).
  let listed: Awaited<ReturnType<typeof shared.loopwright.list>>[number] | undefined;
  // The first turn's memo already had a limit (1): wait for the one the raised budget left.
  for (let i = 0; i < 50 && listed?.budget?.sessionTokens.limit !== 1_000_001; i++) {
    listed = (await shared.loopwright.list({ limit: 100 })).find((s) => s.workflowId === session.workflowId);
    if (listed?.budget?.sessionTokens.limit !== 1_000_001) await new Promise((r) => setTimeout(r, 200));
  }
  expect(listed?.budget?.sessionTokens.limit).toBe(1_000_001);
  await session.end();
});

test('a cost budget prices each call by the model the session asked for, and stops the session once reached', async () => {
  const { fake } = shared.h;
  fake.setResponder(readingResponder);
  // 1,000 per million tokens: a call of some thousand tokens costs a few units.
  const session = await start({ model: 'priced-model', budget: { sessionCost: 1, prices: { 'priced-model': { input: 1000, output: 1000 } } } });
  const first = await session.send('hello');
  expect(first.status).toBe('completed');
  expect(first.cost).toBeCloseTo((first.usage.promptTokens + first.usage.completionTokens) / 1000, 6);
  const state = await session.state();
  expect(state.budget?.cost.used).toBeGreaterThan(1);
  expect(state.budget?.cost.limit).toBe(1);
  const second = await session.send('again');
  expect(second.status).toBe('budget_exceeded');
  expect(second.error).toMatch(/cost/);
  // A cost budget without prices could never be kept: the session refuses it at once.
  const unpriced = await start({ budget: { sessionCost: 1 } });
  const failure = (await unpriced.result().then(
    () => undefined,
    (err: unknown) => err,
  )) as (Error & { cause?: Error }) | undefined;
  expect(failure?.cause?.message).toMatch(/budget\.sessionCost: a cost budget needs budget\.prices/);
  await session.end();
});

test('a model the server does not know falls back to the next one', async () => {
  const { fake } = shared.h;
  fake.enqueue(fault(404, { code: 'model_not_found', message: 'The model `missing-model` does not exist' }), text('from the fallback'));
  const session = await start({ model: 'missing-model', fallbackModels: ['other-model'] });
  const result = await session.send('hi');
  expect(result.status).toBe('completed');
  expect(fake.requests.map((r) => r.body?.model)).toEqual(['missing-model', 'other-model']);
  await session.end();
});

test('compact on demand prunes and summarises; a refused compaction says why', async () => {
  const { fake } = shared.h;
  fake.setResponder(readingResponder);
  const file = makeFile('five-kb.md', 5_000);
  const session = await start({ context: { window: 64_000, keepRecent: 1 } });
  for (let turn = 1; turn <= 4; turn++) await session.send(`turn ${turn}: read ${file}`);
  const record = await session.compact();
  expect(record).not.toBeNull();
  expect(record!.reason).toBe('requested');
  expect(record!.pruned).toBeGreaterThanOrEqual(3);
  expect(record!.afterTokens).toBeLessThan(record!.beforeTokens);
  const after = await session.send('what did you read?');
  // What the model saw: pruned stubs for old results, and the latest exchange whole.
  const sent = fake.requests[fake.requests.length - 1]!.body!.messages as ChatMessage[];
  expect(sent.some((m) => m.role === 'tool' && m.content.includes('"pruned":true'))).toBe(true);
  expect(after.status).toBe('completed');
  // The record is untouched.
  expect((await session.messages(0)).filter((m) => m.role === 'tool').every((m) => m.content.length > 5_000)).toBe(true);
  await session.end();
});

// The same session at 100 turns (and the window's figures over them) is the bench's `context` part;
// here 30 turns, with runs that continue as new at 400 KB of history instead of 4 MB, cover the
// same ground: compactions and summaries, several runs, a carried gap, a branch into the gap.
const TURNS = 30;

//
// The longest test of the file, so it runs beside the others (Jest starts it first and waits for it
// last), on a fake model and a worker of its own: the others change the shared fake's window.
test.concurrent('a 30-turn session that reads 40 KB files over an 8k-token window and continues as new completes every turn, with the transcript intact', async () => {
  const fake = await startFakeOpenAI({ responder: readingResponder, contextWindow: 8192, contextErrorStyle: 'llamacpp' });
  try {
    await thirtyTurns(fake);
  } finally {
    await fake.close();
  }
});

async function thirtyTurns(fake: FakeOpenAI): Promise<void> {
  const { loopwright } = await shared.h.startWorker({ activities: { model: { baseURL: fake.baseURL, apiKey: 'test-key' } } });
  const file = makeFile('forty-kb.md', 40_000);
  const session = await loopwright.start({ bundlePath: shared.bundle, agentId: 'facilitator', context: { window: 8192 }, continueAsNew: { maxHistoryBytes: 400_000 } });
  const statuses: string[] = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    const result = await session.send(`turn ${turn}: read ${file}`);
    statuses.push(result.status === 'completed' ? result.status : `${turn}: ${result.status} ${result.error ?? ''}`);
  }
  expect(statuses.filter((s) => s !== 'completed')).toEqual([]);
  // No request the server saw was over its window (a 400 would have been retried by compaction, and counted here).
  const tooLong = fake.requests.filter((r) => r.promptTokens > 8192);
  expect(tooLong).toHaveLength(0);
  const state = await session.state();
  expect(state.context?.window).toBe(8192);
  expect(state.context!.compactions).toBeGreaterThan(0);
  expect(state.context!.promptTokens).toBeLessThanOrEqual(8192);
  // The record is whole: every turn's user message, call, 40 KB result and answer.
  const messages = await session.messages(0);
  expect(messages.filter((m) => m.role === 'user')).toHaveLength(TURNS);
  const results = messages.filter((m) => m.role === 'tool');
  expect(results).toHaveLength(TURNS);
  expect(results.every((m) => m.content.length > 40_000)).toBe(true);
  // Summaries were asked for, and what the model saw stayed small.
  expect(fake.requests.some((r) => isSummaryRequest(r))).toBe(true);
  // The session continued as new carrying only what the view needs: the later runs hold a gap
  // whose messages the earlier runs answer for (the transcript above was read across them).
  expect(state.run).toBeGreaterThan(2);
  const started = (await session.workflow.fetchHistory()).events![0]!.workflowExecutionStartedEventAttributes!;
  const input = shared.h.client.options.loadedDataConverter.payloadConverter.fromPayload(started.input!.payloads![0]!) as SessionInput;
  const carried = input.continued!.transcript;
  expect(carried.gap!.to).toBeGreaterThan(carried.gap!.from);
  expect(carried.bytes).toBeLessThan(Buffer.byteLength(JSON.stringify(messages)) / 4);
  // A branch at a turn inside that gap reads its messages from the earlier runs.
  const branch = await loopwright.branch(session.workflowId, 3);
  expect(await branch.messages(0)).toEqual(messages.slice(0, (await session.turnEnd(3)).ended.result.messageRange.to));
  await branch.end();
  await session.end();
}
