/**
 * The event projection alone, on a scripted session (states, streamed text, transcript) of two
 * turns: a reply streamed and restarted by a retried call, tool calls with command output, an
 * approval, an iteration per model call, usage, a question, and the next turn. Checked: the event
 * ids decode back to their cursors; the events form valid AG-UI runs (@ag-ui/client's verifier);
 * and resuming from any event's id, at the same look or any later one (a serve process that
 * restarted and missed some), gives exactly what was left: the same replies, each tool call, result
 * and approval once, one RUN_STARTED and one RUN_FINISHED per turn.
 */
import { from } from 'rxjs';
import { verifyEvents } from '@ag-ui/client';
import type { ChatMessage } from '../../common/messages';
import type { SessionState, TurnSummary } from '../../common/session-types';
import type { ModelStreamProgress } from '../../common/stream-types';
import { decodeCursor, encodeCursor, type StreamCursor } from '../../serve/events/cursor';
import { type Emitted, project, type ToolOutputSeen, type TurnFacts } from '../../serve/events/projector';
import { TurnBoundaries } from '../../serve/events/turn-boundaries';

const ID = 'sess-1';

/** One look at the session. */
interface Look {
  state: Partial<SessionState>;
  count: number;
  stream?: Pick<ModelStreamProgress, 'text' | 'attempt'>;
  tools?: ToolOutputSeen[];
}

const transcript: ChatMessage[] = [
  { role: 'system', content: 'You are Robin.' },
  { role: 'user', content: 'hello' },
  { role: 'assistant', content: 'Let me read it.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'run_command', arguments: '{"command":"ls"}' } }] },
  { role: 'tool', tool_call_id: 'call_1', content: '{"success":true,"output":"a\\nb\\n"}' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'save_output', arguments: '{"file_path":"x.md","content":"x"}' } }] },
  { role: 'tool', tool_call_id: 'call_2', content: '{"success":true,"path":"x.md"}' },
  { role: 'assistant', content: 'Which colour?', tool_calls: [{ id: 'call_3', type: 'function', function: { name: 'ask_question', arguments: '{"question":"Which colour?"}' } }] },
  // Turn 2: the answer to the question.
  { role: 'tool', tool_call_id: 'call_3', content: '{"success":true,"answer":"blue"}' },
  { role: 'assistant', content: 'Blue it is.' },
];

const usage = (total: number) => ({ promptTokens: total - 5, completionTokens: 5, totalTokens: total });
const turn1: TurnSummary = { turn: 1, success: true, status: 'waiting_for_user', iterations: 3, response: 'Which colour?' };
const turn2: TurnSummary = { turn: 2, success: true, status: 'completed', iterations: 1, response: 'Blue it is.' };
const approval = { callId: 'call_2', tool: 'save_output', path: 'x.md', preview: '1 byte: x', since: 0 };

const looks: Look[] = [
  { state: { status: 'waiting_for_user', turn: 0, iteration: 0 }, count: 1 },
  { state: { status: 'thinking', turn: 1, iteration: 1 }, count: 2 },
  { state: { status: 'thinking', turn: 1, iteration: 1 }, count: 2, stream: { text: 'Let', attempt: 1 } },
  { state: { status: 'thinking', turn: 1, iteration: 1 }, count: 2, stream: { text: 'Let me r', attempt: 1 } },
  // The worker died: the call is made again and its text starts over.
  { state: { status: 'thinking', turn: 1, iteration: 1 }, count: 2, stream: { text: 'Le', attempt: 2 } },
  {
    state: { status: 'executing_tool', turn: 1, iteration: 1, usage: usage(100), runningTools: [{ id: 'call_1', name: 'run_command', detail: 'ls' }] },
    count: 3,
    tools: [{ name: 'run_command', target: 'ls', output: 'a\n', bytes: 2 }],
  },
  {
    state: { status: 'executing_tool', turn: 1, iteration: 1, usage: usage(100), runningTools: [{ id: 'call_1', name: 'run_command', detail: 'ls' }] },
    count: 3,
    tools: [{ name: 'run_command', target: 'ls', output: 'a\nb\n', bytes: 4 }],
  },
  { state: { status: 'thinking', turn: 1, iteration: 2, usage: usage(100) }, count: 4 },
  { state: { status: 'waiting_for_approval', turn: 1, iteration: 2, usage: usage(200), pendingApprovals: [approval] }, count: 5 },
  { state: { status: 'thinking', turn: 1, iteration: 3, usage: usage(200) }, count: 6, stream: { text: 'Which', attempt: 1 } },
  { state: { status: 'waiting_for_user', turn: 1, iteration: 3, usage: usage(300), lastTurn: turn1, pendingQuestion: { callId: 'call_3', question: 'Which colour?' } }, count: 7 },
  { state: { status: 'thinking', turn: 2, iteration: 1, usage: usage(300), lastTurn: turn1 }, count: 8, stream: { text: 'Blue', attempt: 1 } },
  { state: { status: 'waiting_for_user', turn: 2, iteration: 1, usage: usage(400), lastTurn: turn2 }, count: 9 },
];

function factsOf(look: Look): TurnFacts {
  const state: SessionState = {
    status: 'waiting_for_user',
    turn: 0,
    iteration: 0,
    maxIterations: 50,
    runningTools: [],
    pendingApprovals: [],
    usage: usage(5),
    messageCount: look.count,
    transcriptBytes: 0,
    run: 1,
    ...look.state,
  } as SessionState;
  const boundaries = new TurnBoundaries();
  const messages = async (a: number, b: number) => {
    if (b > look.count) throw new Error(`read past the transcript: ${b} > ${look.count}`);
    return transcript.slice(a, b);
  };
  return {
    sessionId: ID,
    state,
    ...(look.stream ? { stream: { kind: 'loopwright.stream', seq: 1, ...look.stream } } : {}),
    tools: look.tools ?? [],
    closed: false,
    messages,
    turnStart: (t) => boundaries.find(t, state.turn, look.count, messages),
    turnSummary: async (t) => (t === 1 ? turn1 : turn2),
  };
}

/** Events from `cursor` over looks `from..`, each look once; with the index of the look each event came at. */
async function run(cursor: StreamCursor, fromLook: number): Promise<(Emitted & { look: number })[]> {
  const out: (Emitted & { look: number })[] = [];
  for (let i = fromLook; i < looks.length; i++) {
    const projection = await project(cursor, factsOf(looks[i]!));
    out.push(...projection.events.map((e) => ({ ...e, look: i })));
    cursor = projection.cursor;
  }
  return out;
}

/** What a reader makes of events: text per reply (dropped on a restart), and every other event in order. */
function meaning(events: readonly Emitted[]): { texts: Record<string, string>; others: string[] } {
  const texts: Record<string, string> = {};
  const others: string[] = [];
  for (const { event } of events) {
    const e = event as Record<string, unknown>;
    if (e.type === 'TEXT_MESSAGE_CONTENT') texts[String(e.messageId)] = (texts[String(e.messageId)] ?? '') + String(e.delta);
    else if (e.type === 'CUSTOM' && e.name === 'loopwright.reply_restarted') texts[String((e.value as { messageId: string }).messageId)] = '';
    else if (e.type === 'CUSTOM' && (e.name === 'loopwright.usage' || e.name === 'loopwright.tool_output')) continue;
    else others.push(`${String(e.type)}${e.name ? `:${String(e.name)}` : ''}${e.toolCallId ? `:${String(e.toolCallId)}` : ''}${e.stepName ? `:${String(e.stepName)}` : ''}`);
  }
  return { texts, others };
}

test('projector: a scripted session gives valid AG-UI runs with the replies, tool calls, approval, question and steps', async () => {
  const events = await run({ kind: 'wait', t: 1 }, 0);
  for (const e of events) expect(decodeCursor(encodeCursor(e.cursor))).toEqual(e.cursor);
  // @ag-ui/client's own verifier accepts the sequence.
  let verified = 0;
  await new Promise<void>((resolve, reject) => {
    // Its own copy of rxjs: the source goes in untyped.
    verifyEvents(undefined as never)(from(events.map((e) => e.event)) as never).subscribe({ next: () => void (verified += 1), complete: resolve, error: reject });
  });
  expect(verified).toBe(events.length);
  const { texts, others } = meaning(events);
  expect(texts).toEqual({ [`${ID}:t1:r1`]: 'Let me read it.', [`${ID}:t1:r3`]: 'Which colour?', [`${ID}:t2:r1`]: 'Blue it is.' });
  expect(others).toEqual([
    'RUN_STARTED',
    'CUSTOM:loopwright.user_message',
    'STEP_STARTED:iteration 1',
    'TEXT_MESSAGE_START',
    'TEXT_MESSAGE_END',
    'TOOL_CALL_START:call_1',
    'TOOL_CALL_ARGS:call_1',
    'TOOL_CALL_END:call_1',
    'TOOL_CALL_RESULT:call_1',
    'STEP_FINISHED:iteration 1',
    'STEP_STARTED:iteration 2',
    'TOOL_CALL_START:call_2',
    'TOOL_CALL_ARGS:call_2',
    'TOOL_CALL_END:call_2',
    'CUSTOM:loopwright.approval_needed',
    'TOOL_CALL_RESULT:call_2',
    'STEP_FINISHED:iteration 2',
    'STEP_STARTED:iteration 3',
    'TEXT_MESSAGE_START',
    'TEXT_MESSAGE_END',
    'TOOL_CALL_START:call_3',
    'TOOL_CALL_ARGS:call_3',
    'TOOL_CALL_END:call_3',
    'STEP_FINISHED:iteration 3',
    'CUSTOM:loopwright.question',
    'RUN_FINISHED',
    'RUN_STARTED',
    'CUSTOM:loopwright.user_message',
    'STEP_STARTED:iteration 1',
    'TEXT_MESSAGE_START',
    'TEXT_MESSAGE_END',
    'STEP_FINISHED:iteration 1',
    'RUN_FINISHED',
  ]);
  expect(events.some((e) => e.event.type === 'CUSTOM' && (e.event as { name?: string }).name === 'loopwright.reply_restarted')).toBe(true);
  const output = events.filter((e) => (e.event as { name?: string }).name === 'loopwright.tool_output').map((e) => (e.event as unknown as { value: { text: string } }).value.text);
  expect(output.join('')).toBe('a\nb\n');
  // The answer opens turn 2 as the user's message.
  const user = events.filter((e) => (e.event as { name?: string }).name === 'loopwright.user_message').map((e) => (e.event as unknown as { value: { text: string } }).value.text);
  expect(user).toEqual(['hello', 'blue']);
});

test('projector: resuming from any event id, at the same look or a later one, gives exactly what was left', async () => {
  const whole = await run({ kind: 'wait', t: 1 }, 0);
  const expected = meaning(whole);
  let checked = 0;
  for (let k = 0; k < whole.length; k++) {
    const cursor = decodeCursor(encodeCursor(whole[k]!.cursor))!;
    for (let later = whole[k]!.look; later < looks.length; later++) {
      const rest = await run(cursor, later);
      const joined = meaning([...whole.slice(0, k + 1), ...rest]);
      // Replies are complete and text is never repeated (a reply's text may arrive in other pieces).
      expect(joined.texts).toEqual(expected.texts);
      // Everything else once, in order. Resumed at the same look: exactly the same. Looks skipped
      // (a serve process that was down meanwhile) lose only what was live in them alone: an
      // iteration step, an approval no longer waiting.
      const essential = (list: string[]) => (later === whole[k]!.look ? list : list.filter((e) => !e.startsWith('STEP_') && e !== 'CUSTOM:loopwright.approval_needed'));
      expect(essential(joined.others)).toEqual(essential(expected.others));
      checked += 1;
    }
  }
  expect(checked).toBeGreaterThan(100);
});
