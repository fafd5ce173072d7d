/**
 * One model step (workflows/turn/model-calls.ts `ModelCaller.step`) against fake activity stubs:
 * which activity it calls and with what (the whole transcript to `callModel` for histories recorded
 * before `callModelV2`; else the transcript by count and hash, the delta since the last reply when
 * small, the view once compacted, the session's settings, the tool definitions once then by key,
 * inline reads), the Web UI summary of each call, compaction before a call that would not fit (and
 * before a turn's first call once the prompt cache expired, when the view is close to needing it), one
 * forced compaction and retry after a context-length refusal (and no second), the fallback models
 * on failures a retry cannot mend, and a reply cut off at the output limit continued and joined,
 * up to `maxContinuations`.
 */
jest.mock('@temporalio/workflow', () => jest.requireActual('../../support/workflow-fakes').fakeWorkflowModule());

import type { ModelRefCallInput } from '../../../common/activity-types';
import { TOOLS_UNKNOWN } from '../../../common/activity-types';
import { MODEL_CONTEXT_LENGTH_EXCEEDED, MODEL_NOT_FOUND, MODEL_PERMISSION_DENIED, MODEL_SERVER_ERROR } from '../../../common/failure-types';
import type { ModelCallInput } from '../../../common/model-call';
import type { ToolDefinition } from '../../../common/messages';
import type { RuntimeContext } from '../../../common/runtime-context';
import type { CompactionRecord, ContextSettings } from '../../../common/session-types';
import type { HashedTranscript } from '../../../common/transcript';
import { Budgets } from '../../../workflows/context/budgets';
import { CACHE_LIFETIME_MS, ContextManager } from '../../../workflows/context/context-manager';
import type { WorkerCopies } from '../../../workflows/turn/inline-reads';
import { isContextLengthFailure, type ManagedModel, ModelCaller } from '../../../workflows/turn/model-calls';
import { activityFailure, failureDetails, FakeActivities, modelReply, readingSession, system, toolCall, transcriptOf, usage, user, workflowFake } from '../../support/workflow-fakes';

beforeEach(() => workflowFake.reset());

type TurnInput = ConstructorParameters<typeof ModelCaller>[0];

const CONTEXT: RuntimeContext = { bundleRoot: '/b', coreRoot: '/b', projectRoot: '/p', variables: {}, readRoots: ['/b'], writeRoots: ['/p'], maxReadBytes: 1000 };
const TOOLS: ToolDefinition[] = [{ type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object' } } }];
const CONTINUE_NOTICE = '[Loopwright] Your reply was cut off at the output limit. Continue exactly where it stopped, without repeating anything already written.';

/** The fields of a turn's input the model step reads. */
function turnInput(fake: FakeActivities, transcript: HashedTranscript, extra: Partial<TurnInput> = {}): TurnInput {
  return { activities: fake.stubs, turn: 3, transcript, tools: TOOLS, context: CONTEXT, model: 'main-model', transcriptRef: true, ...extra } as TurnInput;
}

/** Context management as a session with these settings has it; `compactions` collects what `onCompaction` is told. */
function managedModel(context: ContextSettings, extra: Partial<ManagedModel> = {}): ManagedModel & { compacted: CompactionRecord[] } {
  const compacted: CompactionRecord[] = [];
  return {
    context: new ContextManager(context, { maxOutputTokens: 1000 }, 1),
    budgets: new Budgets({}, () => 0),
    settings: { maxOutputTokens: 1000, temperature: 0.2 },
    fallbackModels: [],
    maxContinuations: 2,
    onCompaction: (record) => void compacted.push(record),
    compacted,
    ...extra,
  };
}

/** Each call's usage and model, as `step` reports them. */
function usageLog(): { seen: [number, string | undefined][]; onUsage: Parameters<ModelCaller['step']>[2] } {
  const seen: [number, string | undefined][] = [];
  return { seen, onUsage: (u, model) => void seen.push([u.totalTokens, model]) };
}

describe('ModelCaller: the call', () => {
  test('model step: a session recorded before callModelV2 sends the whole transcript to callModel', async () => {
    const transcript = transcriptOf(system('sys'), user('hello'));
    const fake = new FakeActivities().script('callModel', modelReply('Hi.', { usage: usage(20, 5), model: 'served-model' }));
    const caller = new ModelCaller(turnInput(fake, transcript, { transcriptRef: false }), undefined);
    const { seen, onUsage } = usageLog();
    const step = await caller.step(undefined, 1, onUsage);
    expect(fake.inputsOf<ModelCallInput>('callModel')).toEqual([{ messages: transcript.slice(), tools: TOOLS, model: 'main-model' }]);
    expect(fake.callsOf('callModelV2')).toEqual([]);
    expect(step).toMatchObject({ message: { role: 'assistant', content: 'Hi.' }, continuations: 0, compactions: [], joined: false });
    expect(seen).toEqual([[25, 'served-model']]);
  });

  test('model step: callModelV2 names the transcript by count and hash, with the messages since the last reply when small', async () => {
    const transcript = readingSession(1, 100);
    transcript.push(user('and now?'));
    const fake = new FakeActivities().respond('callModelV2', () => modelReply('ok'));
    const caller = new ModelCaller(turnInput(fake, transcript), undefined);
    await caller.step(5, 2, () => undefined);
    const [input] = fake.inputsOf<ModelRefCallInput>('callModelV2');
    expect(input).toEqual({
      transcript: { workflowId: 'wf-unit', runId: 'run-unit', count: 6, hash: transcript.hashAt(6) },
      delta: { from: 5, messages: [transcript.messages[5]] },
      tools: TOOLS,
      model: 'main-model',
    });
    expect(fake.calls[0]!.summary).toBe('turn 3 · iteration 2 · callModel main-model');

    // More than 4 KB since the last reply: the worker reads them from the transcript instead.
    transcript.push(user('x'.repeat(5000)));
    caller.afterInline = 'read_file {bundle-root}/config.yaml';
    await caller.step(5, 3, () => undefined);
    expect(fake.inputsOf<ModelRefCallInput>('callModelV2')[1]!.delta).toBeUndefined();
    expect(fake.calls[1]!.summary).toBe('turn 3 · iteration 3 · callModel main-model · after inline read_file {bundle-root}/config.yaml');
  });

  test('model step: a run continued with a gap names the gap; a session without a model says "default model"', async () => {
    const transcript = transcriptOf();
    transcript.startWithGap([system('sys')], 40, 'f'.repeat(32));
    transcript.push(user('hello'));
    const fake = new FakeActivities().script('callModelV2', modelReply('ok'));
    await new ModelCaller(turnInput(fake, transcript, { model: undefined }), undefined).step(undefined, 1, () => undefined);
    const [input] = fake.inputsOf<ModelRefCallInput>('callModelV2');
    expect(input!.transcript).toEqual({ workflowId: 'wf-unit', runId: 'run-unit', count: 41, hash: transcript.hashAt(41), gap: { from: 1, to: 40, hash: 'f'.repeat(32) } });
    expect(fake.calls[0]!.summary).toBe('turn 3 · iteration 1 · callModel default model');
  });

  test('model step: a managed session sends its settings, no view while nothing is compacted, and calibrates from the usage', async () => {
    const transcript = readingSession(2, 100);
    const managed = managedModel({ window: 100_000 });
    const fake = new FakeActivities().script('callModelV2', modelReply('ok', { usage: usage(600, 10), estimatedPromptTokens: 400 }));
    const { seen, onUsage } = usageLog();
    await new ModelCaller(turnInput(fake, transcript), managed).step(undefined, 1, onUsage);
    const [input] = fake.inputsOf<ModelRefCallInput>('callModelV2');
    expect(input!.settings).toEqual({ maxOutputTokens: 1000, temperature: 0.2 });
    expect('view' in input!).toBe(false);
    expect(managed.context.calibration).toBe(1.5);
    expect(seen).toEqual([[610, 'fake-model']]);
  });

  test('model step: tool definitions travel once per run, then by key; a worker that lacks them gets the same call again with them', async () => {
    const transcript = transcriptOf(system('sys'), user('hello'));
    const copies: WorkerCopies = {};
    const fake = new FakeActivities().script(
      'callModelV2',
      modelReply('one'),
      modelReply('two'),
      activityFailure('callModelV2', TOOLS_UNKNOWN, 'no tools under this key', failureDetails({ status: null })),
      modelReply('three'),
    );
    const caller = new ModelCaller(turnInput(fake, transcript, { copies }), undefined, ['read_file']);
    await caller.step(undefined, 1, () => undefined);
    await caller.step(undefined, 2, () => undefined);
    const third = await caller.step(undefined, 3, () => undefined);
    expect(third.message.content).toBe('three');
    const inputs = fake.inputsOf<ModelRefCallInput>('callModelV2');
    const key = inputs[0]!.toolsKey;
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    expect(inputs.map((i) => [i.tools === TOOLS, i.toolsKey])).toEqual([
      [true, key],
      [false, key],
      [false, key],
      [true, key],
    ]);
    // Inline reads: the runtime context goes with the first call only.
    expect(inputs.map((i) => i.inline)).toEqual([{ tools: ['read_file'], context: CONTEXT }, { tools: ['read_file'] }, { tools: ['read_file'] }, { tools: ['read_file'] }]);
    // The repeated call is the same call: same summary.
    expect(fake.calls.map((c) => c.summary).slice(2)).toEqual(['turn 3 · iteration 3 · callModel main-model', 'turn 3 · iteration 3 · callModel main-model']);
  });
});

describe('ModelCaller: compaction and refusals', () => {
  test('model step: a call that would pass the threshold compacts first, sends the view, and says so in its summary', async () => {
    const transcript = readingSession(6, 4000);
    const managed = managedModel({ window: 8000 });
    const fake = new FakeActivities().script('callModelV2', modelReply('ok'));
    const step = await new ModelCaller(turnInput(fake, transcript, { tools: [] }), managed).step(undefined, 1, () => undefined);
    expect(step.compactions).toHaveLength(1);
    expect(step.compactions[0]).toMatchObject({ reason: 'threshold', turn: 3, pruned: 5, summarized: 0 });
    expect(managed.compacted).toEqual(step.compactions);
    const [input] = fake.inputsOf<ModelRefCallInput>('callModelV2');
    expect(input!.view).toEqual({ head: 1, from: 1, pruneBefore: 20 });
    expect(fake.calls.map((c) => c.name)).toEqual(['callModelV2']);
    expect(fake.calls[0]!.summary).toBe(`turn 3 · iteration 1 · callModel main-model · context compacted: 6377 → ${step.compactions[0]!.afterTokens} tokens, 5 tool results pruned`);
  });

  test("model step: a turn's first call after the prompt cache expired compacts a view close to the threshold first; a later iteration does not", async () => {
    let now = 5_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    try {
      // 5,316 tokens: under the threshold (5,600), within a tenth of the window of it.
      const transcript = readingSession(5, 4000);
      const managed = managedModel({ window: 8000 });
      const cached = { ...usage(5316, 20), cacheReadTokens: 5000, cacheWriteTokens: 316 };
      managed.context.observe(cached, 5316);
      now += CACHE_LIFETIME_MS;
      const later = new FakeActivities().script('callModelV2', modelReply('ok'));
      const laterStep = await new ModelCaller(turnInput(later, transcript, { tools: [] }), managed).step(undefined, 2, () => undefined);
      expect(laterStep.compactions).toEqual([]);

      managed.context.observe(cached, 5316);
      now += CACHE_LIFETIME_MS;
      const fake = new FakeActivities().script('callModelV2', modelReply('ok'));
      const step = await new ModelCaller(turnInput(fake, transcript, { tools: [] }), managed).step(undefined, 1, () => undefined);
      expect(step.compactions).toHaveLength(1);
      expect(step.compactions[0]).toMatchObject({ reason: 'cache_cold', turn: 3, beforeTokens: 5316, pruned: 4, cachedTokensLost: 0 });
      expect(managed.compacted).toEqual(step.compactions);
      expect(fake.inputsOf<ModelRefCallInput>('callModelV2')[0]!.view).toEqual({ head: 1, from: 1, pruneBefore: 16 });
    } finally {
      jest.restoreAllMocks();
    }
  });

  test('model step: a context-length refusal teaches the window, compacts by force and asks once more', async () => {
    const transcript = readingSession(6, 4000);
    // The session believes in a large window; the server has 6,144 and says so.
    const managed = managedModel({ window: 100_000 });
    const refusal = activityFailure('callModelV2', MODEL_CONTEXT_LENGTH_EXCEEDED, 'too long for the model', failureDetails({ contextWindow: 6144, promptTokens: 7000 }));
    const fake = new FakeActivities().script('callModelV2', refusal, modelReply('fits now'));
    const caller = new ModelCaller(turnInput(fake, transcript, { tools: [] }), managed);
    const step = await caller.step(undefined, 4, () => undefined);
    expect(step.message.content).toBe('fits now');
    expect(managed.context.window).toBe(6144);
    expect(managed.context.windowSource).toBe('server error');
    expect(step.compactions.map((c) => c.reason)).toEqual(['context_length']);
    const inputs = fake.inputsOf<ModelRefCallInput>('callModelV2');
    expect(inputs).toHaveLength(2);
    expect(inputs[0]!.view).toBeUndefined();
    expect(inputs[1]!.view).toEqual({ head: 1, from: 1, pruneBefore: 20 });
  });

  test("model step: a second refusal in the same step is the step's failure", async () => {
    const transcript = readingSession(6, 4000);
    const managed = managedModel({ window: 100_000 });
    const refusal = () => activityFailure('callModelV2', MODEL_CONTEXT_LENGTH_EXCEEDED, 'too long for the model', failureDetails({ contextWindow: 6144 }));
    const fake = new FakeActivities().script('callModelV2', refusal(), refusal(), modelReply('never asked'));
    const failure = await new ModelCaller(turnInput(fake, transcript, { tools: [] }), managed).step(undefined, 1, () => undefined).catch((e: unknown) => e);
    expect(isContextLengthFailure(failure)).toBe(true);
    expect(fake.callsOf('callModelV2')).toHaveLength(2);
    expect(fake.unused()).toEqual({ callModelV2: 1 });
  });
});

describe('ModelCaller: fallback models', () => {
  test('model step: a model the server does not know falls back to the next one, which later steps keep', async () => {
    const transcript = transcriptOf(system('sys'), user('hi'));
    const managed = managedModel({ window: 100_000 }, { fallbackModels: ['other-model', 'third-model'] });
    const fake = new FakeActivities().script(
      'callModelV2',
      activityFailure('callModelV2', MODEL_NOT_FOUND, 'The model `main-model` does not exist'),
      modelReply('from the fallback'),
      modelReply('again'),
    );
    const caller = new ModelCaller(turnInput(fake, transcript), managed);
    expect((await caller.step(undefined, 1, () => undefined)).message.content).toBe('from the fallback');
    expect(caller.model).toBe('other-model');
    await caller.step(undefined, 2, () => undefined);
    expect(fake.inputsOf<ModelRefCallInput>('callModelV2').map((i) => i.model)).toEqual(['main-model', 'other-model', 'other-model']);
    expect(fake.calls.map((c) => c.summary)).toEqual(['turn 3 · iteration 1 · callModel main-model', 'turn 3 · iteration 1 · callModel other-model', 'turn 3 · iteration 2 · callModel other-model']);
  });

  test('model step: the fallbacks run out, and failures a retry can mend never fall back', async () => {
    const transcript = transcriptOf(system('sys'), user('hi'));
    const fake = new FakeActivities().script(
      'callModelV2',
      activityFailure('callModelV2', MODEL_NOT_FOUND, 'no main-model'),
      activityFailure('callModelV2', MODEL_PERMISSION_DENIED, 'no access to other-model'),
    );
    const managed = managedModel({ window: 100_000 }, { fallbackModels: ['other-model'] });
    const last = await new ModelCaller(turnInput(fake, transcript), managed)
      .step(undefined, 1, () => undefined)
      .then(
        () => undefined,
        (e: unknown) => e as Error & { cause: Error },
      );
    expect(last?.cause.message).toBe('no access to other-model');
    expect(fake.inputsOf<ModelRefCallInput>('callModelV2').map((i) => i.model)).toEqual(['main-model', 'other-model']);

    const serverError = new FakeActivities().script('callModelV2', activityFailure('callModelV2', MODEL_SERVER_ERROR, 'upstream down'), modelReply('never'));
    const failure = await new ModelCaller(turnInput(serverError, transcript), managedModel({ window: 100_000 }, { fallbackModels: ['other-model'] }))
      .step(undefined, 1, () => undefined)
      .catch((e: unknown) => e as Error);
    expect((failure as Error & { cause: Error }).cause.message).toBe('upstream down');
    expect(serverError.callsOf('callModelV2')).toHaveLength(1);
  });
});

describe('ModelCaller: replies cut off at the output limit', () => {
  test('model step: a cut-off reply is continued with the part and a request to go on, and joined', async () => {
    const transcript = transcriptOf(system('sys'), user('write it'));
    const managed = managedModel({ window: 100_000 });
    const fake = new FakeActivities().script(
      'callModelV2',
      modelReply('The requirements document has a scope', { finishReason: 'length', usage: usage(50, 10), warnings: ['odd usage'] }),
      modelReply(' section and a risks section.', { finishReason: 'stop', usage: usage(70, 8) }),
    );
    const { seen, onUsage } = usageLog();
    const step = await new ModelCaller(turnInput(fake, transcript, { copies: {} }), managed, ['read_file']).step(2, 1, onUsage);
    expect(step).toMatchObject({
      message: { role: 'assistant', content: 'The requirements document has a scope section and a risks section.' },
      finishReason: 'stop',
      usage: { promptTokens: 120, completionTokens: 18, totalTokens: 138 },
      warnings: ['odd usage'],
      continuations: 1,
      joined: true,
    });
    expect(seen).toEqual([
      [60, 'fake-model'],
      [78, 'fake-model'],
    ]);
    const [first, second] = fake.inputsOf<ModelRefCallInput>('callModelV2');
    expect(first!.extra).toBeUndefined();
    expect(second!.extra).toEqual([
      { role: 'assistant', content: 'The requirements document has a scope' },
      { role: 'user', content: CONTINUE_NOTICE },
    ]);
    // The continuation is not the transcript's next message: no delta, no inline reads.
    expect(second!.delta).toBeUndefined();
    expect(second!.inline).toBeUndefined();
    expect(first!.inline).toEqual({ tools: ['read_file'], context: CONTEXT });
    expect(fake.calls[1]!.summary).toBe('turn 3 · iteration 1 · callModel main-model · continuing a cut-off reply (1/2)');
  });

  test('model step: continuing stops at maxContinuations and keeps the cut-off finish; with 0 nothing is continued', async () => {
    const transcript = transcriptOf(system('sys'), user('write it'));
    const cut = (text: string) => modelReply(text, { finishReason: 'length' });
    const fake = new FakeActivities().script('callModelV2', cut('a'), cut('b'), cut('c'));
    const step = await new ModelCaller(turnInput(fake, transcript), managedModel({ window: 100_000 })).step(undefined, 1, () => undefined);
    expect(step).toMatchObject({ message: { content: 'abc' }, finishReason: 'length', continuations: 2, joined: true });

    const strict = new FakeActivities().script('callModelV2', cut('a'));
    const once = await new ModelCaller(turnInput(strict, transcript), managedModel({ window: 100_000 }, { maxContinuations: 0 })).step(undefined, 1, () => undefined);
    expect(once).toMatchObject({ message: { content: 'a' }, finishReason: 'length', continuations: 0, joined: false });
    expect(strict.callsOf('callModelV2')).toHaveLength(1);
  });

  test('model step: a reply cut off in its tool calls is not continued; a continuation that calls tools keeps them', async () => {
    const transcript = transcriptOf(system('sys'), user('go'));
    const call = toolCall('c1', 'read_file', { file_path: 'a.md' });
    const withCalls = new FakeActivities().script('callModelV2', modelReply(null, { toolCalls: [call], finishReason: 'length' }));
    const step = await new ModelCaller(turnInput(withCalls, transcript), managedModel({ window: 100_000 })).step(undefined, 1, () => undefined);
    expect(step.continuations).toBe(0);
    expect(withCalls.callsOf('callModelV2')).toHaveLength(1);

    const later = new FakeActivities().script('callModelV2', modelReply('Reading ', { finishReason: 'length' }), modelReply('a.md now.', { toolCalls: [call] }));
    const joined = await new ModelCaller(turnInput(later, transcript), managedModel({ window: 100_000 })).step(undefined, 1, () => undefined);
    expect(joined.message).toEqual({ role: 'assistant', content: 'Reading a.md now.', tool_calls: [call] });
  });

  test('model step: an unmanaged session never continues, compacts or falls back', async () => {
    const transcript = transcriptOf(system('sys'), user('write it'));
    const fake = new FakeActivities().script('callModelV2', modelReply('cut', { finishReason: 'length', usage: null }));
    const { seen, onUsage } = usageLog();
    const step = await new ModelCaller(turnInput(fake, transcript), undefined).step(undefined, 1, onUsage);
    expect(step).toMatchObject({ finishReason: 'length', continuations: 0, joined: false });
    expect(seen).toEqual([]);
    const failing = new FakeActivities().script('callModelV2', activityFailure('callModelV2', MODEL_NOT_FOUND, 'no such model'));
    await expect(new ModelCaller(turnInput(failing, transcript), undefined).step(undefined, 1, () => undefined)).rejects.toThrow('Activity task failed');
    expect(failing.callsOf('callModelV2')).toHaveLength(1);
  });
});
