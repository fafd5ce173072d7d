/**
 * One turn of the loop (workflows/turn/turn.ts `runTurn`) against fake activity stubs, without a
 * server: a reply's tools run and their results join the transcript in call order; the turn ends
 * at the answer, at the iteration limit (a reply saying so in an interactive session), at a
 * question, when the same call keeps failing, when interrupted, or hands over to the next run;
 * the limit warning comes once; approvals decide whether a call runs; and features take part only
 * through their extensions (a command instead of the model, a call an extension runs, the tool
 * results, a verdict at the answer, fields in the result), in the order they are listed.
 */
jest.mock('@temporalio/workflow', () => jest.requireActual('../../support/workflow-fakes').fakeWorkflowModule());

import type { ChatMessage, ToolCall, ToolMessage } from '../../../common/messages';
import type { RuntimeContext } from '../../../common/runtime-context';
import type { PendingTurn } from '../../../common/session-types';
import type { HashedTranscript } from '../../../common/transcript';
import { TOOL_DEFINITIONS } from '../../../common/tool-definitions';
import type { TurnExtension } from '../../../workflows/turn/extensions';
import { isPaused, runTurn, type TurnInput, type TurnOutcome, type TurnStart } from '../../../workflows/turn/turn';
import { TurnLimits } from '../../../workflows/turn/turn-limits';
import { activityCancelled, FakeActivities, modelReply, system, toolCall, transcriptOf, usage, workflowFake } from '../../support/workflow-fakes';

beforeEach(() => workflowFake.reset());

const CONTEXT: RuntimeContext = { bundleRoot: '/b', coreRoot: '/b', projectRoot: '/p', variables: {}, readRoots: ['/b'], writeRoots: ['/p'], maxReadBytes: 1000 };
const RULES = { warnAt: 0.8, maxRepeatedFailures: 3, interactive: true, loopBreakers: true };

interface Setup {
  fake: FakeActivities;
  transcript: HashedTranscript;
  limits: TurnLimits;
  input: TurnInput;
  /** What the observer was told. */
  seen: { thinking: number[]; tools: string[][]; tokens: number };
}

function setup(options: { max?: number; rules?: typeof RULES | undefined; extensions?: TurnExtension[]; input?: Partial<TurnInput>; pending?: PendingTurn } = {}): Setup {
  const fake = new FakeActivities();
  const transcript = transcriptOf(system('You are an agent.'));
  const limits = new TurnLimits(options.max ?? 5, 'rules' in options ? options.rules : RULES, options.pending, () => undefined);
  const seen: Setup['seen'] = { thinking: [], tools: [], tokens: 0 };
  const input: TurnInput = {
    activities: fake.stubs,
    turn: 1,
    transcript,
    tools: TOOL_DEFINITIONS,
    context: CONTEXT,
    observer: {
      onThinking: (i) => seen.thinking.push(i),
      onTools: (tools) => seen.tools.push(tools.map((t) => t.name)),
      onUsage: (u) => (seen.tokens += u.totalTokens),
    },
    limits,
    extensions: options.extensions ?? [],
    loopBreakers: true,
    transcriptRef: false,
    shouldPause: () => false,
    ...options.input,
  };
  return { fake, transcript, limits, input, seen };
}

async function outcome(input: TurnInput, start: TurnStart = { message: 'Do the task.' }): Promise<TurnOutcome> {
  const result = await runTurn(input, start);
  if (isPaused(result)) throw new Error('the turn was handed over');
  return result;
}

const read = (id: string, file: string): ToolCall => toolCall(id, 'read_file', { file_path: file });
const toolMessages = (transcript: HashedTranscript): ToolMessage[] => transcript.slice().filter((m): m is ToolMessage => m.role === 'tool');
const contents = (messages: ChatMessage[]): unknown[] => messages.map((m) => JSON.parse(m.content as string));

test('a reply with two reads: both run, their results join in call order, and the answer completes the turn', async () => {
  const { fake, transcript, input, seen } = setup();
  fake.script('callModel', modelReply(null, { toolCalls: [read('a', 'one.md'), read('b', 'two.md')], usage: usage(100, 10) }), modelReply('Both read.', { usage: usage(150, 5) }));
  // The second read finishes first: the transcript still has the results in call order.
  let release!: () => void;
  const first = new Promise<void>((resolve) => (release = resolve));
  fake.respond('read_file', (_ctx: unknown, args: { file_path: string }) =>
    args.file_path === 'one.md' ? first.then(() => ({ success: true, content: 'ONE' })) : (release(), { success: true, content: 'TWO' }),
  );
  const result = await outcome(input);
  expect(result).toMatchObject({ turn: 1, status: 'completed', success: true, iterations: 2, response: 'Both read.', toolCalls: 2, messageRange: { from: 1, to: 6 } });
  expect(result.usage).toEqual(usage(250, 15));
  expect(seen).toEqual({ thinking: [1, 2], tools: [['read_file', 'read_file'], []], tokens: 265 });
  expect(toolMessages(transcript).map((m) => m.tool_call_id)).toEqual(['a', 'b']);
  expect(contents(toolMessages(transcript))).toEqual([
    { success: true, content: 'ONE' },
    { success: true, content: 'TWO' },
  ]);
  // The second model call saw the whole transcript, tool results included.
  expect(fake.inputsOf<{ messages: ChatMessage[] }>('callModel')[1]!.messages).toHaveLength(5);
  expect(fake.callsOf('read_file').map((c) => c.summary)).toEqual([expect.stringContaining('one.md'), expect.stringContaining('two.md')]);
});

test('at the limit an interactive turn says how to go on; a one-shot turn ends with the last text and the limit message', async () => {
  for (const interactive of [true, false]) {
    const { fake, transcript, input } = setup({ max: 2, rules: { ...RULES, interactive } });
    fake.respond('callModel', () => modelReply('Still reading.', { toolCalls: [read(`c${fake.callsOf('callModel').length}`, 'x.md')] }));
    fake.respond('read_file', () => ({ success: true, content: 'x' }));
    const result = await outcome(input);
    expect(result).toMatchObject({ status: 'max_iterations', success: false, iterations: 2, error: 'Agent execution exceeded maximum iterations (2)' });
    expect(result.response).toBe(
      interactive ? 'I reached this turn\'s limit of 2 iterations before finishing. So far: Still reading. Say "continue" to let me go on (or extend the limit).' : 'Still reading.',
    );
    expect(fake.callsOf('callModel')).toHaveLength(2);
    expect(transcript.slice(-1)[0]).toMatchObject({ role: 'tool' });
  }
});

test('the warning comes once, when the share of the limit is used', async () => {
  const { fake, transcript, input } = setup({ max: 5 });
  fake.respond('callModel', () => {
    const n = fake.callsOf('callModel').length;
    return n < 5 ? modelReply(null, { toolCalls: [read(`c${n}`, 'x.md')] }) : modelReply('Done in time.');
  });
  fake.respond('read_file', () => ({ success: true, content: 'x' }));
  const result = await outcome(input);
  expect(result).toMatchObject({ status: 'completed', iterations: 5, response: 'Done in time.' });
  const warnings = transcript.slice().filter((m) => m.role === 'system' && String(m.content).startsWith('[Loopwright] '));
  expect(warnings.map((m) => m.content)).toEqual(["[Loopwright] 4 of this turn's 5 iterations are used; 1 remain. Finish the task now, or ask the user how to go on (ask_question)."]);
  // It stands just before the fifth call.
  expect(fake.inputsOf<{ messages: ChatMessage[] }>('callModel')[4]!.messages.at(-1)).toEqual(warnings[0]);
});

test('extend raises the limit of the running turn: it goes on past the limit it started with', async () => {
  const { fake, transcript, input, limits } = setup({ max: 3 });
  fake.respond('callModel', () => {
    const n = fake.callsOf('callModel').length;
    // The user extends the turn while its second call runs.
    if (n === 2) expect(limits.extend(null)).toBe(6);
    return n < 5 ? modelReply(null, { toolCalls: [read(`c${n}`, 'x.md')] }) : modelReply('Done after the extension.');
  });
  fake.respond('read_file', () => ({ success: true, content: 'x' }));
  const result = await outcome(input);
  expect(result).toMatchObject({ status: 'completed', iterations: 5, response: 'Done after the extension.' });
  expect(limits.limit).toBe(6);
  // No warning: the answer came with the fifth call, before the check (at 5 of 6) that would have warned.
  expect(transcript.slice().some((m) => m.role === 'system' && String(m.content).includes('iterations are used'))).toBe(false);
});

test('sessions recorded before the rules have a fixed limit and no warning: extend does not move it', async () => {
  const { fake, transcript, input, limits } = setup({ max: 2, rules: undefined });
  fake.respond('callModel', () => {
    limits.extend(10);
    return modelReply('More.', { toolCalls: [read(`c${fake.callsOf('callModel').length}`, 'x.md')] });
  });
  fake.respond('read_file', () => ({ success: true, content: 'x' }));
  const result = await outcome(input);
  expect(result).toMatchObject({ status: 'max_iterations', iterations: 2, response: 'More.' });
  expect(transcript.slice().some((m) => m.role === 'system' && String(m.content).includes('iterations are used'))).toBe(false);
});

test('the same failing call three times ends the turn stuck; the second failure tells the model', async () => {
  const { fake, transcript, input } = setup({ max: 10 });
  fake.respond('callModel', () => modelReply(null, { toolCalls: [read(`c${fake.callsOf('callModel').length}`, 'missing.md')] }));
  fake.respond('read_file', () => ({ success: false, error: 'File not found: missing.md' }));
  const result = await outcome(input);
  expect(result.status).toBe('stuck');
  expect(result.iterations).toBe(3);
  expect(result.response).toBe('The same call kept failing (3 times): read_file {"file_path":"missing.md"} → File not found: missing.md. Tell me how to go on.');
  const notes = transcript.slice().filter((m) => m.role === 'system' && String(m.content).includes('This exact call has now failed'));
  expect(notes).toHaveLength(1);
});

test("a question ends the turn waiting for the user; the answer becomes that call's result in the next turn", async () => {
  const { fake, transcript, input } = setup();
  fake.script('callModel', modelReply(null, { toolCalls: [toolCall('q1', 'ask_question', { question: 'Which file?' })] }));
  const result = await outcome(input);
  expect(result).toMatchObject({ status: 'waiting_for_user', response: 'Which file?', question: { callId: 'q1', question: 'Which file?' } });
  fake.script('callModel', modelReply('Thanks.'));
  const next = await outcome({ ...input, turn: 2 }, { message: 'notes.md', answers: { callId: 'q1', question: 'Which file?' } });
  expect(next).toMatchObject({ status: 'completed', response: 'Thanks.' });
  expect(contents(toolMessages(transcript))).toEqual([{ success: true, answer: 'notes.md' }]);
});

test('an interrupt during a tool call ends the turn interrupted, and every call of the reply has a result', async () => {
  const { fake, transcript, input } = setup();
  fake.script('callModel', modelReply(null, { toolCalls: [read('a', 'one.md'), read('b', 'two.md')] }));
  fake.script('read_file', { success: true, content: 'ONE' }, activityCancelled('read_file'));
  const result = await outcome(input);
  expect(result).toMatchObject({ status: 'interrupted', error: 'Interrupted by the user', response: null });
  expect(toolMessages(transcript).map((m) => m.tool_call_id)).toEqual(['a', 'b']);
  expect(contents(toolMessages(transcript))[0]).toEqual({ success: true, content: 'ONE' });
  expect(contents(toolMessages(transcript))[1]).toMatchObject({ success: false });
});

test('between iterations a turn hands over to the next run with what it knows; resumed, it goes on from there', async () => {
  let pause = false;
  const { fake, input, limits } = setup({ max: 6, input: { shouldPause: () => pause } });
  fake.respond('callModel', () => {
    pause = true;
    return modelReply(null, { toolCalls: [read('a', 'one.md')], usage: usage(10, 1) });
  });
  fake.respond('read_file', () => ({ success: false, error: 'denied' }));
  limits.extend(2);
  const paused = await runTurn(input, { message: 'Go.' });
  if (!isPaused(paused)) throw new Error('expected a hand-over');
  expect(paused.paused).toMatchObject({ turn: 1, firstIndex: 1, iterations: 1, usage: usage(10, 1), warned: false, maxIterations: 8 });
  expect(Object.values(paused.paused.failures ?? {})).toEqual([1]);

  // The next run: the same transcript, a fresh limits object resumed from what was carried.
  const next = setup({ max: 6, pending: paused.paused });
  next.transcript.push(...input.transcript.slice(1));
  next.limits.resume(paused.paused);
  next.fake.script('callModel', modelReply('Done.', { usage: usage(20, 2) }));
  const result = await outcome(next.input, { resume: paused.paused });
  expect(result).toMatchObject({ status: 'completed', iterations: 2, usage: usage(30, 3), messageRange: { from: 1 } });
  expect(next.limits.limit).toBe(8);
});

test('a call that needs approval runs after a yes and is declined with the reason after a no', async () => {
  const asked: string[] = [];
  const { fake, transcript, input } = setup({
    input: {
      approvals: {
        needsApproval: (call) => call.function.name === 'save_output',
        requestApproval: (call) => {
          asked.push(call.id);
          return Promise.resolve(call.id === 'w1' ? { approved: true } : { approved: false, reason: 'not there' });
        },
      },
    },
  });
  fake.script(
    'callModel',
    modelReply(null, { toolCalls: [toolCall('w1', 'save_output', { file_path: 'a.md', content: 'A' }), toolCall('w2', 'save_output', { file_path: 'b.md', content: 'B' }), read('r', 'x.md')] }),
    modelReply('Saved one.'),
  );
  fake.respond('save_output', (_ctx: unknown, args: { file_path: string }) => ({ success: true, path: args.file_path }));
  fake.respond('read_file', () => ({ success: true, content: 'x' }));
  await outcome(input);
  expect(asked).toEqual(['w1', 'w2']);
  expect(fake.callsOf('save_output').map((c) => (c.args[1] as { file_path: string }).file_path)).toEqual(['a.md']);
  expect(contents(toolMessages(transcript))).toEqual([
    { success: true, path: 'a.md' },
    { success: false, declined: true, error: 'The user declined this call: not there' },
    { success: true, content: 'x' },
  ]);
});

describe('turn extensions', () => {
  /** An extension that records which hooks the turn called, in order. */
  function recorder(name: string, calls: string[], hooks: Partial<TurnExtension> = {}): TurnExtension {
    return {
      name,
      onTurnStart: () => calls.push(`${name}.start`),
      onToolResults: (c, results) => calls.push(`${name}.results ${c.map((x) => x.id).join(',')} ${results.map((r) => r?.success).join(',')}`),
      onAnswer: () => (calls.push(`${name}.answer`), Promise.resolve(undefined)),
      report: (_t, from, to) => (calls.push(`${name}.report ${from}-${to}`), {}),
      ...hooks,
    };
  }

  test('the turn calls each hook at its point, in the order the extensions are listed', async () => {
    const calls: string[] = [];
    const { fake, input } = setup({ extensions: [recorder('a', calls), recorder('b', calls)] });
    fake.script('callModel', modelReply(null, { toolCalls: [read('r1', 'x.md')] }), modelReply('Done.'));
    fake.respond('read_file', () => ({ success: true, content: 'x' }));
    await outcome(input);
    expect(calls).toEqual(['a.start', 'b.start', 'a.results r1 true', 'b.results r1 true', 'a.answer', 'b.answer', 'a.report 1-5', 'b.report 1-5']);
  });

  test('a resumed turn does not start again, and an answer to a question is no command', async () => {
    const calls: string[] = [];
    const command = jest.fn(() => undefined);
    const { fake, input } = setup({ extensions: [recorder('a', calls, { command })] });
    fake.respond('callModel', () => modelReply('Ok.'));
    await outcome(input, { message: 'x', answers: { callId: 'q', question: '?' } });
    expect(command).not.toHaveBeenCalled();
    expect(calls[0]).toBe('a.start');
    calls.length = 0;
    await outcome(input, { resume: { turn: 1, firstIndex: 1, iterations: 0, usage: usage(0, 0), startedAt: 0 } });
    expect(calls).not.toContain('a.start');
  });

  test('a command an extension answers is the turn: no model call, its reply and status', async () => {
    const { fake, transcript, input } = setup({
      extensions: [
        { name: 'checks', command: (message) => (message === '*check' ? () => Promise.resolve({ status: 'failed_verification', response: 'Two items failed.', error: '2 of 5 failed' }) : undefined) },
      ],
    });
    const result = await outcome(input, { message: '*check' });
    expect(result).toMatchObject({ status: 'failed_verification', response: 'Two items failed.', error: '2 of 5 failed', iterations: 0 });
    expect(fake.calls).toEqual([]);
    expect(transcript.slice(-1)).toEqual([{ role: 'assistant', content: 'Two items failed.' }]);
  });

  test('a call an extension runs does not reach an activity; its result joins the transcript like any other', async () => {
    const { fake, transcript, input } = setup({
      extensions: [
        {
          name: 'helpers',
          runsCall: (c) => c.function.name === 'delegate_task',
          runCall: (c, at) => Promise.resolve({ success: true, response: `done by helper at iteration ${at.iteration}`, id: c.id }),
        },
      ],
    });
    fake.script('callModel', modelReply(null, { toolCalls: [toolCall('d1', 'delegate_task', { agent: 'x', task: 'y' })] }), modelReply('Delegated.'));
    await outcome(input);
    expect(fake.calls.map((c) => c.name)).toEqual(['callModel', 'callModel']);
    expect(contents(toolMessages(transcript))).toEqual([{ success: true, response: 'done by helper at iteration 1', id: 'd1' }]);
  });

  test('a verdict at the answer sends the model back to work once, then ends the turn its way; its report joins the result', async () => {
    let answers = 0;
    const { fake, transcript, input } = setup({
      extensions: [
        {
          name: 'checker',
          onAnswer: () => {
            answers += 1;
            return Promise.resolve(answers === 1 ? { continueWith: 'Fix item 3.' } : { end: { status: 'failed_verification' as const, error: 'still failing' } });
          },
          report: () => ({ delegations: 7 }),
        },
      ],
    });
    fake.script('callModel', modelReply('First try.'), modelReply('Second try.'));
    const result = await outcome(input);
    expect(result).toMatchObject({ status: 'failed_verification', response: 'Second try.', error: 'still failing', iterations: 2, delegations: 7 });
    expect(
      transcript
        .slice()
        .filter((m) => m.role === 'system')
        .map((m) => m.content),
    ).toContain('Fix item 3.');
  });
});
