/**
 * followTurn against a scripted session (no server): the reply's text from heartbeat progress, the
 * final text from the transcript, a new attempt starting the reply over, tool events, the turn's
 * end, and a reader that reconnects naming the reply and offset it had reached.
 */
import type { Client } from '@temporalio/client';
import { defaultFailureConverter, defaultPayloadConverter } from '@temporalio/common';
import { followTurn, type FollowedSession, type SessionEvent } from '../../../client/session-events';
import type { ChatMessage } from '../../../common/messages';
import type { SessionState } from '../../../common/session-types';
import { STREAM_PROGRESS_KIND, type ModelStreamProgress } from '../../../common/stream-types';

const client = { options: { loadedDataConverter: { payloadConverter: defaultPayloadConverter, failureConverter: defaultFailureConverter, payloadCodecs: [] } } } as unknown as Client;

interface Step {
  state: Partial<SessionState>;
  messages?: ChatMessage[];
  progress?: Partial<ModelStreamProgress>;
}

/** A session that moves one step each time its state is asked. */
function scripted(steps: Step[]): FollowedSession {
  let i = -1;
  let messages: ChatMessage[] = [
    { role: 'system', content: 'prompt' },
    { role: 'user', content: 'hi' },
  ];
  const base: SessionState = {
    status: 'thinking',
    turn: 1,
    iteration: 1,
    maxIterations: 50,
    runningTools: [],
    pendingApprovals: [],
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    messageCount: 2,
    transcriptBytes: 0,
    run: 1,
  };
  const current = () => steps[Math.min(Math.max(i, 0), steps.length - 1)]!;
  return {
    async state() {
      i += 1;
      const step = current();
      if (step.messages) messages = [...messages, ...step.messages.filter((m) => !messages.includes(m))];
      return { ...base, ...step.state, messageCount: messages.length };
    },
    async messages(from = 0, to?: number) {
      return messages.slice(from, to);
    },
    workflow: {
      async describe() {
        const progress = current().progress;
        if (!progress) return { raw: { pendingActivities: [] } };
        const details = { kind: STREAM_PROGRESS_KIND, attempt: 1, seq: 1, text: '', ...progress };
        return { raw: { pendingActivities: [{ activityType: { name: 'callModelV2' }, heartbeatDetails: { payloads: [defaultPayloadConverter.toPayload(details)] } }] } };
      },
    },
  };
}

async function collect(session: FollowedSession, options = {}): Promise<SessionEvent[]> {
  const events: SessionEvent[] = [];
  for await (const event of followTurn(session, client, { turn: 1, intervalMs: 0, ...options })) events.push(event);
  return events;
}

const call = { id: 'c1', type: 'function' as const, function: { name: 'read_file', arguments: '{}' } };
const ended = { status: 'waiting_for_user' as const, lastTurn: { turn: 1, success: true, status: 'completed' as const, iterations: 2, response: 'Hello world, done.' } };

function texts(events: SessionEvent[]): string[] {
  return events.flatMap((e) => (e.type === 'text' ? [`${e.reply}@${e.offset}:${e.text}`] : e.type === 'restart' ? [`restart ${e.reply}`] : []));
}

test('text from progress as it grows, the rest from the final message; tool events; the end', async () => {
  const events = await collect(
    scripted([
      { state: {}, progress: { text: '' } },
      { state: {}, progress: { text: 'Let me' } },
      { state: {}, progress: { text: 'Let me read' } },
      { state: { status: 'executing_tool', runningTools: [{ id: 'c1', name: 'read_file', detail: 'a.md' }] }, messages: [{ role: 'assistant', content: 'Let me read it.', tool_calls: [call] }] },
      { state: { iteration: 2 }, messages: [{ role: 'tool', tool_call_id: 'c1', content: '{"success":true}' }], progress: { text: 'Hello' } },
      { state: ended, messages: [{ role: 'assistant', content: 'Hello world, done.' }] },
    ]),
  );
  expect(texts(events)).toEqual(['1@0:Let me', '1@6: read', '1@11: it.', '2@0:Hello', '2@5: world, done.']);
  const types = events.map((e) => e.type);
  expect(types).toEqual(['iteration', 'text', 'text', 'text', 'reply_done', 'tool_started', 'tool_finished', 'iteration', 'text', 'text', 'reply_done', 'turn_ended']);
  expect(events.find((e) => e.type === 'tool_started')).toEqual({ type: 'tool_started', turn: 1, id: 'c1', name: 'read_file', detail: 'a.md' });
  expect(events.find((e) => e.type === 'tool_finished')).toMatchObject({ id: 'c1', name: 'read_file', success: true });
});

test('a new attempt starts the reply over: restart, then the whole text from offset 0', async () => {
  const events = await collect(
    scripted([
      { state: {}, progress: { text: 'Hello wor', attempt: 1 } },
      { state: {}, progress: { text: 'He', attempt: 2 } },
      { state: ended, messages: [{ role: 'assistant', content: 'Hello world, done.' }] },
    ]),
  );
  expect(texts(events)).toEqual(['1@0:Hello wor', 'restart 1', '1@0:He', '1@2:llo world, done.']);
});

test('a final text that differs from what was shown (a server that redacted late) restarts the reply', async () => {
  const events = await collect(
    scripted([
      { state: {}, progress: { text: 'key sk-123' } },
      { state: ended, messages: [{ role: 'assistant', content: 'key [redacted]' }] },
    ]),
  );
  expect(texts(events)).toEqual(['1@0:key sk-123', 'restart 1', '1@0:key [redacted]']);
});

test('a reader that reconnects names the reply and offset it reached and gets only what follows', async () => {
  const steps: Step[] = [
    {
      state: { iteration: 2 },
      messages: [
        { role: 'assistant', content: 'First.', tool_calls: [call] },
        { role: 'tool', tool_call_id: 'c1', content: '{"success":true}' },
      ],
      progress: { text: 'Hello wo' },
    },
    { state: ended, messages: [{ role: 'assistant', content: 'Hello world, done.' }] },
  ];
  expect(texts(await collect(scripted(steps), { reply: 2, offset: 5 }))).toEqual(['2@5: wo', '2@8:rld, done.']);
  expect(texts(await collect(scripted(steps)))).toEqual(['1@0:First.', '2@0:Hello wo', '2@8:rld, done.']);
});

test('a session that ended or failed ends the iterator; a reader that stops ends it too', async () => {
  expect(await collect(scripted([{ state: { status: 'failed', turn: 0 } }]))).toEqual([]);
  const abort = new AbortController();
  abort.abort();
  expect(await collect(scripted([{ state: {}, progress: { text: 'x' } }]), { signal: abort.signal })).toEqual([]);
});
