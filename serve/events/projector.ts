/**
 * A session's turns as AG-UI events, projected from what the session shows (its state, the running
 * model call's stream, the transcript) onto a reader's cursor (cursor.ts). `project` is a function
 * of the cursor and those facts alone: two readers at the same cursor get the same events, and a
 * reader that comes back with the cursor of its last event (to this process after a restart, or to
 * another) gets exactly what follows.
 *
 * Each turn is one AG-UI run. What is in the transcript (the user's message, each finished reply
 * with its tool calls, each tool result) is projected message by message, in order; what is only
 * live (the reply being written, iterations, approvals waiting, usage, compactions, command output)
 * is compared with what the cursor says was sent. A reply's final text comes from the transcript, so
 * a reader never misses the end of a reply, and one whose text differs from what was streamed (the
 * call was made again) is announced with `loopwright.reply_restarted` and sent anew.
 */
import { EventType, type BaseEvent } from '@ag-ui/core';
import type { ChatMessage } from '../../common/messages';
import type { SessionState, TurnSummary } from '../../common/session-types';
import type { ModelStreamProgress } from '../../common/stream-types';
import { newOutput } from '../../common/tool-progress';
import { copyCursor, fnv, FNV_START, turnCursor, type StreamCursor, type TurnCursor } from './cursor';

/** Longest tool result content an event carries (characters); the transcript pages have all of it. */
export const MAX_RESULT_CHARS = 64 * 1024;

/** A running tool's output as its activity last reported it. */
export interface ToolOutputSeen {
  name: string;
  target?: string;
  output: string;
  bytes: number;
}

/** What one look at the session found, and how to read more of it. */
export interface TurnFacts {
  sessionId: string;
  state: SessionState;
  /** The running model call's reply so far, when it is the reply after the last message of `state` (see session-feed.ts). */
  stream?: ModelStreamProgress;
  /** Output of running commands. */
  tools: ToolOutputSeen[];
  /** The session's workflow is no longer running (completed, failed, terminated, timed out). */
  closed: boolean;
  /** Transcript messages `[from, to)`. */
  messages(from: number, to: number): Promise<ChatMessage[]>;
  /** Index of turn `turn`'s first message (its user message, or the answer to a question). */
  turnStart(turn: number): Promise<number>;
  /** How turn `turn` ended (called for a finished turn the state no longer summarises). */
  turnSummary(turn: number): Promise<TurnSummary>;
  /** The session was just taken back to the end of this turn (rewind): later turns are gone. */
  rewoundTo?: number;
}

/** One event and the cursor after it (its SSE id). */
export interface Emitted {
  event: BaseEvent;
  cursor: StreamCursor;
}

/** What `project` found: events to send, the cursor after them, and whether the stream has nothing more to wait for. */
export interface Projection {
  events: Emitted[];
  cursor: StreamCursor;
  /** The session is over and the cursor waits for a turn that will never come. */
  finished: boolean;
}

const BUSY = new Set(['thinking', 'executing_tool', 'waiting_for_approval', 'verifying']);

export function isBusy(state: Pick<SessionState, 'status'>): boolean {
  return BUSY.has(state.status);
}

/** The session takes no more turns. */
function sessionOver(facts: TurnFacts): boolean {
  return facts.closed || facts.state.status === 'completed' || facts.state.status === 'failed';
}

/** The AG-UI run id of a turn, and the message id of a reply. */
export const runId = (sessionId: string, turn: number): string => `${sessionId}:t${turn}`;
export const replyId = (sessionId: string, turn: number, reply: number): string => `${sessionId}:t${turn}:r${reply}`;

/** The events after `from`, as far as the facts go. */
export async function project(from: StreamCursor, facts: TurnFacts): Promise<Projection> {
  const events: Emitted[] = [];
  const { state } = facts;
  let cursor = copyCursor(from);
  // A reader far behind goes through every turn it missed, one after another, in one look.
  if (facts.rewoundTo !== undefined) {
    const k = facts.rewoundTo;
    if (cursor.kind === 'turn' && cursor.t > k) {
      closeTurn(cursor, facts, events, { error: { message: 'The session was rewound; the turn is gone', code: 'LoopwrightRewound' } });
      cursor = { kind: 'wait', t: k + 1 };
      for (const e of events) if (e.cursor.kind === 'wait') e.cursor = cursor;
    } else if (cursor.kind === 'wait' && cursor.t > k + 1) cursor = { kind: 'wait', t: k + 1 };
  }
  for (;;) {
    if (cursor.kind === 'wait') {
      // Turns count up one by one: a cursor past the next turn means the session was rewound; it
      // goes on with the session's next turn.
      if (cursor.t > state.turn + 1 && !sessionOver(facts)) cursor = { kind: 'wait', t: state.turn + 1 };
      const t = cursor.t;
      const begun = state.turn > t || (state.turn === t && (isBusy(state) || state.lastTurn?.turn === t));
      if (!begun) return { events, cursor, finished: sessionOver(facts) };
      const start = await facts.turnStart(t);
      const current = state.turn === t;
      cursor = turnCursor(t, start, current ? state.usage.totalTokens : 0, current ? (state.context?.compactions ?? 0) : 0);
      events.push({ event: { type: EventType.RUN_STARTED, threadId: facts.sessionId, runId: runId(facts.sessionId, t) }, cursor: copyCursor(cursor) });
    }
    const turn: TurnCursor = cursor;
    const next = await projectTurn(turn, facts, events);
    if (next === undefined) return { events, cursor: turn, finished: false };
    cursor = next;
    if (cursor.kind === 'wait' && cursor.t > state.turn && sessionOver(facts)) return { events, cursor, finished: true };
  }
}

/** Advance `cursor` (changed in place) through turn `cursor.t`; the wait cursor of the next turn once this one is over. */
async function projectTurn(cursor: TurnCursor, facts: TurnFacts, events: Emitted[]): Promise<StreamCursor | undefined> {
  const { state } = facts;
  const t = cursor.t;
  // The turn is gone: the session was reset to an earlier turn (rewind). The run ends here.
  if (state.turn < t) {
    return closeTurn(cursor, facts, events, { error: { message: 'The session was rewound; reconnect without an event id', code: 'LoopwrightRewound' } });
  }
  const current = state.turn === t;
  const ended = state.turn > t || (current && !isBusy(state) && (state.lastTurn?.turn === t || state.status === 'failed' || state.status === 'completed'));
  const broken = current && isBusy(state) && facts.closed;
  const over = ended || broken;
  const end = current ? state.messageCount : await facts.turnStart(t + 1);
  // Fewer messages than were projected while the turn is still there: a new run of the session
  // (continue-as-new) is paging its transcript in. Wait for it.
  if (cursor.m > end) return undefined;
  if (cursor.m < end) {
    const messages = await facts.messages(cursor.m, end);
    for (const message of messages) projectMessage(cursor, message, facts.sessionId, events);
  }
  if (current) liveEvents(cursor, facts, events, over);
  if (!over) return undefined;
  if (broken || (current && state.status === 'failed' && state.lastTurn?.turn !== t)) {
    const message = state.error ?? 'The session ended while the turn ran';
    return closeTurn(cursor, facts, events, { error: { message, code: state.status === 'failed' ? 'LoopwrightSessionFailed' : 'LoopwrightSessionClosed' } });
  }
  const summary = state.lastTurn?.turn === t ? state.lastTurn : await facts.turnSummary(t);
  const question = summary.status === 'waiting_for_user' ? (current && state.pendingQuestion ? state.pendingQuestion.question : (summary.response ?? '')) : undefined;
  return closeTurn(cursor, facts, events, { summary, ...(question !== undefined ? { question } : {}) });
}

/** The events of one transcript message (from the cursor before it), then the cursor after it. */
function projectMessage(cursor: TurnCursor, message: ChatMessage, sessionId: string, events: Emitted[]): void {
  const list = messageEvents(cursor, message, sessionId);
  const after = copyCursor(cursor);
  after.m += 1;
  after.j = 0;
  if (message.role === 'assistant') {
    Object.assign(after, { r: cursor.r + 1, o: 0, h: FNV_START, at: 0, ms: false });
  } else if (message.role === 'tool') {
    delete after.tb[message.tool_call_id];
    after.ap = after.ap.filter((id) => id !== message.tool_call_id);
  }
  for (let k = cursor.j; k < list.length; k++) {
    const at = k === list.length - 1 ? copyCursor(after) : { ...copyCursor(cursor), j: k + 1 };
    events.push({ event: list[k]!, cursor: at });
  }
  Object.assign(cursor, after);
}

/** A message's events, a function of the message and the cursor before it. */
function messageEvents(cursor: TurnCursor, message: ChatMessage, sessionId: string): BaseEvent[] {
  const t = cursor.t;
  if (message.role === 'user') return [custom('loopwright.user_message', { messageId: `${sessionId}:t${t}:m${cursor.m}`, text: textOf(message.content) })];
  if (message.role === 'system') return [custom('loopwright.notice', { messageId: `${sessionId}:t${t}:m${cursor.m}`, text: textOf(message.content) })];
  if (message.role === 'tool') {
    const answer = answerText(message.content);
    // Before the turn's first reply, a tool message can only be the turn's first message: the answer to a question.
    if (answer !== undefined && cursor.r === 1) {
      return [custom('loopwright.user_message', { messageId: `${sessionId}:t${t}:m${cursor.m}`, text: answer })];
    }
    return [
      {
        type: EventType.TOOL_CALL_RESULT,
        messageId: `${sessionId}:t${t}:m${cursor.m}`,
        toolCallId: message.tool_call_id,
        content: capped(message.content),
        role: 'tool',
      },
    ];
  }
  const list: BaseEvent[] = [];
  const messageId = replyId(sessionId, t, cursor.r);
  const full = textOf(message.content);
  if (full !== '' || cursor.ms) {
    const same = cursor.o === 0 || (full.length >= cursor.o && fnv(full.slice(0, cursor.o)) === cursor.h);
    if (!same) list.push(custom('loopwright.reply_restarted', { messageId, reply: cursor.r }));
    if (!cursor.ms) list.push({ type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant' });
    const rest = same ? full.slice(cursor.o) : full;
    if (rest !== '') list.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta: rest });
    list.push({ type: EventType.TEXT_MESSAGE_END, messageId });
  }
  for (const call of message.tool_calls ?? []) {
    list.push({ type: EventType.TOOL_CALL_START, toolCallId: call.id, toolCallName: call.function.name, parentMessageId: messageId });
    if (call.function.arguments !== '') list.push({ type: EventType.TOOL_CALL_ARGS, toolCallId: call.id, delta: call.function.arguments });
    list.push({ type: EventType.TOOL_CALL_END, toolCallId: call.id });
  }
  return list;
}

/** What only the live session shows: usage, then (while the turn runs) approvals, compactions, the iteration, command output, the reply being written. */
function liveEvents(cursor: TurnCursor, facts: TurnFacts, events: Emitted[], over: boolean): void {
  const { state } = facts;
  const emit = (event: BaseEvent): void => {
    events.push({ event, cursor: copyCursor(cursor) });
  };
  if (state.usage.totalTokens > cursor.u) {
    cursor.u = state.usage.totalTokens;
    emit(custom('loopwright.usage', state.usage));
  }
  if (over) return;
  const pending = new Set(state.pendingApprovals.map((a) => a.callId));
  for (const approval of state.pendingApprovals) {
    if (cursor.ap.includes(approval.callId)) continue;
    // Calls no longer waiting are forgotten, so the cursor stays small.
    cursor.ap = [...cursor.ap.filter((id) => pending.has(id)), approval.callId];
    emit(custom('loopwright.approval_needed', approval));
  }
  const compactions = state.context?.compactions ?? 0;
  if (compactions > cursor.c && state.context?.lastCompaction) {
    cursor.c = compactions;
    emit(custom('loopwright.compaction', state.context.lastCompaction));
  }
  if (state.iteration > cursor.i) {
    if (cursor.i > 0 && !cursor.f) {
      cursor.f = true;
      emit({ type: EventType.STEP_FINISHED, stepName: `iteration ${cursor.i}` });
    }
    cursor.i = state.iteration;
    cursor.f = false;
    emit({ type: EventType.STEP_STARTED, stepName: `iteration ${cursor.i}` });
  }
  if (state.status === 'executing_tool') {
    for (const progress of facts.tools) {
      const tool = state.runningTools.find((r) => r.name === progress.name && (progress.target === undefined || r.detail === progress.target.slice(0, 200)));
      if (!tool) continue;
      const before = cursor.tb[tool.id] ?? 0;
      if (progress.bytes <= before) continue;
      cursor.tb[tool.id] = progress.bytes;
      emit(custom('loopwright.tool_output', { toolCallId: tool.id, name: tool.name, text: newOutput(progress.output, progress.bytes - before), bytes: progress.bytes }));
    }
  }
  const stream = facts.stream;
  // The stream is the reply after the last message only when every message was projected.
  if (state.status !== 'thinking' || !stream || cursor.m !== state.messageCount) return;
  const messageId = replyId(facts.sessionId, cursor.t, cursor.r);
  const text = stream.text;
  const newer = cursor.at !== 0 && stream.attempt > cursor.at;
  if (!newer && cursor.at !== 0 && stream.attempt < cursor.at) return;
  const same = !newer && (cursor.o === 0 || (text.length >= cursor.o && fnv(text.slice(0, cursor.o)) === cursor.h));
  if (!same && !newer && text.length < cursor.o) return;
  if (!same) {
    if (cursor.o > 0 || cursor.ms) {
      cursor.o = 0;
      cursor.h = FNV_START;
      cursor.at = stream.attempt;
      emit(custom('loopwright.reply_restarted', { messageId, reply: cursor.r, attempt: stream.attempt }));
    }
  }
  cursor.at = stream.attempt;
  if (text.length <= cursor.o) return;
  if (!cursor.ms) {
    cursor.ms = true;
    emit({ type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant' });
  }
  const delta = text.slice(cursor.o);
  cursor.h = fnv(delta, cursor.h);
  cursor.o = text.length;
  emit({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta });
}

/** How a turn closes: its result, or an error. */
type Closing = { summary: TurnSummary; question?: string } | { error: { message: string; code: string } };

/**
 * The turn's closing events (an open reply ended, the last step finished, the question, then
 * `RUN_FINISHED` or `RUN_ERROR`), from the cursor as it was when they began (`e` counts those sent).
 */
function closeTurn(cursor: TurnCursor, facts: TurnFacts, events: Emitted[], closing: Closing): StreamCursor {
  const t = cursor.t;
  const list: BaseEvent[] = [];
  if (cursor.ms) list.push({ type: EventType.TEXT_MESSAGE_END, messageId: replyId(facts.sessionId, t, cursor.r) });
  if (cursor.i > 0 && !cursor.f) list.push({ type: EventType.STEP_FINISHED, stepName: `iteration ${cursor.i}` });
  if ('error' in closing) {
    list.push({ type: EventType.RUN_ERROR, message: closing.error.message, code: closing.error.code });
  } else {
    if (closing.question !== undefined) list.push(custom('loopwright.question', { question: closing.question }));
    list.push({ type: EventType.RUN_FINISHED, threadId: facts.sessionId, runId: runId(facts.sessionId, t), result: closing.summary });
  }
  const next: StreamCursor = { kind: 'wait', t: t + 1 };
  for (let k = cursor.e; k < list.length; k++) {
    events.push({ event: list[k]!, cursor: k === list.length - 1 ? next : { ...copyCursor(cursor), e: k + 1 } });
  }
  return next;
}

function custom(name: string, value: unknown): BaseEvent {
  return { type: EventType.CUSTOM, name, value };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '')).join('');
  return '';
}

/** A tool result as an event carries it: at most MAX_RESULT_CHARS, with a note of what was left out. */
function capped(content: string): string {
  if (content.length <= MAX_RESULT_CHARS) return content;
  return `${content.slice(0, MAX_RESULT_CHARS)}… (${content.length - MAX_RESULT_CHARS} more characters in the transcript)`;
}

/** The user's answer when `content` is the result of an `ask_question` call (`{"success":true,"answer":…}`). */
export function answerText(content: string): string | undefined {
  if (!content.startsWith('{"success":true,"answer":')) return undefined;
  try {
    const parsed = JSON.parse(content) as { answer?: unknown };
    return typeof parsed.answer === 'string' ? parsed.answer : undefined;
  } catch {
    return undefined;
  }
}
