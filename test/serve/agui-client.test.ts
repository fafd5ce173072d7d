/**
 * An unmodified AG-UI client drives sessions through `POST /api/agui`: @ag-ui/client's HttpAgent,
 * with nothing of ours on the client side. A new thread starts a session from `forwardedProps`;
 * the agent's run streams the turn (text as it is written, a tool call with its result) and ends
 * with the run; a second run on the same thread is the session's next turn.
 */
import { HttpAgent } from '@ag-ui/client';
import { text, toolCalls } from '../../fake-model/server';
import { api, useServeSuite } from './serve-harness';

jest.setTimeout(120_000);

const suite = useServeSuite();
const WORDS = Array.from({ length: 30 }, (_, i) => `word${i + 1}`).join(' ');

test('agui: HttpAgent starts a session on a new thread, streams the turn, and runs the next turn on the same thread', async () => {
  const { base } = suite.serve;
  suite.h.fake.setStreaming({ chunkChars: 4, intervalMs: 20 });
  // The answer stops after 10 of its chunks until the agent has its first piece: it streams in
  // pieces, whatever the machine's pace.
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const answer = text(WORDS, { stream: { chunkChars: 4, intervalMs: 20, holdAfterChunks: 10, release: held } });
  suite.h.fake.enqueue(toolCalls([{ name: 'read_file', arguments: { file_path: '{bundle-root}/config.yaml' }, id: 'call_read' }]), answer, text('second turn'));
  const threadId = `agui-${Date.now()}`;
  const agent = new HttpAgent({ url: `${base}/api/agui`, threadId });
  agent.addMessage({ id: 'u1', role: 'user', content: 'read then answer' });
  const deltas: string[] = [];
  const seen: string[] = [];
  agent.subscribe({
    onEvent: ({ event }) => void seen.push(event.type),
    onTextMessageContentEvent: ({ event }) => {
      deltas.push(event.delta);
      release();
    },
  });
  const first = await agent.runAgent({ forwardedProps: { bundlePath: suite.bundle, agentId: 'facilitator', modelSettings: { stream: true } } });
  expect(seen[0]).toBe('RUN_STARTED');
  expect(seen.at(-1)).toBe('RUN_FINISHED');
  expect(deltas.length).toBeGreaterThan(1);
  // The first piece came while the model was held: part of the answer, not all of it.
  expect(deltas[0]!.length).toBeGreaterThan(0);
  expect(WORDS.startsWith(deltas[0]!) && deltas[0]!.length <= 40).toBe(true);
  expect(deltas.join('')).toBe(WORDS);
  expect(first.result).toMatchObject({ turn: 1, status: 'completed', success: true });
  const assistant = agent.messages.filter((m) => m.role === 'assistant');
  expect(assistant.flatMap((m) => ('toolCalls' in m ? (m.toolCalls ?? []) : [])).map((c) => c.function.name)).toEqual(['read_file']);
  expect(agent.messages.some((m) => m.role === 'tool' && m.toolCallId === 'call_read')).toBe(true);
  expect(assistant.at(-1)).toMatchObject({ content: WORDS });
  // The thread is the session.
  expect((await api(base, 'GET', `/api/sessions/${threadId}`)).body).toMatchObject({ id: threadId, turn: 1 });

  agent.addMessage({ id: 'u2', role: 'user', content: 'and now?' });
  const second = await agent.runAgent();
  expect(second.result).toMatchObject({ turn: 2, status: 'completed' });
  expect(agent.messages.filter((m) => m.role === 'assistant').at(-1)).toMatchObject({ content: 'second turn' });
  await api(base, 'POST', `/api/sessions/${threadId}/end`, {});
});

test('agui: a thread that is no session and names no bundle is a 404; a run without a user message a 400', async () => {
  const { base } = suite.serve;
  const missing = await api(base, 'POST', '/api/agui', { threadId: 'no-such-thread', runId: 'r', messages: [{ id: 'm', role: 'user', content: 'hi' }], tools: [], context: [] });
  expect(missing.status).toBe(404);
  expect(missing.body.error).toMatchObject({ type: 'NotFound', field: 'threadId' });
  const empty = await api(base, 'POST', '/api/agui', { threadId: 'x', runId: 'r', messages: [], tools: [], context: [] });
  expect(empty.body.error).toMatchObject({ type: 'BadRequest', field: 'messages' });
});
