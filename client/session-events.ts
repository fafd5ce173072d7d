/**
 * A session's turn as a stream of events, for readers in any process or host, with Temporal as the
 * only thing in between: the text of the model's reply while it is written (from the running model
 * call's latest heartbeat, see common/stream-types.ts), the tool calls it starts and finishes, each
 * iteration, compactions, approvals it waits for, and the turn's end. Each reply's final text comes
 * from the transcript, so a reader never misses the end of a reply, and a server that does not
 * stream still gives one text event per reply. A model call that is made again (its worker died
 * mid-stream) starts a new `attempt`: readers drop the text of that reply shown so far.
 */
import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { AssistantMessage, ChatMessage } from '../common/messages';
import type { CompactionRecord, PendingApproval, SessionState, TurnSummary } from '../common/session-types';
import { isStreamProgress, type ModelStreamProgress } from '../common/stream-types';
import { isToolProgress, newOutput } from '../common/tool-progress';

/** One thing that happened in a turn, in order. */
export type SessionEvent =
  | { type: 'iteration'; turn: number; iteration: number }
  /** More of the model's reply: `text` goes at `offset` of the reply (`reply` counts the turn's replies from 1). */
  | { type: 'text'; turn: number; reply: number; offset: number; text: string }
  /** The reply's text so far is void: the call is being made again (or the final text differs); what follows replaces it. */
  | { type: 'restart'; turn: number; reply: number; attempt?: number }
  /** The reply is complete (its final text was all shown). */
  | { type: 'reply_done'; turn: number; reply: number; toolCalls: { id: string; name: string }[] }
  | { type: 'tool_started'; turn: number; id: string; name: string; detail?: string }
  | { type: 'tool_finished'; turn: number; id: string; name: string; success: boolean }
  /** More output of a running tool (a command): `text` is what is new since the last event; `bytes` counts all its output so far. */
  | { type: 'tool_output'; turn: number; id: string; name: string; text: string; bytes: number }
  | { type: 'approval_needed'; turn: number; approval: PendingApproval }
  | { type: 'compaction'; turn: number; compaction: CompactionRecord }
  | { type: 'turn_ended'; turn: number; result: TurnSummary };

/** What `followTurn` needs of a session (SessionHandle has it). */
export interface FollowedSession {
  readonly workflow: { describe(): Promise<{ raw: { pendingActivities?: PendingActivityLike[] | null } }> };
  state(): Promise<SessionState>;
  messages(from?: number, to?: number): Promise<ChatMessage[]>;
}

interface PendingActivityLike {
  activityType?: { name?: string | null } | null;
  attempt?: number | null;
  heartbeatDetails?: { payloads?: unknown[] | null } | null;
}

/** Options of `followTurn`. */
export interface FollowOptions {
  /** The turn to follow (default: the one running, else the next one to start). */
  turn?: number;
  /**
   * Where a reader that reconnects was: text of replies before `reply` (default 1) is not sent
   * again, nor the first `offset` characters of reply `reply`.
   */
  reply?: number;
  offset?: number;
  /** How often the session is asked (default 50 ms). */
  intervalMs?: number;
  /** Stop following (the iterator ends). */
  signal?: AbortSignal;
}

const MODEL_ACTIVITIES = new Set(['callModelV2', 'callModel']);

/** Follows one turn of the session until it ends. */
export async function* followTurn(session: FollowedSession, client: Client, options: FollowOptions = {}): AsyncGenerator<SessionEvent> {
  const interval = options.intervalMs ?? 50;
  let state = await session.state();
  const turn = options.turn ?? (isBusy(state) ? state.turn : state.turn + 1);
  // Wait for the turn to start (a reader may subscribe before the message is sent).
  const begun = (st: SessionState): boolean => st.turn > turn || (st.turn === turn && (isBusy(st) || st.lastTurn?.turn === turn));
  while (!begun(state)) {
    if (options.signal?.aborted || state.status === 'completed' || state.status === 'failed') return;
    await sleep(interval);
    state = await session.state();
  }
  // A turn that ended before the last one is not followed (read it with `turnMessages`).
  if (state.turn > turn) return;
  // Messages of the turn start after the user message; earlier ones are the transcript before it.
  let seen = await turnStart(session, state);
  let reply = 1;
  let shown = '';
  const fromReply = options.reply ?? 1;
  let skip = fromReply === 1 ? (options.offset ?? 0) : 0;
  let attempt: number | undefined;
  let iteration = 0;
  const approvals = new Set<string>();
  const started = new Set<string>();
  const callNames = new Map<string, string>();
  const outputBytes = new Map<string, number>();
  let compactions = state.context?.compactions ?? 0;
  const emitText = function* (full: string): Generator<SessionEvent> {
    if (full.startsWith(shown)) {
      const more = full.slice(shown.length);
      const from = shown.length;
      shown = full;
      const visible = reply < fromReply ? '' : skip > from ? more.slice(skip - from) : more;
      if (visible !== '') yield { type: 'text', turn, reply, offset: Math.max(from, skip), text: visible };
    } else {
      yield { type: 'restart', turn, reply, ...(attempt !== undefined ? { attempt } : {}) };
      shown = '';
      skip = 0;
      yield* emitText(full);
    }
  };
  for (;;) {
    if (options.signal?.aborted) return;
    const running = new Map(state.runningTools.map((t) => [t.id, t]));
    const toolStarted = (id: string, name: string): SessionEvent => {
      started.add(id);
      const detail = running.get(id)?.detail;
      return { type: 'tool_started', turn, id, name, ...(detail ? { detail } : {}) };
    };
    // Finished messages first: each reply's final text, its tool calls and their results.
    if (state.messageCount > seen) {
      const added = await session.messages(seen, state.messageCount);
      seen += added.length;
      for (const message of added) {
        if (message.role === 'assistant') {
          yield* emitText(textOf(message));
          const calls = (message.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name }));
          yield { type: 'reply_done', turn, reply, toolCalls: calls };
          for (const c of calls) {
            callNames.set(c.id, c.name);
            if (!started.has(c.id)) yield toolStarted(c.id, c.name);
          }
          reply += 1;
          shown = '';
          skip = reply === fromReply ? (options.offset ?? 0) : 0;
          attempt = undefined;
        } else if (message.role === 'tool') {
          yield { type: 'tool_finished', turn, id: message.tool_call_id, name: callNames.get(message.tool_call_id) ?? '', success: !/"success"\s*:\s*false/.test(message.content.slice(0, 40)) };
        }
      }
    }
    for (const tool of state.runningTools) if (!started.has(tool.id)) yield toolStarted(tool.id, tool.name);
    for (const approval of state.pendingApprovals) {
      if (approvals.has(approval.callId)) continue;
      approvals.add(approval.callId);
      yield { type: 'approval_needed', turn, approval };
    }
    if ((state.context?.compactions ?? 0) > compactions && state.context?.lastCompaction) {
      compactions = state.context.compactions;
      yield { type: 'compaction', turn, compaction: state.context.lastCompaction };
    }
    if (state.turn === turn && state.iteration > iteration) {
      iteration = state.iteration;
      yield { type: 'iteration', turn, iteration };
    }
    if (state.lastTurn?.turn === turn && !isBusy(state)) {
      yield { type: 'turn_ended', turn, result: state.lastTurn };
      return;
    }
    if (state.status === 'completed' || state.status === 'failed') return;
    // The output of running commands, from their activities' latest heartbeats.
    if (state.status === 'executing_tool' && state.runningTools.length > 0) {
      for (const progress of await toolProgress(session, client)) {
        const tool = state.runningTools.find((t) => t.name === progress.name && (progress.target === undefined || t.detail === progress.target.slice(0, 200))) ?? undefined;
        if (!tool) continue;
        const before = outputBytes.get(tool.id) ?? 0;
        if (progress.bytes <= before) continue;
        outputBytes.set(tool.id, progress.bytes);
        yield { type: 'tool_output', turn, id: tool.id, name: tool.name, text: newOutput(progress.output, progress.bytes - before), bytes: progress.bytes };
      }
    }
    // The reply being written, from the model call's latest heartbeat.
    if (state.status === 'thinking') {
      const progress = await streamProgress(session, client);
      if (progress) {
        if (attempt !== undefined && progress.attempt > attempt && shown !== '') {
          yield { type: 'restart', turn, reply, attempt: progress.attempt };
          shown = '';
          skip = 0;
        }
        attempt = progress.attempt;
        if (progress.text.length > shown.length && progress.text.startsWith(shown)) yield* emitText(progress.text);
      }
    }
    await sleep(interval);
    state = await session.state();
  }
}

/** The running model call's stream progress, if it has sent any. */
export async function streamProgress(session: FollowedSession, client: Client): Promise<ModelStreamProgress | undefined> {
  const description = await session.workflow.describe();
  for (const activity of description.raw.pendingActivities ?? []) {
    if (!MODEL_ACTIVITIES.has(activity.activityType?.name ?? '')) continue;
    const payloads = activity.heartbeatDetails?.payloads;
    if (!payloads || payloads.length === 0) continue;
    const details = await decodeFromPayloadsAtIndex<unknown>(client.options.loadedDataConverter, 0, payloads as never);
    if (isStreamProgress(details)) return details;
  }
  return undefined;
}

/** A running tool's progress as its activity last reported it (`ToolProgress`, common/tool-progress.ts), with the activity's name. */
interface ToolProgressSeen {
  name: string;
  target?: string;
  output: string;
  bytes: number;
}

/** The progress every running tool activity of the session has reported (a command's output so far). */
export async function toolProgress(session: FollowedSession, client: Client): Promise<ToolProgressSeen[]> {
  const description = await session.workflow.describe();
  const found: ToolProgressSeen[] = [];
  for (const activity of description.raw.pendingActivities ?? []) {
    const name = activity.activityType?.name ?? '';
    const payloads = activity.heartbeatDetails?.payloads;
    if (MODEL_ACTIVITIES.has(name) || !payloads || payloads.length === 0) continue;
    const details = await decodeFromPayloadsAtIndex<unknown>(client.options.loadedDataConverter, 0, payloads as never).catch(() => undefined);
    if (!isToolProgress(details)) continue;
    found.push({ name, output: details.output, bytes: details.bytes, ...(details.target !== undefined ? { target: details.target } : {}) });
  }
  return found;
}

/** Index of the turn's first message after its user message (the last user message so far). */
async function turnStart(session: FollowedSession, state: SessionState): Promise<number> {
  const count = state.messageCount;
  // The turn's user message is the last user message at or before the end; search back a bounded way.
  const from = Math.max(0, count - 200);
  const tail = await session.messages(from, count);
  for (let i = tail.length - 1; i >= 0; i--) {
    if (tail[i]!.role === 'user') return from + i + 1;
  }
  return count;
}

function textOf(message: AssistantMessage): string {
  return typeof message.content === 'string' ? message.content : '';
}

function isBusy(state: SessionState): boolean {
  return state.status === 'thinking' || state.status === 'executing_tool' || state.status === 'waiting_for_approval';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
