/**
 * A session's events over real HTTP as server-sent AG-UI events, on a real dev server, worker and
 * streaming fake model:
 * - a streamed turn is read as it arrives: several text deltas before the run ends, joined exactly
 *   into the reply, every event with an id;
 * - a dropped connection resumed with Last-Event-ID (header, or ?lastEventId=) gets exactly the
 *   events after it: nothing lost, nothing repeated, the same as a reader that stayed;
 * - twelve clients on one session share one follower and all get the whole turn;
 * - a connection without an id joins the running turn from its start; one on a finished session
 *   gets 204; a bad id is 400; a client that asks for JSON gets 406.
 * The tests run at the same time (`test.concurrent`), each on its own sessions: the fake model
 * answers each test's messages from that test's script, at that test's pace.
 */
import type { ChatMessage } from '../../common/messages';
import { fault, type RecordedRequest, type Step, text, toolCalls } from '../../fake-model/server';
import { decodeCursor } from '../../serve/events/cursor';
import { api, useServeSuite } from './serve-harness';
import { openEvents, replyTexts, type SseMessage, types } from './sse-reader';

jest.setTimeout(120_000);

const suite = useServeSuite({}, { resetFake: false });
const WORDS = Array.from({ length: 40 }, (_, i) => `word${i + 1}`).join(' ');
const READ = { name: 'read_file', arguments: { file_path: '{bundle-root}/config.yaml' }, id: 'call_read' };
/** Four characters every 20 ms: the forty words take about 1.2 s to write. */
const PACE = { chunkChars: 4, intervalMs: 20 };

/** Each test's replies, in order, by the tag its messages start with. */
const scripts = new Map<string, Step[]>();

/** Script the replies to the messages of `tag`; returns what makes a message of it. */
function script(tag: string, ...steps: Step[]): (said: string) => string {
  scripts.set(tag, steps);
  return (said) => `${tag} ${said}`;
}

/** The next reply of the test whose tag starts the request's last user message. */
function respond(request: RecordedRequest): Step {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const said = String(messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
  return scripts.get(said.split(' ')[0]!)?.shift() ?? fault(500, { message: `no reply scripted for "${said}"` });
}

beforeAll(() => suite.h.fake.setResponder(respond));

async function readySession(): Promise<string> {
  const { base } = suite.serve;
  const created = await api(base, 'POST', '/api/sessions', { bundlePath: suite.bundle, agentId: 'facilitator', modelSettings: { stream: true } });
  const id = String(created.body.id);
  for (let i = 0; i < 200; i++) {
    if ((await api(base, 'GET', `/api/sessions/${id}`)).body.status === 'waiting_for_user') return id;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('session never ready');
}

const finished = (messages: SseMessage[]) => messages.some((m) => m.event.type === 'RUN_FINISHED');

/** Every event but the text deltas and usage, which may be split or joined differently after a resume. */
const structure = (messages: readonly SseMessage[]) => types(messages).filter((t) => t !== 'TEXT_MESSAGE_CONTENT' && t !== 'CUSTOM:loopwright.usage');

test.concurrent('events: a streamed turn arrives as it is written, with ids, joined exactly into the reply', async () => {
  const { base } = suite.serve;
  // The reply stops after its tenth event (36 characters) until released: its first text must reach
  // the stream while the model is certainly still writing, however slow the machine.
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const say = script('[written]', toolCalls([READ], { stream: PACE }), text(WORDS, { stream: { ...PACE, holdAfterChunks: 10, release: held } }));
  const id = await readySession();
  const events = await openEvents(`${base}/api/sessions/${id}/events`);
  expect(events.status).toBe(200);
  expect((await api(base, 'POST', `/api/sessions/${id}/messages`, { text: say('read then answer') })).status).toBe(202);
  const isText = (m: SseMessage) => m.event.type === 'TEXT_MESSAGE_CONTENT';
  await events.waitFor((m) => m.some(isText), 60_000, 'the first text while the model is held');
  const early = events.messages
    .filter(isText)
    .map((m) => String((m.event as { delta?: unknown }).delta ?? ''))
    .join('');
  expect(finished(events.messages)).toBe(false);
  expect(early.length).toBeGreaterThan(0);
  expect(early.length).toBeLessThanOrEqual(36);
  expect(WORDS.startsWith(early)).toBe(true);
  release();
  await events.waitFor(finished, 60_000, 'RUN_FINISHED');
  events.close();
  const got = events.messages;
  expect(got.every((m) => m.id !== undefined && decodeCursor(m.id) !== undefined)).toBe(true);
  expect(structure(got)).toEqual([
    'RUN_STARTED',
    'CUSTOM:loopwright.user_message',
    'STEP_STARTED',
    'TOOL_CALL_START',
    'TOOL_CALL_ARGS',
    'TOOL_CALL_END',
    'TOOL_CALL_RESULT',
    'STEP_FINISHED',
    'STEP_STARTED',
    'TEXT_MESSAGE_START',
    'TEXT_MESSAGE_END',
    'STEP_FINISHED',
    'RUN_FINISHED',
  ]);
  expect(got[0]!.event).toMatchObject({ type: 'RUN_STARTED', threadId: id, runId: `${id}:t1` });
  expect(got.find((m) => m.event.type === 'TOOL_CALL_START')!.event).toMatchObject({ toolCallId: 'call_read', toolCallName: 'read_file' });
  expect(got.find((m) => m.event.type === 'TOOL_CALL_RESULT')!.event).toMatchObject({ toolCallId: 'call_read', content: expect.stringContaining('"success":true') });
  // Pieces before the hold and after it, joined exactly into the reply.
  const deltas = got.filter(isText);
  expect(deltas.length).toBeGreaterThanOrEqual(2);
  expect(replyTexts(got).get(`${id}:t1:r2`)).toBe(WORDS);
  const end = got.find((m) => m.event.type === 'RUN_FINISHED')!;
  expect(end.event).toMatchObject({ runId: `${id}:t1`, result: { turn: 1, status: 'completed', success: true } });
  expect(got.some((m) => m.event.type === 'CUSTOM' && m.event.name === 'loopwright.usage')).toBe(true);
  await api(base, 'POST', `/api/sessions/${id}/end`, {});
});

test.concurrent('events: a dropped connection resumed with Last-Event-ID gets exactly what it missed, also with ?lastEventId=', async () => {
  const { base } = suite.serve;
  const say = script('[resumed]', toolCalls([READ], { stream: PACE }), text(WORDS, { stream: PACE }));
  const id = await readySession();
  const stayed = await openEvents(`${base}/api/sessions/${id}/events`);
  const first = await openEvents(`${base}/api/sessions/${id}/events`);
  await api(base, 'POST', `/api/sessions/${id}/messages`, { text: say('read then answer') });
  // Drop it in the middle of the streamed reply.
  await first.waitFor((m) => m.filter((e) => e.event.type === 'TEXT_MESSAGE_CONTENT').length >= 3, 60_000, 'some text');
  first.close();
  const cut = first.messages.length;
  const lastId = first.messages[cut - 1]!.id!;
  const second = await openEvents(`${base}/api/sessions/${id}/events`, { lastEventId: lastId });
  // Dropped again, at once, and resumed through the query parameter.
  await second.waitFor((m) => m.length >= 1, 60_000, 'one event');
  second.close();
  const third = await openEvents(`${base}/api/sessions/${id}/events?lastEventId=${encodeURIComponent(second.lastId()!)}`);
  await third.waitFor(finished, 60_000, 'RUN_FINISHED');
  await stayed.waitFor(finished, 60_000, 'RUN_FINISHED');
  third.close();
  stayed.close();
  const joined = [...first.messages.slice(0, cut), ...second.messages, ...third.messages];
  expect(structure(joined)).toEqual(structure(stayed.messages));
  expect(replyTexts(joined)).toEqual(replyTexts(stayed.messages));
  expect(replyTexts(joined).get(`${id}:t1:r2`)).toBe(WORDS);
  // No id repeats: each event was sent once over the three connections.
  const ids = joined.map((m) => m.id);
  expect(new Set(ids).size).toBe(ids.length);
  await api(base, 'POST', `/api/sessions/${id}/end`, {});
});

test.concurrent('events: twelve clients on one session share one follower and each gets the whole turn', async () => {
  const { base, context } = suite.serve;
  const say = script('[twelve]', text(WORDS, { stream: PACE }));
  const id = await readySession();
  const readers = await Promise.all(Array.from({ length: 12 }, () => openEvents(`${base}/api/sessions/${id}/events`)));
  await api(base, 'POST', `/api/sessions/${id}/messages`, { text: say('hello') });
  await readers[0]!.waitFor((m) => m.some((e) => e.event.type === 'TEXT_MESSAGE_CONTENT'), 60_000, 'text');
  // The session's one feed has the twelve (the other tests' sessions have feeds of their own).
  expect(context.feeds.feed(id).size).toBe(12);
  await Promise.all(readers.map((r) => r.waitFor(finished, 60_000, 'RUN_FINISHED')));
  for (const reader of readers) {
    expect(replyTexts(reader.messages).get(`${id}:t1:r1`)).toBe(WORDS);
    expect(structure(reader.messages)).toEqual(structure(readers[0]!.messages));
    reader.close();
  }
  await api(base, 'POST', `/api/sessions/${id}/end`, {});
});

test.concurrent('events: joining late starts at the running turn from its start; the stream goes on with the next turn', async () => {
  const { base } = suite.serve;
  const say = script('[late]', text(WORDS, { stream: PACE }), text('the second turn', { stream: PACE }));
  const id = await readySession();
  await api(base, 'POST', `/api/sessions/${id}/messages`, { text: say('hello') });
  const late = await openEvents(`${base}/api/sessions/${id}/events`);
  await late.waitFor(finished, 60_000, 'RUN_FINISHED');
  expect(types(late.messages).slice(0, 2)).toEqual(['RUN_STARTED', 'CUSTOM:loopwright.user_message']);
  expect(replyTexts(late.messages).get(`${id}:t1:r1`)).toBe(WORDS);
  await api(base, 'POST', `/api/sessions/${id}/messages`, { text: say('more') });
  await late.waitFor((m) => m.filter((e) => e.event.type === 'RUN_FINISHED').length === 2, 60_000, 'the second run');
  expect(replyTexts(late.messages).get(`${id}:t2:r1`)).toBe('the second turn');
  // Ended: the stream closes, and a new connection gets 204.
  await api(base, 'POST', `/api/sessions/${id}/end`, {});
  await late.ended;
  for (let i = 0; i < 100 && (await api(base, 'GET', `/api/sessions/${id}`)).body.status !== 'completed'; i++) await new Promise((r) => setTimeout(r, 50));
  expect((await openEvents(`${base}/api/sessions/${id}/events`)).status).toBe(204);
});

test.concurrent('events: a session that continues as new in the middle of turns and between them: the stream goes on, every turn whole', async () => {
  const { base } = suite.serve;
  const stream = { chunkChars: 16, intervalMs: 5 };
  const read = (id: string) => ({ name: 'read_file', arguments: { file_path: '{bundle-root}/config.yaml' }, id });
  const steps = [1, 2, 3].flatMap((t) => [toolCalls([read(`c${t}a`)], { stream }), toolCalls([read(`c${t}b`)], { stream }), toolCalls([read(`c${t}c`)], { stream }), text(`done ${t}`, { stream })]);
  const say = script('[continued]', ...steps);
  const created = await api(base, 'POST', '/api/sessions', { bundlePath: suite.bundle, agentId: 'facilitator', modelSettings: { stream: true }, continueAsNew: { maxHistoryEvents: 40 } });
  const id = String(created.body.id);
  for (let i = 0; i < 200 && (await api(base, 'GET', `/api/sessions/${id}`)).body.status !== 'waiting_for_user'; i++) await new Promise((r) => setTimeout(r, 50));
  const reader = await openEvents(`${base}/api/sessions/${id}/events`);
  for (let t = 1; t <= 3; t++) {
    expect((await api(base, 'POST', `/api/sessions/${id}/messages`, { text: say(`go ${t}`) })).body).toEqual({ turn: t });
    await reader.waitFor((m) => m.filter((e) => e.event.type === 'RUN_FINISHED').length === t, 60_000, `RUN_FINISHED ${t}`);
  }
  reader.close();
  expect((await api(base, 'GET', `/api/sessions/${id}`)).body.run).toBeGreaterThan(1);
  const all = types(reader.messages);
  expect(all).not.toContain('RUN_ERROR');
  expect(all.filter((t) => t === 'RUN_STARTED')).toHaveLength(3);
  expect(all.filter((t) => t === 'TOOL_CALL_RESULT')).toHaveLength(9);
  const texts = replyTexts(reader.messages);
  for (let t = 1; t <= 3; t++) expect(texts.get(`${id}:t${t}:r4`)).toBe(`done ${t}`);
  await api(base, 'POST', `/api/sessions/${id}/end`, {});
});

test.concurrent("events: after a rewind the stream goes on with the session's next turn", async () => {
  const { base } = suite.serve;
  const say = script('[rewound]', text('one'), text('two'), text('after the rewind'));
  const id = await readySession();
  const reader = await openEvents(`${base}/api/sessions/${id}/events`);
  for (let t = 1; t <= 2; t++) {
    await api(base, 'POST', `/api/sessions/${id}/messages`, { text: say(`message ${t}`) });
    await reader.waitFor((m) => m.filter((e) => e.event.type === 'RUN_FINISHED').length === t, 60_000, `RUN_FINISHED ${t}`);
  }
  expect((await api(base, 'POST', `/api/sessions/${id}/rewind`, { turn: 1 })).status).toBe(200);
  for (let i = 0; i < 200 && (await api(base, 'GET', `/api/sessions/${id}`)).body.turn !== 1; i++) await new Promise((r) => setTimeout(r, 50));
  expect((await api(base, 'POST', `/api/sessions/${id}/messages`, { text: say('again') })).body).toEqual({ turn: 2 });
  await reader.waitFor((m) => m.filter((e) => e.event.type === 'RUN_FINISHED').length === 3, 60_000, 'the run after the rewind');
  reader.close();
  expect(replyTexts(reader.messages).get(`${id}:t2:r1`)).toBe('twoafter the rewind');
  const last = reader.messages.filter((m) => m.event.type === 'RUN_STARTED').at(-1)!;
  expect(last.event.runId).toBe(`${id}:t2`);
  await api(base, 'POST', `/api/sessions/${id}/end`, {});
});

test.concurrent('events: a bad event id is 400, an unknown session 404, a client that wants JSON 406', async () => {
  const { base } = suite.serve;
  const id = await readySession();
  expect((await openEvents(`${base}/api/sessions/${id}/events`, { lastEventId: 'not-an-id!' })).status).toBe(400);
  expect((await openEvents(`${base}/api/sessions/${id}/events`, { lastEventId: Buffer.from('[1,1,2]').toString('base64url') })).status).toBe(400);
  expect((await openEvents(`${base}/api/sessions/no-such-session/events`)).status).toBe(404);
  expect((await openEvents(`${base}/api/sessions/${id}/events`, { headers: { accept: 'application/json' } })).status).toBe(406);
  await api(base, 'POST', `/api/sessions/${id}/end`, {});
});
