/**
 * The model's view and its compaction (workflows/context/context-manager.ts) without a server:
 * where the threshold lies for a window, an output reserve and `compactAt`; when a call needs a
 * compaction (and when a view whose kept part alone is over the threshold does not); pruning old
 * tool results to stubs outside the `keepRecent` latest exchanges, skill activations kept whole;
 * summaries through the (fake) `summarizeContext` activity, with the input it gets, in rounds, the
 * skill instructions carried in the summary's text, and a failed summary leaving the pruned view;
 * a result too large for the window cut to its beginning; omitted ranges; what the model then sees
 * (`viewMessages` over the view); calibration from recorded usage and from a refusal; the `state`
 * figures; the cached prompt tokens a compaction costs (what the last call's usage says the provider
 * held in its cache, less the prefix the compacted view keeps), behind its patch, and its sum in
 * the turn's span; compacting early, at a turn's start, while the provider's cache has expired
 * (cold: a call reported cache figures and the last call was at least the cache's lifetime ago in
 * workflow time), at no cached tokens, behind its own patch; and the round trip of `carry` into the
 * next run.
 */
jest.mock('@temporalio/workflow', () => jest.requireActual('../../support/workflow-fakes').fakeWorkflowModule());

import type { ChatMessage, ToolMessage } from '../../../common/messages';
import { SKILL_INSTRUCTIONS_NOTE, viewMessages } from '../../../common/model-view';
import type { CompactionRecord, ContextSettings } from '../../../common/session-types';
import { estimateMessageTokens, estimatePromptTokens } from '../../../common/token-estimate';
import type { HashedTranscript } from '../../../common/transcript';
import type { SummarizeInput } from '../../../common/model-call';
import { CACHE_COLD_PATCH, CACHE_LIFETIME_MS, COMPACTION_CACHE_PATCH, ContextManager, type CompactionRequest } from '../../../workflows/context/context-manager';
import { turnSpanEnd } from '../../../workflows/session/session-outcome';
import type { TurnOutcome } from '../../../workflows/turn/turn';
import { assistant, FakeActivities, readingSession, readingTurn, system, toolCall, transcriptOf, usage, user, workflowFake } from '../../support/workflow-fakes';

beforeEach(() => workflowFake.reset());

/** A window of 8,000 tokens with 1,000 held back for the reply: room 7,000, threshold 5,600 at compactAt 0.8. */
const WINDOW = { window: 8000 };
const MODEL = { maxOutputTokens: 1000 };

function manager(settings: ContextSettings = {}, head = 1): ContextManager {
  return new ContextManager({ ...WINDOW, ...settings }, MODEL, head);
}

/** A user message whose estimate is exactly `tokens` (4 per message, 1 per 4 bytes). */
const userOfTokens = (tokens: number, mark = 'u'): ChatMessage => user(mark + 'x'.repeat(4 * (tokens - 4) - mark.length));

/** A transcript of `turns` turns whose user messages are long text (nothing to prune) and answers short. */
function talkingSession(turns: number, bytes = 2000): HashedTranscript {
  const messages: ChatMessage[] = [system('sys')];
  for (let i = 1; i <= turns; i++) messages.push(user(`q${i} ${'w'.repeat(bytes)}`), assistant(`a${i}`));
  return transcriptOf(...messages);
}

function request(cm: ContextManager, transcript: HashedTranscript, fake: FakeActivities, extra: Partial<CompactionRequest> = {}): CompactionRequest {
  return { reason: 'threshold', turn: 7, transcript, tools: [], activities: fake.stubs, ...extra };
}

const summaryAnswer = (summary: string, tokens = 500) => ({ summary, usage: usage(tokens - 40, 40), durationMs: 2 });

describe('ContextManager: thresholds and estimates', () => {
  test("context: the reply's reserve is the output limit, but never more than a quarter of the window; the threshold is compactAt of the rest", () => {
    expect(manager().outputReserve()).toBe(1000);
    expect(manager().threshold()).toBe(5600);
    expect(manager({ compactAt: 0.5 }).threshold()).toBe(3500);
    // The default output limit (8,192) is more than a quarter of 8,000.
    const defaults = new ContextManager(WINDOW, {}, 1);
    expect(defaults.outputReserve()).toBe(2000);
    expect(defaults.threshold()).toBe(4800);
  });

  test("context: the estimate is the project's estimate of the whole view while nothing is compacted, tools included", () => {
    const transcript = readingSession(3, 1000);
    const tools = [{ type: 'function' as const, function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object' } } }];
    const cm = manager();
    expect(cm.estimate(transcript, tools)).toBe(estimatePromptTokens(transcript.messages, tools));
    expect(cm.estimate(transcript, [])).toBe(estimatePromptTokens(transcript.messages));
    expect(cm.viewForCall()).toBeUndefined();
  });

  test('context: a call needs compaction once its estimate passes the threshold, and not before', () => {
    const cm = manager();
    const transcript = transcriptOf(system('sys'));
    const base = cm.estimate(transcript, []);
    transcript.push(userOfTokens(5600 - base));
    expect(cm.estimate(transcript, [])).toBe(5600);
    expect(cm.needsCompaction(transcript, [])).toBe(false);
    transcript.push(assistant(''));
    expect(cm.needsCompaction(transcript, [])).toBe(true);
  });

  test('context: calibration from recorded usage scales the estimate, within 0.25 and 4; a call without usage teaches nothing', () => {
    const transcript = readingSession(2, 1000);
    const cm = manager();
    const raw = cm.estimate(transcript, []);
    cm.observe(usage(3 * raw, 10), raw);
    expect(cm.calibration).toBe(3);
    expect(cm.estimate(transcript, [])).toBe(3 * raw);
    cm.observe(null, raw);
    cm.observe(usage(100, 10), 0);
    expect(cm.calibration).toBe(3);
    cm.observe(usage(100 * raw, 10), raw);
    expect(cm.calibration).toBe(4);
    cm.observe(usage(1, 10), raw);
    expect(cm.calibration).toBe(0.25);
  });

  test("context: a refusal teaches a smaller window and the server's count; without a count the estimate grows by a quarter", () => {
    const cm = manager();
    cm.learnFromRefusal({ contextWindow: 6144, promptTokens: 9000 }, 6000);
    expect(cm.window).toBe(6144);
    expect(cm.windowSource).toBe('server error');
    expect(cm.calibration).toBe(1.5);
    // A larger window than the one known is not believed; no count: 1.5 × 1.25.
    cm.learnFromRefusal({ contextWindow: 100_000, promptTokens: null }, 6000);
    expect(cm.window).toBe(6144);
    expect(cm.calibration).toBe(1.875);
    cm.learnFromRefusal(undefined, 0);
    cm.learnFromRefusal(undefined, 0);
    cm.learnFromRefusal(undefined, 0);
    expect(cm.calibration).toBe(3.662109375);
    cm.learnFromRefusal(undefined, 0);
    expect(cm.calibration).toBe(4);
  });

  test("context: the window is the session's, else unknown until the server says", () => {
    const named = new ContextManager({ window: 9000 }, {}, 1);
    expect([named.window, named.windowSource, named.windowUnknown]).toEqual([9000, 'session', false]);
    const unnamed = new ContextManager({}, {}, 1);
    expect([unnamed.window, unnamed.windowSource, unnamed.windowUnknown]).toEqual([32_768, 'default', true]);
    unnamed.setWindow(12_000, 'server: llama.cpp /props n_ctx');
    expect([unnamed.window, unnamed.windowSource, unnamed.windowUnknown]).toEqual([12_000, 'server: llama.cpp /props n_ctx', false]);
  });
});

describe('ContextManager: compaction', () => {
  test('context: pruning stubs every tool result before the keepRecent latest exchanges; the model sees stubs, the recent result whole', async () => {
    const transcript = readingSession(6, 4000);
    const cm = manager();
    const fake = new FakeActivities();
    const before = cm.estimate(transcript, []);
    expect(before).toBe(6377);
    expect(cm.needsCompaction(transcript, [])).toBe(true);
    const record = await cm.compact(request(cm, transcript, fake));
    // keepRecent 3: the last three model messages are turn 6's two and turn 5's answer (index 20).
    expect(cm.view).toEqual({ head: 1, from: 1, pruneBefore: 20 });
    expect(record).toEqual({ turn: 7, reason: 'threshold', beforeTokens: 6377, afterTokens: cm.estimate(transcript, []), pruned: 5, summarized: 0, summaryCallTokens: 0, durationMs: 0 });
    expect(record!.afterTokens).toBeLessThan(1700);
    // Pruning was enough: no summary was asked for.
    expect(fake.calls).toEqual([]);

    const seen = viewMessages(transcript.messages, cm.viewForCall());
    expect(seen).toHaveLength(25);
    const results = seen.filter((m): m is ToolMessage => m.role === 'tool');
    const bytes = Buffer.byteLength((transcript.messages[3] as ToolMessage).content);
    expect(JSON.parse(results[0]!.content)).toEqual({
      success: true,
      pruned: true,
      note: `This result of read_file {bundle-root}/file-1.md (${bytes} bytes) was removed from the model's context to save room; it was already answered upon. Call read_file again if you need it.`,
    });
    expect(results.slice(0, 5).every((m) => m.content.includes('"pruned":true'))).toBe(true);
    expect(results[5]).toBe(transcript.messages[23]);
    // The transcript itself is untouched.
    expect(transcript.messages.filter((m) => m.role === 'tool').every((m) => m.content.length > 4000)).toBe(true);

    expect(cm.state(transcript)).toEqual({ window: 8000, windowSource: 'session', promptTokens: record!.afterTokens, viewMessages: 25, compactions: 1, lastCompaction: record });
    expect(workflowFake.metric('loopwright_compactions')).toEqual([{ kind: 'counter', name: 'loopwright_compactions', value: 1, attributes: { reason: 'threshold', summarized: 'false' } }]);
    expect(workflowFake.logs).toEqual([{ level: 'info', message: 'Context compacted', attrs: { ...record } }]);
  });

  test('context: keepRecent sets how many latest model messages keep their results', async () => {
    const transcript = readingSession(6, 4000);
    const cm = manager({ keepRecent: 1 });
    const record = await cm.compact(request(cm, transcript, new FakeActivities()));
    // Only the very last model message is kept: every result is before it.
    expect(cm.view.pruneBefore).toBe(24);
    expect(record!.pruned).toBe(6);
    // Six: back to turn 4's call (index 14); the results of turns 1-3 go.
    const wide = manager({ keepRecent: 6 });
    const wideRecord = await wide.compact(request(wide, transcript, new FakeActivities()));
    expect(wide.view.pruneBefore).toBe(14);
    expect(wideRecord!.pruned).toBe(3);
  });

  test("context: a skill's activation is kept whole when pruning reaches it, and not counted as pruned", async () => {
    const activation = JSON.stringify({ success: true, content: '<skill_content name="notes">Write notes.</skill_content>', skill: { name: 'notes' } });
    const transcript = transcriptOf(
      system('sys'),
      user('activate'),
      assistant(null, [toolCall('s1', 'activate_skill', { name: 'notes' })]),
      { role: 'tool', tool_call_id: 's1', content: activation },
      assistant('active'),
    );
    for (let t = 1; t <= 5; t++) transcript.push(...readingTurn(t, 4000));
    const cm = manager();
    const record = await cm.compact(request(cm, transcript, new FakeActivities()));
    expect(cm.view.keep).toEqual([3]);
    expect(record!.pruned).toBe(4);
    const seen = viewMessages(transcript.messages, cm.view);
    expect(seen[3]).toBe(transcript.messages[3]);
  });

  test('context: when pruning is not enough, the oldest exchanges are summarised by the summarizeContext activity', async () => {
    const transcript = talkingSession(12);
    const cm = manager();
    const fake = new FakeActivities().script('summarizeContext', summaryAnswer('The user asked twelve long questions.'));
    const counted: number[] = [];
    expect(cm.needsCompaction(transcript, [])).toBe(true);
    const record = await cm.compact(request(cm, transcript, fake, { model: 'main-model', afterLastReply: 24, onUsage: (u) => counted.push(u.totalTokens) }));

    // One call, named for the Web UI, with the transcript by reference and the part to summarise.
    expect(fake.calls.map((c) => c.summary)).toEqual(['turn 7 · context summary of messages 1-18']);
    const [input] = fake.inputsOf<SummarizeInput>('summarizeContext');
    expect(input).toEqual({
      transcript: { workflowId: 'wf-unit', runId: 'run-unit', count: 25, hash: transcript.hashAt(25) },
      delta: { from: 24, messages: [transcript.messages[24]] },
      view: { head: 1, from: 1, pruneBefore: 20 },
      upTo: 19,
      model: 'main-model',
      // At most a tenth of the window (the default is 1,024).
      maxSummaryTokens: 800,
    });
    expect(record).toMatchObject({ pruned: 0, summarized: 18, summaryCallTokens: 500 });
    expect(counted).toEqual([500]);
    expect(cm.view).toEqual({ head: 1, from: 19, pruneBefore: 20, summary: 'The user asked twelve long questions.' });

    // The model sees the prompt, the summary in place of messages 1-18, then the rest as it was.
    const seen = viewMessages(transcript.messages, cm.viewForCall());
    expect(seen).toHaveLength(1 + 1 + 6);
    expect(seen[1]).toEqual({
      role: 'user',
      content:
        "[Loopwright] Summary of the earlier conversation (transcript messages 1-18, compacted to fit the model's context window; the full record is kept):\n\nThe user asked twelve long questions.",
    });
    expect(seen.slice(2)).toEqual(transcript.messages.slice(19));
    expect(cm.state(transcript)).toMatchObject({ viewMessages: 8, compactions: 1 });
    expect(workflowFake.metric('loopwright_compactions')[0]!.attributes).toEqual({ reason: 'threshold', summarized: 'true' });
  });

  test("context: the summary's length is the session's summaryTokens, at most a tenth of the window, at least 64; a large delta is left to the worker", async () => {
    const fake = new FakeActivities().respond('summarizeContext', () => summaryAnswer('S'));
    const small = manager({ summaryTokens: 300 });
    const transcript = talkingSession(12);
    await small.compact(request(small, transcript, fake, { afterLastReply: 1 }));
    const tiny = new ContextManager({ window: 600, keepRecent: 1 }, { maxOutputTokens: 100 }, 1);
    await tiny.compact(request(tiny, talkingSession(4, 600), fake));
    const inputs = fake.inputsOf<SummarizeInput>('summarizeContext');
    // (The tiny window's part takes two rounds.)
    expect(inputs.map((i) => i.maxSummaryTokens)).toEqual([300, 64, 64]);
    // The messages since the last reply are over 4 KB: the worker reads them from the transcript.
    expect(inputs[0]!.delta).toBeUndefined();
  });

  test("context: a part too large for the summariser's own window is summarised in rounds, each given the summary so far", async () => {
    const transcript = talkingSession(30);
    const cm = manager({ keepRecent: 1 });
    const fake = new FakeActivities().script('summarizeContext', summaryAnswer('first part'), summaryAnswer('first and second parts'), summaryAnswer('all but the last'));
    const record = await cm.compact(request(cm, transcript, fake));
    const inputs = fake.inputsOf<SummarizeInput>('summarizeContext');
    expect(inputs.map((i) => [i.view.from, i.upTo, i.view.summary])).toEqual([
      [1, 19, undefined],
      [19, 37, 'first part'],
      [37, 55, 'first and second parts'],
    ]);
    expect(record).toMatchObject({ summarized: 54, summaryCallTokens: 1500 });
    expect(cm.view).toMatchObject({ from: 55, summary: 'all but the last' });
    expect(record!.afterTokens).toBeLessThanOrEqual(3500);
  });

  test("context: skill instructions in a summarised part go on in the summary's text", async () => {
    const activation = JSON.stringify({ success: true, content: '<skill_content name="tides">1. Read the tide table.</skill_content>', skill: { name: 'tides' } });
    const transcript = transcriptOf(
      system('sys'),
      user('activate'),
      assistant(null, [toolCall('s1', 'activate_skill', { name: 'tides' })]),
      { role: 'tool', tool_call_id: 's1', content: activation },
      assistant('active'),
    );
    for (let i = 1; i <= 12; i++) transcript.push(user(`q${i} ${'w'.repeat(2000)}`), assistant(`a${i}`));
    const cm = manager();
    const fake = new FakeActivities().script('summarizeContext', summaryAnswer('Earlier: a skill was activated and questions asked.'));
    await cm.compact(request(cm, transcript, fake));
    expect(cm.view.summary).toBe(`Earlier: a skill was activated and questions asked.\n\n${SKILL_INSTRUCTIONS_NOTE}\n\n<skill_content name="tides">1. Read the tide table.</skill_content>`);
    // The activation itself is summarised away: no index of it is kept.
    expect(cm.view.keep).toBeUndefined();
    expect(cm.view.from).toBe(23);
  });

  test('context: with summaries off, or a summary that fails, the pruned view goes on', async () => {
    const transcript = talkingSession(12);
    for (let t = 1; t <= 2; t++) transcript.push(...readingTurn(t, 4000));
    const off = manager({ summarize: false, keepRecent: 2 });
    const offRecord = await off.compact(request(off, transcript, new FakeActivities()));
    expect(offRecord).toMatchObject({ pruned: 1, summarized: 0 });

    const failing = manager({ keepRecent: 2 });
    const fake = new FakeActivities().script('summarizeContext', new Error("the summariser's window is too small"));
    const record = await failing.compact(request(failing, transcript, fake));
    expect(fake.callsOf('summarizeContext')).toHaveLength(1);
    expect(record).toMatchObject({ pruned: 1, summarized: 0, summaryCallTokens: 0 });
    expect(failing.view).toEqual(off.view);
    expect(workflowFake.logs.find((l) => l.level === 'warn')).toEqual({
      level: 'warn',
      message: 'Context summary failed; going on with the pruned view',
      attrs: { error: "the summariser's window is too small" },
    });
  });

  test('context: a part too small to be worth a summary call is not summarised', async () => {
    // Over the threshold only because of the kept exchanges (two long answers): the part before them is small.
    const long = (mark: string): ChatMessage => assistant(mark + 'x'.repeat(4 * 2996 - mark.length));
    const transcript = transcriptOf(system('sys'), user('hello'), assistant('hi'), user('go'), long('a'), user('more'), long('b'));
    expect(manager().needsCompaction(transcript, [])).toBe(true);
    const cm = manager({ keepRecent: 2 });
    const fake = new FakeActivities();
    expect(await cm.compact(request(cm, transcript, fake))).toBeUndefined();
    expect(fake.calls).toEqual([]);
    expect(cm.compactions).toBe(0);
  });

  test('context: a single result too large for the room is cut to its beginning, even a recent one', async () => {
    const transcript = readingSession(1, 40_000);
    const cm = manager();
    const record = await cm.compact(request(cm, transcript, new FakeActivities()));
    // A quarter of the room (7,000 / 4 tokens) in bytes.
    expect(cm.view).toMatchObject({ prunedAlso: [3], oversizeBytes: 7000 });
    expect(record).toMatchObject({ pruned: 1, summarized: 0 });
    const cut = viewMessages(transcript.messages, cm.view)[3] as ToolMessage;
    const whole = (transcript.messages[3] as ToolMessage).content;
    expect(cut.content.startsWith(whole.slice(0, 7000))).toBe(true);
    expect(cut.content).toContain(`[Loopwright] This result was cut to its first 7000 of ${Buffer.byteLength(whole)} bytes`);
    expect(record!.afterTokens).toBeLessThan(7000);
  });

  test('context: a forced compaction aims under the threshold when that is lower than half the room', async () => {
    const transcript = talkingSession(6);
    const settings = { compactAt: 0.3, keepRecent: 1 };
    const plain = manager(settings);
    const fake = new FakeActivities().respond('summarizeContext', () => summaryAnswer('S'));
    // About 3,000 tokens: under half the room (3,500), over the threshold (2,100).
    expect(plain.estimate(transcript, [])).toBeGreaterThan(2100);
    expect(plain.estimate(transcript, [])).toBeLessThan(3500);
    await plain.compact(request(plain, transcript, fake));
    expect(fake.calls).toHaveLength(0);
    const forced = manager(settings);
    const record = await forced.compact(request(forced, transcript, fake, { force: true, reason: 'context_length' }));
    expect(fake.calls).toHaveLength(1);
    expect(record).toMatchObject({ reason: 'context_length', summarized: 11 });
    expect(record!.afterTokens).toBeLessThanOrEqual(2100);
  });

  test('context: nothing to prune or summarise is no compaction', async () => {
    const transcript = readingSession(1, 100);
    const cm = manager();
    expect(await cm.compact(request(cm, transcript, new FakeActivities(), { reason: 'requested' }))).toBeUndefined();
    expect(cm.compactions).toBe(0);
    expect(cm.lastCompaction).toBeUndefined();
    expect(workflowFake.metrics).toEqual([]);
  });

  test('context: a view whose kept part alone is over the threshold is compacted again only once it grew by a tenth of the window, or no longer fits', async () => {
    const transcript = transcriptOf(system('sys'), userOfTokens(2900, 'a'), assistant('ok'), userOfTokens(2900, 'b'), assistant('ok'));
    const cm = manager({ keepRecent: 2, summarize: false });
    expect(cm.needsCompaction(transcript, [])).toBe(true);
    expect(await cm.compact(request(cm, transcript, new FakeActivities()))).toBeUndefined();
    const left = cm.estimate(transcript, []);
    expect(left).toBeGreaterThan(cm.threshold());
    expect(cm.needsCompaction(transcript, [])).toBe(false);
    transcript.push(userOfTokens(799));
    expect(cm.needsCompaction(transcript, [])).toBe(false);
    transcript.push(assistant(''));
    // 799 + 4 tokens: a tenth of the window (800) more than the compaction left.
    expect(cm.estimate(transcript, [])).toBe(left + 803);
    expect(cm.needsCompaction(transcript, [])).toBe(true);
    // No longer fitting the room (7,000) counts whatever the growth.
    const full = manager({ keepRecent: 2, summarize: false });
    const big = transcriptOf(system('sys'), userOfTokens(3400, 'a'), assistant('ok'), userOfTokens(3400, 'b'), assistant('ok'));
    await full.compact(request(full, big, new FakeActivities()));
    const fullLeft = full.estimate(big, []);
    big.push(userOfTokens(300));
    expect(full.estimate(big, [])).toBeGreaterThan(7000);
    expect(full.estimate(big, [])).toBeLessThan(fullLeft + 800);
    expect(full.needsCompaction(big, [])).toBe(true);
  });

  test('context: describe says what a compaction did, in thousands past 10,000', () => {
    const record: CompactionRecord = { turn: 1, reason: 'threshold', beforeTokens: 12_345, afterTokens: 3000, pruned: 4, summarized: 6, summaryCallTokens: 0, durationMs: 0 };
    expect(ContextManager.describe(record)).toBe('context compacted: 12k → 3000 tokens, 4 tool results pruned, 6 messages summarised');
    expect(ContextManager.describe({ ...record, summarized: 0 })).toBe('context compacted: 12k → 3000 tokens, 4 tool results pruned');
  });
});

describe('ContextManager: the cache a compaction costs', () => {
  /** What a call over the whole view reports: the server counts as we estimate (calibration 1), `cached` of it from the cache. */
  const cachedCall = (cm: ContextManager, transcript: HashedTranscript, cached: { read: number; write: number }) => {
    const estimate = cm.estimate(transcript, []);
    cm.observe({ ...usage(estimate, 20), cacheReadTokens: cached.read, cacheWriteTokens: cached.write }, estimate);
    return estimate;
  };

  test('context: a pruning compaction costs the cached tokens past the first result it stubs; the prompt and the messages before it stay cached', async () => {
    const transcript = readingSession(6, 4000);
    const cm = manager();
    const sent = cachedCall(cm, transcript, { read: 5000, write: 1377 });
    expect(sent).toBe(6377);
    const record = await cm.compact(request(cm, transcript, new FakeActivities()));
    expect(record!.pruned).toBe(5);
    // The first result stubbed is message 3 (turn 1's read): the system prompt, turn 1's question and its call stay the same.
    const kept = transcript.messages.slice(0, 3).reduce((sum, m) => sum + estimateMessageTokens(m), 0);
    expect(record!.cachedTokensLost).toBe(6377 - kept);
    expect(workflowFake.patchesAsked).toEqual([COMPACTION_CACHE_PATCH]);
    expect(ContextManager.describe(record!)).toBe(`context compacted: 6377 → ${record!.afterTokens} tokens, 5 tool results pruned, ${6377 - kept} cached tokens lost`);
    expect(cm.state(transcript).lastCompaction).toBe(record);

    // Two more turns and a compaction before the next call: the cache still holds only what the first left, so nothing is counted twice.
    transcript.push(...readingTurn(7, 4000), ...readingTurn(8, 4000));
    const again = await cm.compact(request(cm, transcript, new FakeActivities(), { force: true }));
    expect(again!.pruned).toBeGreaterThan(0);
    expect(again!.cachedTokensLost).toBe(0);
  });

  test('context: a summary keeps only the system prompt cached; estimates follow the calibration', async () => {
    const transcript = talkingSession(12);
    const cm = manager();
    const estimate = cm.estimate(transcript, []);
    // The server counts twice our estimate; the provider held 9,000 tokens of the prompt in its cache.
    cm.observe({ ...usage(estimate * 2, 20), cacheReadTokens: 8000, cacheWriteTokens: 1000 }, estimate);
    const fake = new FakeActivities().respond('summarizeContext', () => summaryAnswer('The user asked long questions.'));
    const record = await cm.compact(request(cm, transcript, fake, { force: true }));
    expect(record!.summarized).toBeGreaterThan(0);
    const prompt = estimateMessageTokens(transcript.messages[0]!);
    expect(record!.cachedTokensLost).toBe(9000 - 2 * prompt);
  });

  test("context: the turn's span adds up the cached tokens its compactions cost, and names none when no record counted them", () => {
    const record: CompactionRecord = { turn: 3, reason: 'threshold', beforeTokens: 9000, afterTokens: 3000, pruned: 2, summarized: 0, summaryCallTokens: 0, durationMs: 0 };
    const outcome = {
      status: 'completed',
      iterations: 2,
      toolCalls: 1,
      usage: usage(100, 10),
      compactions: [
        { ...record, cachedTokensLost: 4000 },
        { ...record, cachedTokensLost: 500 },
      ],
    } as TurnOutcome;
    expect(turnSpanEnd(outcome).attributes).toMatchObject({ 'loopwright.compactions': 2, 'loopwright.compaction.cached_tokens_lost': 4500 });
    expect(turnSpanEnd({ ...outcome, compactions: [record] }).attributes).not.toHaveProperty('loopwright.compaction.cached_tokens_lost');
  });

  test('context: without cache figures in the last call, or in a history recorded before they were counted, the record has no cache cost', async () => {
    const transcript = readingSession(6, 4000);
    const plain = manager();
    plain.observe(usage(6377, 20), 6377);
    const record = await plain.compact(request(plain, transcript, new FakeActivities()));
    expect(record).toBeDefined();
    expect(record).not.toHaveProperty('cachedTokensLost');
    expect(workflowFake.patchesAsked).toEqual([]);
    expect(ContextManager.describe(record!)).not.toContain('cached');

    workflowFake.unpatched.add(COMPACTION_CACHE_PATCH);
    const old = manager();
    cachedCall(old, transcript, { read: 6000, write: 0 });
    const oldRecord = await old.compact(request(old, transcript, new FakeActivities()));
    expect(oldRecord).not.toHaveProperty('cachedTokensLost');
    expect(workflowFake.patchesAsked).toEqual([COMPACTION_CACHE_PATCH]);
  });
});

describe('ContextManager: compaction while the cache is cold', () => {
  /** Workflow time, moved by the tests. */
  let now = 1_000_000;
  beforeEach(() => {
    now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
  });
  afterEach(() => jest.restoreAllMocks());

  /** A call over the whole view at the current time, the server counting as we estimate; `cached` of it in the provider's cache. */
  const callAt = (cm: ContextManager, transcript: HashedTranscript, cached?: { read: number; write: number }) => {
    const estimate = cm.estimate(transcript, []);
    cm.observe({ ...usage(estimate, 20), ...(cached ? { cacheReadTokens: cached.read, cacheWriteTokens: cached.write } : {}) }, estimate);
    return estimate;
  };

  test('context: a view past the threshold less a tenth of the window compacts once the cache has expired, and costs no cached tokens', async () => {
    // 5,316 tokens: under the threshold (5,600), past 5,600 - 800.
    const transcript = readingSession(5, 4000);
    const cm = manager();
    expect(callAt(cm, transcript, { read: 4000, write: 1316 })).toBe(5316);
    expect(cm.needsCompaction(transcript, [])).toBe(false);
    now += CACHE_LIFETIME_MS - 1;
    expect(cm.cacheCold()).toBe(false);
    expect(cm.compactsWhileCold(transcript, [])).toBe(false);
    expect(workflowFake.patchesAsked).toEqual([]);
    now += 1;
    expect(cm.cacheCold()).toBe(true);
    expect(cm.compactsWhileCold(transcript, [])).toBe(true);
    expect(workflowFake.patchesAsked).toEqual([CACHE_COLD_PATCH]);
    const record = await cm.compact(request(cm, transcript, new FakeActivities(), { reason: 'cache_cold' }));
    expect(record).toMatchObject({ reason: 'cache_cold', beforeTokens: 5316, pruned: 4, summarized: 0, cachedTokensLost: 0 });
    expect(record!.afterTokens).toBeLessThan(3500);
    expect(ContextManager.describe(record!)).toBe(`context compacted: 5316 → ${record!.afterTokens} tokens, 4 tool results pruned, 0 cached tokens lost`);

    // The same compaction while the cache is warm throws the cache away past the first result it stubs.
    workflowFake.reset();
    now = 1_000_000;
    const warm = manager();
    callAt(warm, transcript, { read: 4000, write: 1316 });
    now += CACHE_LIFETIME_MS - 1;
    const warmRecord = await warm.compact(request(warm, transcript, new FakeActivities()));
    const kept = transcript.messages.slice(0, 3).reduce((sum, m) => sum + estimateMessageTokens(m), 0);
    expect(warmRecord!.cachedTokensLost).toBe(5316 - kept);
    expect(workflowFake.patchesAsked).toEqual([COMPACTION_CACHE_PATCH]);
  });

  test('context: a warm cache, a view far from the threshold, or one that has not grown since the last compaction does not compact early', async () => {
    const near = readingSession(5, 4000);
    const warm = manager();
    callAt(warm, near, { read: 5000, write: 317 });
    now += 60_000;
    expect(warm.compactsWhileCold(near, [])).toBe(false);

    // 4,255 tokens: not past 5,600 - 800, however cold the cache.
    const far = readingSession(4, 4000);
    const small = manager();
    expect(callAt(small, far, { read: 4000, write: 255 })).toBe(4255);
    now += 3 * CACHE_LIFETIME_MS;
    expect(small.cacheCold()).toBe(true);
    expect(small.compactsWhileCold(far, [])).toBe(false);
    expect(workflowFake.patchesAsked).toEqual([]);

    // A view whose kept part is near the threshold is not compacted again until it grew by a tenth of the window.
    const big = readingSession(5, 4000);
    const kept = manager({ keepRecent: 10 });
    callAt(kept, big, { read: 5000, write: 317 });
    expect(await kept.compact(request(kept, big, new FakeActivities()))).toBeUndefined();
    now += CACHE_LIFETIME_MS;
    expect(kept.compactsWhileCold(big, [])).toBe(false);
    expect(workflowFake.patchesAsked).toEqual([]);
  });

  test('context: without cache figures from a call of this run, or in a history recorded before the rule, the cache is never taken as cold', async () => {
    const transcript = readingSession(5, 4000);
    const plain = manager();
    callAt(plain, transcript);
    now += 10 * CACHE_LIFETIME_MS;
    expect(plain.cacheCold()).toBe(false);
    expect(plain.compactsWhileCold(transcript, [])).toBe(false);
    expect(new ContextManager(WINDOW, MODEL, 1).cacheCold()).toBe(false);
    expect(workflowFake.patchesAsked).toEqual([]);

    workflowFake.unpatched.add(CACHE_COLD_PATCH);
    const old = manager();
    callAt(old, transcript, { read: 4000, write: 1316 });
    now += CACHE_LIFETIME_MS;
    expect(old.compactsWhileCold(transcript, [])).toBe(false);
    // A compaction there counts the cache as before.
    const record = await old.compact(request(old, transcript, new FakeActivities()));
    expect(record!.cachedTokensLost).toBeGreaterThan(0);
    expect(workflowFake.patchesAsked).toEqual([CACHE_COLD_PATCH, CACHE_COLD_PATCH, COMPACTION_CACHE_PATCH]);
  });
});

describe('ContextManager: omitted turns and the next run', () => {
  test('context: an omitted range leaves the view, its figures and the exchanges kept', async () => {
    const transcript = readingSession(3, 100);
    const cm = manager({ keepRecent: 1 });
    expect(cm.state(transcript).viewMessages).toBe(13);
    cm.omit(9, 13);
    cm.omit(5, 5);
    expect(cm.view.omit).toEqual([{ from: 9, to: 13 }]);
    expect(cm.viewForCall()).toEqual({ head: 1, from: 1, pruneBefore: 0, omit: [{ from: 9, to: 13 }] });
    const seen = viewMessages(transcript.messages, cm.viewForCall());
    expect(seen).toEqual(transcript.messages.slice(0, 9));
    expect(cm.state(transcript).viewMessages).toBe(9);
    expect(cm.estimate(transcript, [])).toBe(estimatePromptTokens(transcript.messages.slice(0, 9)));
    // The exchanges kept are the latest ones not omitted: with turn 3 left out, keepRecent 2 keeps
    // turn 2's call and answer (from index 6), so only turn 1's result is pruned.
    transcript.push(user('next question'));
    const two = manager({ keepRecent: 2 });
    two.omit(9, 13);
    const record = await two.compact(request(two, transcript, new FakeActivities()));
    expect(two.view.pruneBefore).toBe(6);
    expect(record!.pruned).toBe(1);
  });

  test('context: carry into the next run keeps the view, the window, the compactions and the calibration', async () => {
    const transcript = readingSession(6, 4000);
    const cm = new ContextManager({}, MODEL, 1);
    cm.setWindow(8000, 'server: /v1/models context_length');
    cm.observe(usage(3000, 10), 2000);
    await cm.compact(request(cm, transcript, new FakeActivities()));
    const carried = cm.carry();
    expect(carried).toEqual({ view: cm.view, window: 8000, windowSource: 'server: /v1/models context_length', compactions: 1, lastCompaction: cm.lastCompaction, calibration: 1.5 });
    const next = new ContextManager({}, MODEL, 99, JSON.parse(JSON.stringify(carried)) as typeof carried);
    expect(next.windowUnknown).toBe(false);
    expect(next.view).toEqual(cm.view);
    expect(next.estimate(transcript, [])).toBe(cm.estimate(transcript, []));
    expect(next.state(transcript)).toEqual(cm.state(transcript));
  });
});
