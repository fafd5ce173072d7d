/**
 * Sessions that last: history that grows with the transcript (not its square), continue-as-new
 * that the client follows, limits that end a turn cleanly instead of wedging it, and tools that
 * stop when interrupted. Real dev server, real workers (in process, and a `loopwright worker`
 * process killed with SIGKILL), the real openai client against the fake model server.
 */
import { execFileSync } from 'node:child_process';
import { createActivities } from '../../activities/session-activities';
import { templateSafeMessages } from '../../activities/model/template-safety';
import { toToolActivity, type ToolFunction } from '../../activities/tools/activity-wrapper';
import fs from 'node:fs';
import path from 'node:path';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { type ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { TOO_LARGE } from '../../common/failure-types';
import type { ChatMessage, ToolMessage, ToolResult } from '../../common/messages';
import { SessionRejectedError, type SessionHandle } from '../../client/session-client';
import { delay, fault, type Step, text, toolCalls } from '../../fake-model/server';
import { sendUpdate } from '../../common/contract/session-definitions';
import { type FakeLane, type FakeLanes, type LaneHarness, startLaneHarness } from '../support/fake-lanes';
import { type SessionHarness } from '../support/session-harness';
import { createWorker } from '../../worker/create-worker';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

jest.setTimeout(120_000);

let h: SessionHarness;
let suite: LaneHarness | undefined;
/** Each test's own bundle copy, script and requests on the shared fake model (the tests run side by side). */
let lanes: FakeLanes;
let loopwright: Awaited<ReturnType<SessionHarness['startWorker']>>['loopwright'];
const processes: WorkerProcess[] = [];

beforeAll(async () => {
  suite = await startLaneHarness();
  ({ h, lanes, loopwright } = suite);
}, 120_000);

afterAll(async () => {
  await Promise.all(processes.map((p) => p.kill('SIGKILL')));
  await suite?.close();
});

/** A text file of about `bytes` bytes inside `lane`'s bundle copy; returns its tool path. */
function makeFile(lane: FakeLane, name: string, bytes: number): string {
  const line = 'Requirements are gathered one question at a time, and every answer is kept.\n';
  fs.writeFileSync(path.join(lane.bundle, name), line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes));
  return `{bundle-root}/${name}`;
}

/**
 * A deterministic model: the user message `iterations=N file=F` asks for N model calls, each but
 * the last reading F. It answers from the request alone, so a retried or resumed call gets the
 * same answer.
 */
function loopResponder(request: { body: { messages?: ChatMessage[] } | null }): Step {
  const messages = request.body?.messages ?? [];
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  const match = /iterations=(\d+) file=(\S+)/.exec(String(messages[lastUser]?.content ?? ''));
  if (!match) return text('no loop asked for');
  const call = messages.slice(lastUser).filter((m) => m.role === 'assistant').length + 1;
  if (call >= Number(match[1])) return text(`done after ${call} calls`);
  return toolCalls([{ id: `call_${lastUser}_${call}`, name: 'read_file', arguments: { file_path: match[2] } }]);
}

/**
 * The shortest start of `transcript` that goes on the wire as `count` messages: what a request of
 * that length carried, made safe for strict chat templates (leading system messages merged).
 */
function asSent(transcript: ChatMessage[], count: number): ChatMessage[] {
  for (let n = count; n <= transcript.length; n++) {
    const sent = templateSafeMessages(transcript.slice(0, n));
    if (sent.length === count) return sent;
  }
  throw new Error(`no start of the transcript goes out as ${count} messages`);
}

function scheduled(history: temporal.api.history.v1.IHistory, type: string): temporal.api.history.v1.IHistoryEvent[] {
  return (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type);
}

function payloadBytes(event: temporal.api.history.v1.IHistoryEvent): number {
  return (event.activityTaskScheduledEventAttributes?.input?.payloads ?? []).reduce((n, p) => n + (p.data?.length ?? 0), 0);
}

/** A session on `lane`'s bundle copy. */
function startSession(lane: FakeLane, extra: Partial<Parameters<typeof loopwright.start>[0]> = {}, client = loopwright): Promise<SessionHandle> {
  return client.start({ bundlePath: lane.bundle, agentId: 'facilitator', ...extra });
}

test.concurrent('history: model calls name the transcript instead of carrying it, so history grows with the transcript', async () => {
  const m = lanes.open();
  const file = makeFile(m, 'ten-kb.md', 10_000);
  m.setResponder(loopResponder);
  // A window the 200 KB turn fits in: this is about history, not about the model's window.
  const session = await startSession(m, { context: { window: 1_000_000 } });
  const result = await session.send(`iterations=20 file=${file}`);
  expect(result).toMatchObject({ success: true, iterations: 20, toolCalls: 19 });

  const history = await session.workflow.fetchHistory();
  const calls = scheduled(history, 'callModelV2');
  expect(calls).toHaveLength(20);
  expect(scheduled(history, 'callModel')).toHaveLength(0);
  // No model-call input holds a 10 KB tool result, let alone the whole transcript.
  for (const call of calls) expect(payloadBytes(call)).toBeLessThan(8_000);

  // Every request still carried the whole transcript to the model.
  const transcript = await session.messages();
  const last = m.requests.at(-1)!.body!.messages!;
  expect(last).toEqual(asSent(transcript, last.length));
  const transcriptBytes = Buffer.byteLength(JSON.stringify(transcript));
  const historyBytes = temporal.api.history.v1.History.encode(history).finish().length;
  expect(historyBytes).toBeLessThan(2 * transcriptBytes);
  await session.end();
});

test.concurrent('continue-as-new: a session moves through several runs, mid-turn and between turns, a worker is killed between, and nothing is lost', async () => {
  const m = lanes.open();
  const taskQueue = `long-can-${process.pid}`;
  // The killed worker's session moves to the next one after 300 ms (the sticky timeout; 10 s by default).
  const env = { TEMPORAL_ADDRESS: h.server.address, LOOPWRIGHT_TASK_QUEUE: taskQueue, OPENAI_BASE_URL: h.fake.baseURL, OPENAI_API_KEY: 'test-key', LOOPWRIGHT_STICKY_TIMEOUT: '300ms' };
  const first = await startWorkerProcess(env);
  processes.push(first);
  const { LoopwrightClient } = await import('../../client/session-client');
  const lw = new LoopwrightClient(h.client, taskQueue);
  const file = makeFile(m, 'small.md', 300);
  // Once asked to, the model holds its next reply: the worker is killed while that call is in flight.
  let held: (() => void) | undefined;
  const callHeld = new Promise<void>((resolve) => (held = resolve));
  let holding = false;
  m.setResponder((request) => {
    if (!holding) return loopResponder(request);
    holding = false;
    held!();
    return delay(3_000, loopResponder(request));
  });

  // A worker killed during a model call is noticed within the heartbeat timeout (30 s by default).
  const session = await startSession(m, { continueAsNew: { maxHistoryEvents: 40 }, timeouts: { modelHeartbeat: '2 seconds', toolHeartbeat: '2 seconds' } }, lw);
  const firstRunId = (await session.workflow.describe()).runId;
  const turn1 = session.send(`iterations=12 file=${file}`);
  // Kill the worker once the session has moved to a second run, in the middle of the turn.
  for (let i = 0; i < 400 && (await session.workflow.describe()).runId === firstRunId; i++) await new Promise((r) => setTimeout(r, 25));
  // During a model call rather than a workflow task: a task the killed worker had started would hold
  // the session for the workflow task timeout (10 s) whatever the heartbeat timeout.
  holding = true;
  await callHeld;
  await first.kill('SIGKILL');
  const second = await startWorkerProcess(env);
  processes.push(second);

  const result1 = await turn1;
  expect(result1).toMatchObject({ success: true, status: 'completed', iterations: 12, response: 'done after 12 calls', turn: 1 });
  const result2 = await session.send(`iterations=5 file=${file}`);
  expect(result2).toMatchObject({ success: true, iterations: 5, turn: 2 });
  const result3 = await session.send('iterations=1 file=none');
  expect(result3).toMatchObject({ success: true, iterations: 1, turn: 3 });

  const state = await session.state();
  expect(state.run).toBeGreaterThanOrEqual(4);
  expect(state.turn).toBe(3);

  // The whole conversation, across runs: system messages, then three turns in order.
  const transcript = await session.messages();
  const roles = transcript.map((m) => m.role);
  const firstUser = roles.indexOf('user');
  expect(roles.slice(firstUser)).toEqual([
    'user',
    ...Array(11).fill(['assistant', 'tool']).flat(),
    'assistant',
    'user',
    ...Array(4).fill(['assistant', 'tool']).flat(),
    'assistant',
    'user',
    'assistant',
  ]);
  expect(transcript.slice(result1.messageRange.from, result1.messageRange.to)[0]).toEqual({ role: 'user', content: `iterations=12 file=${file}` });
  // Every model request, in whichever run and on whichever worker, saw exactly the transcript so far.
  for (const request of m.requests) {
    const sent = request.body!.messages!;
    expect(sent).toEqual(asSent(transcript, sent.length));
  }
  // The runs form one chain under one workflow id.
  const runs = new Set<string>();
  for await (const execution of h.client.workflow.list({ query: `WorkflowId = '${session.workflowId}'` })) runs.add(execution.runId);
  expect(runs.size).toBe(state.run);

  // The command line's transcript follows the chain too.
  const out = execFileSync(process.execPath, [path.resolve(__dirname, '../../bin/loopwright.js'), 'transcript', session.workflowId, '--json'], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  expect((JSON.parse(out) as { messages: ChatMessage[] }).messages).toEqual(transcript);
  await session.end();
  await expect(session.result()).resolves.toMatchObject({ turns: 3, endedBy: 'end_signal' });
});

test.concurrent('limits: three reads of a 700 KB file in one turn complete, and the turn result stays small', async () => {
  const m = lanes.open();
  const big = makeFile(m, 'big.md', 700_000);
  m.enqueue(toolCalls([1, 2, 3].map((i) => ({ id: `call_big_${i}`, name: 'read_file', arguments: { file_path: big } }))), text('Read it three times.'));
  // A window large enough for 2.1 MB of results: this is about payloads, not the model's window.
  const session = await startSession(m, { context: { window: 2_000_000 } });
  const result = await session.send('read the big file three times');
  expect(result).toMatchObject({ success: true, response: 'Read it three times.', iterations: 2 });
  expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThan(2_000);
  const second = m.requests[1].body!.messages!;
  const tools = second.filter((m): m is ToolMessage => m.role === 'tool');
  expect(tools.map((t) => t.tool_call_id)).toEqual(['call_big_1', 'call_big_2', 'call_big_3']);
  for (const tool of tools) expect((JSON.parse(tool.content) as { content: string }).content.length).toBe(700_000);
  expect(templateSafeMessages(await session.messages())).toHaveLength(second.length + 1);
  await session.end();
});

test.concurrent('limits: a 5 MB user message is refused with a clear error, and nothing reaches the session', async () => {
  const m = lanes.open();
  const session = await startSession(m);
  const error = await session.send('x'.repeat(5 * 1024 * 1024)).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(SessionRejectedError);
  expect((error as SessionRejectedError).type).toBe(TOO_LARGE);
  expect((error as Error).message).toMatch(/5242880 bytes, over the limit of \d+ bytes/);
  // A client that skips the check is refused by the session's own validator.
  const raw = await session.workflow.executeUpdate(sendUpdate, { args: ['y'.repeat(600 * 1024)] }).catch((e: unknown) => e);
  expect(raw).toBeInstanceOf(WorkflowUpdateFailedError);
  expect(((raw as WorkflowUpdateFailedError).cause as ApplicationFailure).type).toBe(TOO_LARGE);
  expect((await session.state()).turn).toBe(0);
  m.enqueue(text('Still here.'));
  await expect(session.send('hello')).resolves.toMatchObject({ success: true, response: 'Still here.' });
  await session.end();
});

test.concurrent('limits: a model reply over the limit fails the turn at once without asking again', async () => {
  const m = lanes.open();
  m.enqueue(text('z'.repeat(1_200_000)));
  // An output limit the reply fits in: a server that ignores the limit, as far as the loop can tell.
  const session = await startSession(m, { modelSettings: { maxOutputTokens: 1_000_000 } });
  const result = await session.send('say a lot');
  expect(result).toMatchObject({ success: false, status: 'failed' });
  expect(result.error).toMatch(/over the limit of 1000000 bytes/);
  expect(m.requests).toHaveLength(1);
  m.enqueue(text('Shorter now.'));
  await expect(session.send('again, briefly')).resolves.toMatchObject({ success: true, response: 'Shorter now.' });
  await session.end();
});

test.concurrent('limits: a context-length error from the model server is a typed failure, compacted for and asked again once, not retried', async () => {
  const m = lanes.open();
  const tooLong = fault(400, {
    body: { error: { message: "This model's maximum context length is 8192 tokens.", type: 'invalid_request_error', code: 'context_length_exceeded' } },
  });
  m.enqueue(tooLong, tooLong);
  const session = await startSession(m);
  const result = await session.send('hello');
  expect(result).toMatchObject({ success: false, status: 'failed' });
  expect(result.error).toMatch(/too long for the model/);
  // Once as sent, once after compacting; Temporal's retries are not used on it.
  expect(m.requests).toHaveLength(2);
  m.enqueue(text('Fits now.'));
  await expect(session.send('hello again')).resolves.toMatchObject({ success: true, response: 'Fits now.' });
  await session.end();
});

test.concurrent('interrupt: a tool that blocks is cancelled on the worker, the turn ends at once, results stay in call order', async () => {
  const m = lanes.open();
  // A worker whose save_output never finishes its write (a hung disk or network mount), wrapped
  // like every tool activity; reads are the real ones.
  const taskQueue = `long-blocking-${process.pid}`;
  let released: (() => void) | undefined;
  const toolCancelled = new Promise<void>((resolve) => (released = resolve));
  const blockingWrite: ToolFunction = (_ctx, _args, options) => new Promise<ToolResult>(() => options?.signal?.addEventListener('abort', () => released?.()));
  const activities = {
    ...createActivities({ client: h.client, model: { baseURL: h.fake.baseURL, apiKey: 'test-key' } }),
    save_output: toToolActivity('save_output', blockingWrite),
  };
  const worker = await createWorker({ connection: h.nativeConnection, taskQueue, workflowBundle: h.workflowBundle, activities });
  const running = worker.run();
  try {
    const { LoopwrightClient } = await import('../../client/session-client');
    const lw = new LoopwrightClient(h.client, taskQueue);
    m.enqueue(
      toolCalls([
        { id: 'call_save', name: 'save_output', arguments: { file_path: '{output_folder}/never.md', content: 'x' } },
        { id: 'call_config', name: 'read_file', arguments: { file_path: '{bundle-root}/config.yaml' } },
      ]),
    );
    const session = await startSession(m, {}, lw);
    const turn = session.send('save and read');
    for (let i = 0; i < 200; i++) {
      if ((await session.state()).status === 'executing_tool') break;
      await new Promise((r) => setTimeout(r, 25));
    }
    await new Promise((r) => setTimeout(r, 300));
    const interruptedAt = Date.now();
    await session.interrupt();
    const result = await turn;
    expect(result.status).toBe('interrupted');
    expect(Date.now() - interruptedAt).toBeLessThan(5_000);
    const tools = (await session.turnMessages(result)).filter((m): m is ToolMessage => m.role === 'tool');
    expect(tools.map((t) => t.tool_call_id)).toEqual(['call_save', 'call_config']);
    expect(JSON.parse(tools[0]!.content)).toMatchObject({ success: false, error: expect.stringMatching(/Interrupted/) });
    expect(JSON.parse(tools[1]!.content)).toMatchObject({ success: true });

    // The cancellation reached the tool on the worker, and the history records the activity as cancelled.
    await toolCancelled;
    let cancelled = false;
    for (let i = 0; i < 100 && !cancelled; i++) {
      const history = await session.workflow.fetchHistory();
      cancelled = (history.events ?? []).some((e) => e.activityTaskCanceledEventAttributes);
      if (!cancelled) await new Promise((r) => setTimeout(r, 100));
    }
    expect(cancelled).toBe(true);
    await session.end();
    await session.result();
  } finally {
    worker.shutdown();
    await running;
  }
});
