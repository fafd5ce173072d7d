/**
 * The session workflow on a real Temporal dev server with a real worker, the real activities and
 * the real openai client talking HTTP to the fake model server.
 */
import fs from 'node:fs';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { BAD_INPUT, BUSY, MAX_ITERATIONS_EXCEEDED, SESSION_ENDING } from '../../common/failure-types';
import type { ChatMessage, ToolMessage } from '../../common/messages';
import type { TurnResult } from '../../common/session-types';
import { SessionRejectedError } from '../../client/session-client';
import { fault, hang, text, toolCalls } from '../../fake-model/server';
import { type FakeLane, type FakeLanes, type LaneHarness, startLaneHarness } from '../support/fake-lanes';
import { copyExampleBundle, type SessionHarness } from '../support/session-harness';

let h: SessionHarness;
let suite: LaneHarness | undefined;
/** Each test's own script and requests on the shared fake model (the tests run side by side). */
let lanes: FakeLanes;
let bundleCopy: ReturnType<typeof copyExampleBundle>;
let loopwright: Awaited<ReturnType<SessionHarness['startWorker']>>['loopwright'];

beforeAll(async () => {
  suite = await startLaneHarness();
  ({ h, lanes, loopwright } = suite);
  bundleCopy = copyExampleBundle();
}, 120_000);

afterAll(async () => {
  await suite?.close();
  bundleCopy?.cleanup();
});

const WORKFLOW_PATH = '{bundle-root}/workflows/intake/workflow.yaml';

function toolResults(messages: ChatMessage[]): { id: string; result: Record<string, unknown> }[] {
  return messages.filter((m): m is ToolMessage => m.role === 'tool').map((m) => ({ id: m.tool_call_id, result: JSON.parse(m.content) as Record<string, unknown> }));
}

/** A session on `lane`'s copy of the example bundle. */
function startSession(lane: FakeLane, extra: Partial<Parameters<typeof loopwright.start>[0]> = {}) {
  return loopwright.start({ bundlePath: lane.bundle, agentId: 'facilitator', ...extra });
}

test.concurrent('session: several iterations load a workflow, save its output and answer', async () => {
  const m = lanes.open();
  m.enqueue(
    toolCalls([{ name: 'execute_workflow', arguments: { workflow_path: WORKFLOW_PATH }, id: 'call_wf' }]),
    toolCalls([{ name: 'read_file', arguments: { file_path: '{bundle-root}/workflows/intake/template.md' }, id: 'call_read' }]),
    toolCalls([{ name: 'save_output', arguments: { file_path: '{output_folder}/requirements-test.md', content: '# Requirements\n\nA tool library.\n' }, id: 'call_save' }]),
    text('Saved your requirements.'),
  );
  const session = await startSession(m);
  const result = await session.send('*intake');

  expect(result).toMatchObject({ success: true, status: 'completed', iterations: 4, response: 'Saved your requirements.' });
  const turnMessages = await session.turnMessages(result);
  const tools = toolResults(turnMessages);
  expect(tools.map((t) => t.id)).toEqual(['call_wf', 'call_read', 'call_save']);
  expect(tools.every((t) => t.result.success === true)).toBe(true);
  expect(tools[0].result.workflow_name).toBe('intake');
  expect(String(tools[0].result.instructions)).toContain('<step');
  const saved = String(tools[2].result.path);
  // Started without projectRoot, a stand-alone bundle is its own project root: the output lands in the copy's docs/.
  expect(saved).toBe(path.join(fs.realpathSync(m.bundle), 'docs', 'requirements-test.md'));
  expect(fs.readFileSync(saved, 'utf8')).toBe('# Requirements\n\nA tool library.\n');

  // Every model call saw the whole transcript so far, tools included.
  expect(m.requests).toHaveLength(4);
  const last = m.requests[3].body!;
  expect(last.messages!.filter((m) => m.role === 'tool')).toHaveLength(3);
  expect(last.tools!.map((t) => t.function.name).sort()).toEqual(['ask_question', 'edit_file', 'execute_workflow', 'read_file', 'save_output', 'task_completion']);
  expect(last.tool_choice).toBe('auto');
  // The first messages are the system prompt and the critical actions, then the user's message.
  const first = m.requests[0].body!.messages!;
  expect(first[0].role).toBe('system');
  expect(first.some((m) => m.role === 'system' && m.content.includes("[Critical Instruction] Remember the user's name is Sam"))).toBe(true);
  expect(first[first.length - 1]).toEqual({ role: 'user', content: '*intake' });

  const state = await session.state();
  expect(state).toMatchObject({ status: 'waiting_for_user', turn: 1, iteration: 4, maxIterations: 50 });
  expect(state.usage.totalTokens).toBeGreaterThan(0);
  const transcript = await session.messages();
  // user + 4 assistant + 3 tool messages
  expect(result.messageRange).toEqual({ from: transcript.length - 8, to: transcript.length });
  expect(transcript.slice(-8)).toEqual(turnMessages);
  expect(turnMessages[0]).toEqual({ role: 'user', content: '*intake' });
  expect(result.toolCalls).toBe(3);
  await session.end();
  await expect(session.result()).resolves.toMatchObject({ turns: 1, endedBy: 'end_signal' });
});

test.concurrent('session: parallel tool calls run together and their results are appended in call order', async () => {
  const m = lanes.open();
  m.enqueue(
    toolCalls([
      { name: 'read_file', arguments: { file_path: '{bundle-root}/workflows/intake/instructions.md' }, id: 'call_a' },
      { name: 'read_file', arguments: { file_path: '{bundle-root}/config.yaml' }, id: 'call_b' },
      { name: 'execute_workflow', arguments: { workflow_path: '{bundle-root}/workflows/summary/workflow.yaml' }, id: 'call_c' },
    ]),
    text('All three loaded.'),
  );
  // Reads as local activities (inline reads, the default, run them in the model call: inline-reads.test.ts).
  const session = await startSession(m, { inlineReads: false });
  const result = await session.send('load three things');
  expect(result.success).toBe(true);
  expect(toolResults(await session.turnMessages(result)).map((t) => t.id)).toEqual(['call_a', 'call_b', 'call_c']);
  // The second model call came only after all three results were in.
  const second = m.requests[1].body!.messages!;
  expect(second.slice(-3).map((m) => (m as ToolMessage).tool_call_id)).toEqual(['call_a', 'call_b', 'call_c']);

  // Reads run as local activities: all three results were recorded by one workflow task, so they
  // ran together in it rather than one task after another.
  const history = await session.workflow.fetchHistory();
  const kinds = (history.events ?? []).map((e) => {
    if (e.markerRecordedEventAttributes?.markerName === 'core_local_activity') return 'read';
    return e.workflowTaskCompletedEventAttributes ? 'task' : '';
  });
  const markers = kinds.filter(Boolean).join(' ');
  expect(markers).toMatch(/task read read read task/);
  expect(markers.match(/read/g)).toHaveLength(3);
  await session.end();
});

test.concurrent('session: bad tool calls come back to the model as errors and the loop goes on', async () => {
  const m = lanes.open();
  m.enqueue(
    toolCalls([
      { name: 'delete_everything', arguments: {}, id: 'call_unknown' },
      { name: 'read_file', arguments: '{"file_path": ', id: 'call_badjson' },
      { name: 'read_file', arguments: { path: 'x' }, id: 'call_schema' },
      { name: 'read_file', arguments: { file_path: '{bundle-root}/no-such-file.md' }, id: 'call_missing' },
      { name: 'read_file', arguments: { file_path: '{bundle-root}/../../../etc/passwd' }, id: 'call_escape' },
    ]),
    text('I could not load those.'),
  );
  const session = await startSession(m);
  const result = await session.send('try some things');
  expect(result).toMatchObject({ success: true, iterations: 2, response: 'I could not load those.' });
  const byId = Object.fromEntries(toolResults(await session.turnMessages(result)).map((t) => [t.id, t.result]));
  expect(byId.call_unknown).toEqual({ success: false, error: 'Unknown tool: delete_everything' });
  expect(byId.call_badjson.success).toBe(false);
  expect(String(byId.call_badjson.error)).toMatch(/not valid JSON/);
  expect(byId.call_schema.success).toBe(false);
  expect(String(byId.call_schema.error)).toContain('file_path');
  expect(byId.call_missing.success).toBe(false);
  expect(String(byId.call_missing.error)).toContain('ENOENT');
  expect(byId.call_escape).toMatchObject({ success: false, error: 'Security violation: Access denied' });
  await session.end();
});

test.concurrent('session: a turn past maxIterations ends unsuccessfully and keeps the partial transcript', async () => {
  const m = lanes.open();
  m.setResponder(() => toolCalls([{ name: 'read_file', arguments: { file_path: '{bundle-root}/config.yaml' } }]));
  const session = await startSession(m, { maxIterations: 3 });
  const result = await session.send('loop forever');
  expect(result).toMatchObject({ success: false, status: 'max_iterations', iterations: 3, error: 'Agent execution exceeded maximum iterations (3)' });
  expect(m.requests).toHaveLength(3);
  // user + 3 × (assistant + tool)
  expect(result.messageRange.to - result.messageRange.from).toBe(7);
  expect(await session.turnMessages(result)).toHaveLength(7);
  expect((await session.state()).status).toBe('waiting_for_user');
  await session.end();
});

test.concurrent('session: a one-shot run past the limit fails with a stable type carrying the partial result', async () => {
  const m = lanes.open();
  m.setResponder(() => toolCalls([{ name: 'read_file', arguments: { file_path: '{bundle-root}/config.yaml' } }]));
  const session = await startSession(m, { maxIterations: 2, firstMessage: 'loop', oneShot: true });
  const error = await session.result().then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const failure = (error as WorkflowFailedError).cause;
  expect(failure).toBeInstanceOf(ApplicationFailure);
  expect((failure as ApplicationFailure).type).toBe(MAX_ITERATIONS_EXCEEDED);
  expect((failure as ApplicationFailure).nonRetryable).toBe(true);
  const partial = (failure as ApplicationFailure).details?.[0] as TurnResult;
  expect(partial).toMatchObject({ success: false, iterations: 2, error: 'Agent execution exceeded maximum iterations (2)' });
  expect(partial.messageRange.to - partial.messageRange.from).toBe(5);
  expect(await session.turnMessages(partial)).toHaveLength(5);
});

test.concurrent('session: interrupt aborts a slow model call, keeps the transcript, and the next message resumes', async () => {
  const m = lanes.open();
  m.enqueue(hang());
  const session = await startSession(m);
  const turn = session.send('take your time');
  await m.waitForRequests(1, 20_000);
  expect((await session.state()).status).toBe('thinking');

  // A second message while the turn runs is refused.
  await expect(session.send('another')).rejects.toThrow(SessionRejectedError);
  await expect(session.send('another')).rejects.toThrow(/busy/);

  await session.interrupt('changed my mind');
  const interrupted = await turn;
  expect(interrupted).toMatchObject({ success: false, status: 'interrupted' });
  await m.waitForAborts(1, 10_000);
  expect(m.requests[0].aborted).toBe(true);
  expect((await session.state()).status).toBe('interrupted');

  m.enqueue(text('Back again.'));
  const resumed = await session.send('go on');
  expect(resumed).toMatchObject({ success: true, response: 'Back again.', turn: 2 });
  // Both messages reach the model in order; two user messages in a row are sent as one, which strict chat templates need.
  const seen = m.requests[1].body!.messages!.filter((m) => m.role === 'user').map((m) => m.content);
  expect(seen).toEqual(['take your time\n\ngo on']);
  await session.end();
});

test.concurrent('session: interrupt while tools run answers every tool call so the transcript stays valid', async () => {
  const m = lanes.open();
  m.enqueue(toolCalls([{ name: 'read_file', arguments: { file_path: '{bundle-root}/config.yaml' }, id: 'call_ok' }]), hang());
  const session = await startSession(m);
  const turn = session.send('read then think');
  await m.waitForRequests(2, 20_000);
  await session.interrupt();
  const result = await turn;
  expect(result.status).toBe('interrupted');
  expect(toolResults(await session.turnMessages(result)).map((t) => t.id)).toEqual(['call_ok']);
  await session.end();
});

test.concurrent('session: the send validator rejects an empty message', async () => {
  const m = lanes.open();
  const session = await startSession(m);
  await expect(session.send('   ')).rejects.toThrow(/non-empty/);
  await session.end();
});

test.concurrent('session: a 429 with Retry-After is retried after the delay and the turn succeeds', async () => {
  const m = lanes.open();
  m.enqueue(fault(429, { retryAfter: 1 }), text('Worth the wait.'));
  const session = await startSession(m);
  const result = await session.send('hello');
  expect(result).toMatchObject({ success: true, response: 'Worth the wait.', iterations: 1 });
  expect(m.requests).toHaveLength(2);
  expect(m.requests[1].receivedAt - m.requests[0].receivedAt).toBeGreaterThanOrEqual(900);
  await session.end();
});

test.concurrent('session: a 401 fails the turn at once with a message that says what to fix', async () => {
  const m = lanes.open();
  m.enqueue(fault(401, { body: { error: { message: 'Incorrect API key provided: sk-secret', type: 'invalid_request_error', code: 'invalid_api_key' } } }));
  const session = await startSession(m);
  const result = await session.send('hello');
  expect(result.success).toBe(false);
  expect(result.status).toBe('failed');
  expect(result.error).toMatch(/OPENAI_API_KEY/);
  expect(result.error).not.toContain('sk-secret');
  expect(m.requests).toHaveLength(1);
  await session.end();
});

test.concurrent('session: a missing agent fails initialisation with a clear, non-retried error', async () => {
  const m = lanes.open();
  const session = await startSession(m, { agentId: 'nobody' });
  const error = await session.result().then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  expect(String((error as WorkflowFailedError).cause?.message)).toMatch(/nobody/);
});

test.concurrent('session: a mistyped input ends the session at once with LoopwrightBadInput naming the field', async () => {
  const bad = [
    [{ bundlePath: bundleCopy.bundle }, /agentId/],
    [{ bundlePath: bundleCopy.bundle, agentId: 'facilitator', maxIterations: 'many' }, /maxIterations/],
    [{ bundlePath: bundleCopy.bundle, agentId: 'facilitator', timeouts: { tool: 5, toll: '1s' } }, /timeouts/],
  ] as const;
  for (const [input, field] of bad) {
    const handle = await h.client.workflow.start('agentSession', { taskQueue: loopwright.taskQueue, workflowId: `bad-input-${Math.random().toString(36).slice(2)}`, args: [input] });
    const error = await handle.result().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const failure = (error as WorkflowFailedError).cause as ApplicationFailure;
    expect(failure.type).toBe(BAD_INPUT);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toMatch(field);
  }
});

test.concurrent('session: refusals of send carry stable types a client in any language can match', async () => {
  const m = lanes.open();
  m.enqueue(hang());
  const session = await startSession(m);
  const turn = session.send('take your time');
  await m.waitForRequests(1, 20_000);
  const busy = await session.send('another').catch((e: unknown) => e);
  expect(busy).toBeInstanceOf(SessionRejectedError);
  expect((busy as SessionRejectedError).type).toBe(BUSY);
  const empty = await session.send(' ').catch((e: unknown) => e);
  expect((empty as SessionRejectedError).type).toBe(BAD_INPUT);
  // Asked to end while the turn runs: it ends after the turn and takes no more messages.
  await session.end();
  const ending = await session.send('one more').catch((e: unknown) => e);
  expect((ending as SessionRejectedError).type).toBe(SESSION_ENDING);
  await session.interrupt();
  await turn;
  await expect(session.result()).resolves.toMatchObject({ endedBy: 'end_signal' });

  const failed = await startSession(m, { agentId: 'nobody' });
  await failed.result().catch(() => undefined);
  const refused = await failed.send('hello').catch((e: unknown) => e);
  expect(String(refused)).toMatch(/completed|failed/i);
});
