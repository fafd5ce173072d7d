/**
 * A human in the loop, decided in the workflow from recorded facts: approvals before tools run,
 * loop-breaking tools (ask_question, task_completion), a warning before the iteration limit,
 * `extend`, an interactive limit that keeps the work, and turns that end `stuck` on a call that
 * keeps failing. Real dev server, worker and openai client against the fake model server.
 */
import fs from 'node:fs';
import path from 'node:path';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { ChatMessage, ToolMessage } from '../../common/messages';
import type { SessionState } from '../../common/session-types';
import type { SessionHandle } from '../../client/session-client';
import { type Step, text, toolCalls } from '../../fake-model/server';
import { approveUpdate, denyUpdate, extendUpdate } from '../../common/contract/session-definitions';
import { type SessionHarness } from '../support/session-harness';
import { type FakeLane, type FakeLanes, type LaneHarness, startLaneHarness } from '../support/fake-lanes';

jest.setTimeout(60_000);

let h: SessionHarness;
let suite: LaneHarness | undefined;
/** Each test's own copy of the example bundle, script and requests on the shared fake model (the tests run side by side). */
let lanes: FakeLanes;
let loopwright: Awaited<ReturnType<SessionHarness['startWorker']>>['loopwright'];

beforeAll(async () => {
  suite = await startLaneHarness();
  ({ h, lanes, loopwright } = suite);
}, 120_000);

afterAll(async () => {
  await suite?.close();
});

/** A session on `lane`'s copy of the example bundle. */
function startSession(lane: FakeLane, extra: Partial<Parameters<typeof loopwright.start>[0]> = {}): Promise<SessionHandle> {
  return loopwright.start({ bundlePath: lane.bundle, agentId: 'facilitator', ...extra });
}

async function waitForState(session: SessionHandle, test: (s: SessionState) => boolean): Promise<SessionState> {
  for (let i = 0; i < 400; i++) {
    const state = await session.state();
    if (test(state)) return state;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('state never matched');
}

function toolResult(messages: ChatMessage[], id: string): Record<string, unknown> {
  const message = messages.find((m): m is ToolMessage => m.role === 'tool' && m.tool_call_id === id);
  if (!message) throw new Error(`no result for ${id}`);
  return JSON.parse(message.content) as Record<string, unknown>;
}

const SAVE = { name: 'save_output', arguments: { file_path: '{output_folder}/approved.md', content: '# Approved\n' } };

test.concurrent('approvals: a write waits for a human yes, listed in state with its path and a preview; approved, it runs', async () => {
  const m = lanes.open();
  m.enqueue(toolCalls([{ ...SAVE, id: 'call_save' }]), text('Saved.'));
  const session = await startSession(m, { approval: { policy: 'writes' } });
  const turn = session.send('save it');
  const waiting = await waitForState(session, (s) => s.pendingApprovals.length > 0);
  expect(waiting.status).toBe('waiting_for_approval');
  expect(waiting.pendingApprovals).toEqual([expect.objectContaining({ callId: 'call_save', tool: 'save_output', preview: expect.stringContaining('# Approved') })]);
  expect(waiting.pendingApprovals[0]!.path).toMatch(/approved\.md$/);
  expect(waiting.pendingApprovals[0]!.path).not.toContain('{output_folder}');
  const saved = path.join(m.bundle, 'docs', 'approved.md');
  expect(fs.existsSync(saved)).toBe(false);
  // Nothing is pending under another id.
  await expect(session.workflow.executeUpdate(approveUpdate, { args: ['call_other'] })).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
  await expect(session.workflow.executeUpdate(approveUpdate, { args: ['call_save'] })).resolves.toEqual(['call_save']);
  await expect(turn).resolves.toMatchObject({ success: true, response: 'Saved.' });
  expect(fs.readFileSync(saved, 'utf8')).toBe('# Approved\n');
  expect((await session.state()).pendingApprovals).toEqual([]);
  await session.end();
});

test.concurrent('approvals: a denied call becomes a result saying the user declined, and the model goes on; a timeout decides by default', async () => {
  const m = lanes.open();
  m.enqueue(toolCalls([{ ...SAVE, id: 'call_save' }]), text('Understood, not saved.'));
  const session = await startSession(m, { approval: { policy: 'all' } });
  const turn = session.send('save it');
  await waitForState(session, (s) => s.pendingApprovals.length > 0);
  await session.workflow.executeUpdate(denyUpdate, { args: [null, 'not in that folder'] });
  const result = await turn;
  expect(result).toMatchObject({ success: true, response: 'Understood, not saved.' });
  const messages = await session.turnMessages(result);
  expect(toolResult(messages, 'call_save')).toEqual({ success: false, declined: true, error: 'The user declined this call: not in that folder' });
  expect(m.requests[1]!.body!.messages!.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_save' });

  m.enqueue(toolCalls([{ name: 'read_file', arguments: { file_path: '{bundle-root}/config.yaml' }, id: 'call_read' }]), text('No answer, so I stopped.'));
  const timed = await startSession(m, { approval: { policy: ['read_file'], timeout: '1 second' } });
  const timedResult = await timed.send('read it');
  expect(toolResult(await timed.turnMessages(timedResult), 'call_read')).toMatchObject({ success: false, declined: true, error: expect.stringMatching(/no answer within 1 second/) });
  await session.end();
  await timed.end();
});

test.concurrent('ask_question ends the turn with the question; the next message becomes its result and the transcript stays valid', async () => {
  const m = lanes.open();
  m.enqueue(toolCalls([{ name: 'ask_question', arguments: { question: 'Which street is the library for?' }, id: 'call_q' }]), text('Elm Street it is.'));
  const session = await startSession(m);
  const asked = await session.send('*intake');
  expect(asked).toMatchObject({ status: 'waiting_for_user', response: 'Which street is the library for?', question: { callId: 'call_q' } });
  expect((await session.state()).pendingQuestion).toEqual({ callId: 'call_q', question: 'Which street is the library for?' });
  const answered = await session.send('Elm Street');
  expect(answered).toMatchObject({ success: true, response: 'Elm Street it is.' });
  const sent = m.requests[1]!.body!.messages!;
  expect(sent.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_q', content: JSON.stringify({ success: true, answer: 'Elm Street' }) });
  expect(sent.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['*intake']);
  expect((await session.state()).pendingQuestion).toBeUndefined();
  await session.end();
});

test.concurrent('task_completion ends the turn with its summary; a session can turn the loop-breaking tools off', async () => {
  const m = lanes.open();
  m.enqueue(toolCalls([{ name: 'task_completion', arguments: { summary: 'Requirements saved to docs/prd.md.' }, id: 'call_done' }]));
  const session = await startSession(m);
  const done = await session.send('finish');
  expect(done).toMatchObject({ success: true, status: 'completed', response: 'Requirements saved to docs/prd.md.', iterations: 1 });
  expect(toolResult(await session.turnMessages(done), 'call_done')).toEqual({ success: true, completed: true });

  m.enqueue(toolCalls([{ name: 'task_completion', arguments: { summary: 'x' }, id: 'call_off' }]), text('Carrying on.'));
  const off = await startSession(m, { loopBreakers: false });
  const result = await off.send('finish');
  expect(m.requests.at(-1)!.body!.tools!.map((t) => t.function.name)).not.toContain('task_completion');
  expect(toolResult(await off.turnMessages(result), 'call_off')).toEqual({ success: false, error: 'Unknown tool: task_completion' });
  await session.end();
  await off.end();
});

const READ_CONFIG: Step = toolCalls([{ name: 'read_file', arguments: { file_path: '{bundle-root}/config.yaml' } }]);

test.concurrent('limits: the model is told once near the limit; at the limit an interactive turn keeps its work and "continue" goes on', async () => {
  const m = lanes.open();
  m.setResponder(() => READ_CONFIG);
  const session = await startSession(m, { maxIterations: 5 });
  const result = await session.send('loop');
  expect(result).toMatchObject({ success: false, status: 'max_iterations', iterations: 5 });
  expect(result.response).toMatch(/reached this turn's limit of 5 iterations.*"continue"/);
  const notices = (await session.turnMessages(result)).filter((m) => m.role === 'system');
  expect(notices).toHaveLength(1);
  expect(notices[0]!.content).toMatch(/4 of this turn's 5 iterations are used; 1 remain/);
  m.setResponder(undefined);
  m.enqueue(text('Finished now.'));
  await expect(session.send('continue')).resolves.toMatchObject({ success: true, response: 'Finished now.', turn: 2 });
  await session.end();
});

test.concurrent("limits: extend raises the running turn's limit", async () => {
  const m = lanes.open();
  let calls = 0;
  m.setResponder(() => (++calls < 8 ? { kind: 'delay', ms: 100, step: READ_CONFIG } : text('Done after extending.')));
  const session = await startSession(m, { maxIterations: 4 });
  const turn = session.send('work');
  await waitForState(session, (s) => s.iteration >= 2);
  await expect(session.workflow.executeUpdate(extendUpdate, { args: [10] })).resolves.toBe(14);
  const result = await turn;
  expect(result).toMatchObject({ success: true, iterations: 8, response: 'Done after extending.' });
  // No turn runs: nothing to extend.
  await expect(session.workflow.executeUpdate(extendUpdate, { args: [5] })).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
  await session.end();
});

test.concurrent('repeated errors: the model is told after the second identical failure, and the third ends the turn stuck', async () => {
  const m = lanes.open();
  m.setResponder(() => toolCalls([{ name: 'read_file', arguments: { file_path: '{bundle-root}/missing.md' } }]));
  const session = await startSession(m);
  const result = await session.send('read it');
  expect(result).toMatchObject({ success: false, status: 'stuck', iterations: 3 });
  expect(result.response).toMatch(/same call kept failing \(3 times\): read_file .*missing\.md.*ENOENT/);
  const notices = (await session.turnMessages(result)).filter((m) => m.role === 'system');
  expect(notices).toHaveLength(1);
  expect(notices[0]!.content).toMatch(/failed 2 times with the same error/);
  await session.end();
});

test.concurrent('rewind: Temporal reset takes a session back to the end of a turn; later turns are gone and the next message goes on from there', async () => {
  const m = lanes.open();
  m.setResponder((request) => {
    const users = (request.body?.messages ?? []).filter((m) => m.role === 'user').map((m) => m.content);
    return text(`turn ${users.length}: ${users.at(-1)}`);
  });
  const session = await startSession(m);
  await session.send('first');
  const afterFirst = await session.messages();
  await session.send('second');
  await session.send('third');
  const before = (await session.workflow.describe()).runId;

  const { runId } = await session.rewind(1);
  expect(runId).not.toBe(before);
  expect((await session.workflow.describe()).runId).toBe(runId);
  const state = await waitForState(session, (s) => s.status === 'waiting_for_user');
  expect(state.turn).toBe(1);
  expect(await session.messages()).toEqual(afterFirst);
  // The conversation goes on from the end of turn 1.
  await expect(session.send('another second')).resolves.toMatchObject({ turn: 2, response: 'turn 2: another second' });
  const users = (await session.messages()).filter((m) => m.role === 'user').map((m) => m.content);
  expect(users).toEqual(['first', 'another second']);
  // The Web UI shows the reset: the old run says it was reset.
  const old = await h.client.workflow.getHandle(session.workflowId, before).describe();
  expect(old.status.name).toBe('TERMINATED');
  await expect(session.rewind(2)).rejects.toThrow(/latest turn/);
  await expect(session.rewind(7)).rejects.toThrow(/did not end/);
  await session.end();
});

test.concurrent('rewind and branch reach a first message given at start and turns of runs the session continued from', async () => {
  const m = lanes.open();
  m.setResponder((request) => {
    const users = (request.body?.messages ?? []).filter((m) => m.role === 'user').map((m) => m.content);
    return text(`turn ${users.length}: ${users.at(-1)}`);
  });
  // A first message, then enough turns that the session continues as new twice.
  const session = await startSession(m, { firstMessage: 'opening', continueAsNew: { maxHistoryEvents: 12 } });
  await waitForState(session, (s) => s.status === 'waiting_for_user' && s.turn === 1);
  const afterOpening = await session.messages();
  for (const word of ['two', 'three', 'four', 'five']) await session.send(word);
  const state = await session.state();
  expect(state.run).toBeGreaterThan(1);
  const runOfTurn1 = (await session.turnEnd(1)).runId;
  expect(runOfTurn1).not.toBe((await session.workflow.describe()).runId);

  // Branch at the first message: the new session holds the opening turn alone.
  const branch = await loopwright.branch(session.workflowId, 1);
  await waitForState(branch, (s) => s.status === 'waiting_for_user');
  expect(await branch.messages()).toEqual(afterOpening);
  await expect(branch.send('elsewhere')).resolves.toMatchObject({ turn: 2, response: 'turn 2: elsewhere' });
  await branch.end();

  // Rewind to the end of the first message's turn, in the session's first run.
  await session.rewind(1);
  const back = await waitForState(session, (s) => s.status === 'waiting_for_user');
  expect(back.turn).toBe(1);
  expect(await session.messages()).toEqual(afterOpening);
  await expect(session.send('second try')).resolves.toMatchObject({ turn: 2, response: 'turn 2: second try' });
  await session.end();
});

test.concurrent('branch: a new session starts from the first k turns of another; the source is untouched', async () => {
  const m = lanes.open();
  m.setResponder((request) => {
    const users = (request.body?.messages ?? []).filter((m) => m.role === 'user').map((m) => m.content);
    return text(`turn ${users.length}: ${users.at(-1)}`);
  });
  const source = await startSession(m);
  await source.send('alpha');
  await source.send('beta');
  const afterTwo = await source.messages();
  await source.send('gamma');
  const sourceTranscript = await source.messages();

  const branch = await loopwright.branch(source.workflowId, 2);
  expect(branch.workflowId).not.toBe(source.workflowId);
  const state = await waitForState(branch, (s) => s.status === 'waiting_for_user');
  expect(state.turn).toBe(2);
  expect(await branch.messages()).toEqual(afterTwo);
  await expect(branch.send('delta')).resolves.toMatchObject({ turn: 3, response: 'turn 3: delta' });
  const users = (await branch.messages()).filter((m) => m.role === 'user').map((m) => m.content);
  expect(users).toEqual(['alpha', 'beta', 'delta']);
  expect(await source.messages()).toEqual(sourceTranscript);
  await branch.end();
  await source.end();
});
