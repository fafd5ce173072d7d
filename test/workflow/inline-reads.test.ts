/**
 * Inline reads on the dev server: a reply's built-in reads run in its model-call activity and come
 * back with the reply (no local activity, no second activation), the rest of a reply's calls run as
 * before, the worker is sent the runtime context and the tool definitions once per run and again
 * after it lost them (a new worker), reads that need approval are never run inline, and
 * `inlineReads: false` keeps every read a local activity.
 *
 * The tests run side by side, each on a fake-model lane (its own copy of the example bundle); the
 * one that replaces its worker has a worker and task queue of its own.
 */
import type { History } from '@temporalio/common/lib/proto-utils';
import { defaultPayloadConverter } from '@temporalio/common';
import type { InlineReads, ModelRefCallInput } from '../../common/activity-types';
import type { ModelCallResult } from '../../common/model-call';
import type { ChatMessage, ToolMessage } from '../../common/messages';
import type { LoopwrightClient } from '../../client/session-client';
import { text, toolCalls } from '../../fake-model/server';
import { type FakeLane, type FakeLanes, type LaneHarness, startLaneHarness } from '../support/fake-lanes';
import { type SessionHarness } from '../support/session-harness';

jest.setTimeout(60_000);

let h: SessionHarness;
let suite: LaneHarness | undefined;
/** Each test's own script and requests on the shared fake model (the tests run side by side). */
let lanes: FakeLanes;
let loopwright: LoopwrightClient;

beforeAll(async () => {
  suite = await startLaneHarness();
  ({ h, lanes, loopwright } = suite);
});

afterAll(async () => {
  await suite?.close();
});

const CONFIG = '{bundle-root}/config.yaml';
const INSTRUCTIONS = '{bundle-root}/workflows/intake/instructions.md';

/** A session on `lane`'s copy of the example bundle. */
function start(lane: FakeLane, extra: Partial<Parameters<LoopwrightClient['start']>[0]> = {}, client = loopwright) {
  return client.start({ bundlePath: lane.bundle, agentId: 'facilitator', ...extra });
}

/** The model calls of a history: each one's input and (when it completed) its result. */
function modelCalls(history: History): { input: ModelRefCallInput; result?: ModelCallResult }[] {
  const events = history.events ?? [];
  const calls = new Map<string, { input: ModelRefCallInput; result?: ModelCallResult }>();
  for (const e of events) {
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name === 'callModelV2') {
      calls.set(String(e.eventId), { input: defaultPayloadConverter.fromPayload(scheduled.input!.payloads![0]!) });
    }
    const completed = e.activityTaskCompletedEventAttributes;
    const call = completed ? calls.get(String(completed.scheduledEventId)) : undefined;
    if (call && completed) call.result = defaultPayloadConverter.fromPayload(completed.result!.payloads![0]!);
  }
  return [...calls.values()];
}

function localActivities(history: History): number {
  return (history.events ?? []).filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length;
}

function toolResults(messages: ChatMessage[]): { id: string; result: Record<string, unknown> }[] {
  return messages.filter((m): m is ToolMessage => m.role === 'tool').map((m) => ({ id: m.tool_call_id, result: JSON.parse(m.content) as Record<string, unknown> }));
}

test.concurrent('inline reads: a reply that only reads is one model-call activity, its results appended in call order', async () => {
  const m = lanes.open();
  m.enqueue(
    toolCalls([
      { name: 'read_file', arguments: { file_path: INSTRUCTIONS }, id: 'call_a' },
      { name: 'read_file', arguments: { file_path: CONFIG }, id: 'call_b' },
      { name: 'read_file', arguments: { file_path: '{bundle-root}/no-such-file.md' }, id: 'call_c' },
    ]),
    toolCalls([{ name: 'read_file', arguments: { file_path: CONFIG }, id: 'call_d' }]),
    text('Read them.'),
  );
  const session = await start(m);
  const result = await session.send('read three things');
  expect(result).toMatchObject({ success: true, iterations: 3, toolCalls: 4 });
  const tools = toolResults(await session.turnMessages(result));
  expect(tools.map((t) => t.id)).toEqual(['call_a', 'call_b', 'call_c', 'call_d']);
  expect(tools.map((t) => t.result.success)).toEqual([true, true, false, true]);
  expect(tools[2]!.result.error).toMatch(/ENOENT|not found|no such file/i);
  // The model's second request carried the three results, in call order.
  const second = m.requests[1]!.body!.messages!;
  expect(second.slice(-3).map((m) => (m as ToolMessage).tool_call_id)).toEqual(['call_a', 'call_b', 'call_c']);

  const history = await session.workflow.fetchHistory();
  expect(localActivities(history)).toBe(0);
  const calls = modelCalls(history);
  expect(calls).toHaveLength(3);
  // The runtime context goes with the run's first call only; the worker keeps it.
  expect(calls[0]!.input.inline).toMatchObject({ tools: ['read_file', 'execute_workflow'], context: { bundleRoot: expect.any(String) } });
  expect(calls[1]!.input.inline).toEqual({ tools: ['read_file', 'execute_workflow'] });
  // Likewise the tool definitions: later calls name them by key.
  expect(calls[0]!.input.tools?.length).toBeGreaterThan(0);
  expect(calls[0]!.input.toolsKey).toMatch(/^[0-9a-f]{32}$/);
  expect(calls[1]!.input.tools).toBeUndefined();
  expect(calls[1]!.input.toolsKey).toBe(calls[0]!.input.toolsKey);
  // The model got the definitions with every request all the same.
  expect(m.requests.map((r) => (r.body!.tools as unknown[] | undefined)?.length)).toEqual([6, 6, 6]);
  expect(calls[0]!.result!.toolResults).toHaveLength(3);
  expect(calls[0]!.result!.toolResults!.every((r) => r !== null)).toBe(true);
  expect(calls[2]!.result!.toolResults).toBeUndefined();
  await session.end();
});

test.concurrent('inline reads: the writes of a reply still run as their own activities, after the reads ran inline', async () => {
  const m = lanes.open();
  m.enqueue(
    toolCalls([
      { name: 'read_file', arguments: { file_path: CONFIG }, id: 'call_read' },
      { name: 'save_output', arguments: { file_path: '{output_folder}/inline-test.md', content: '# Inline\n' }, id: 'call_save' },
      { name: 'read_file', arguments: '{"file_path": ', id: 'call_badjson' },
    ]),
    text('Done.'),
  );
  const session = await start(m);
  const result = await session.send('read and save');
  expect(result.success).toBe(true);
  const tools = toolResults(await session.turnMessages(result));
  expect(tools.map((t) => t.id)).toEqual(['call_read', 'call_save', 'call_badjson']);
  expect(tools[0]!.result.success).toBe(true);
  expect(tools[1]!.result.success).toBe(true);
  // Arguments that are not JSON are answered by the workflow, with its usual text.
  expect(tools[2]!.result).toMatchObject({ success: false, error: expect.stringMatching(/not valid JSON/) });
  const history = await session.workflow.fetchHistory();
  const [first] = modelCalls(history);
  expect(first!.result!.toolResults).toEqual([expect.objectContaining({ success: true }), null, null]);
  const scheduled = (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
  expect(scheduled).toContain('save_output');
  expect(localActivities(history)).toBe(0);
  await session.end();
});

test.concurrent('inline reads: off for a session that says so, and never for a read that needs approval', async () => {
  const m = lanes.open();
  m.enqueue(toolCalls([{ name: 'read_file', arguments: { file_path: CONFIG }, id: 'call_off' }]), text('Off.'));
  const off = await start(m, { inlineReads: false });
  await expect(off.send('read')).resolves.toMatchObject({ success: true });
  const offHistory = await off.workflow.fetchHistory();
  expect(localActivities(offHistory)).toBe(1);
  expect(modelCalls(offHistory).every((c) => c.input.inline === undefined)).toBe(true);
  await off.end();

  m.enqueue(toolCalls([{ name: 'execute_workflow', arguments: { workflow_path: '{bundle-root}/workflows/intake/workflow.yaml' }, id: 'call_wf' }]), text('Loaded.'));
  const approving = await start(m, { approval: { policy: ['read_file'] } });
  await expect(approving.send('load')).resolves.toMatchObject({ success: true });
  const [first] = modelCalls(await approving.workflow.fetchHistory());
  // read_file waits for a yes, so only execute_workflow may run inline.
  expect((first!.input.inline as InlineReads).tools).toEqual(['execute_workflow']);
  expect(first!.result!.toolResults).toEqual([expect.objectContaining({ success: true })]);
  await approving.end();
});

test.concurrent('inline reads: a new worker without the definitions and the runtime context gets them again; the reads of that reply run as local activities', async () => {
  const m = lanes.open();
  // A worker of its own (the other tests keep theirs), replaced after the first turn.
  const { loopwright: client, taskQueue, stop } = await h.startWorker();
  m.enqueue(toolCalls([{ name: 'read_file', arguments: { file_path: CONFIG }, id: 'call_1' }]), text('First.'));
  const session = await start(m, {}, client);
  await expect(session.send('first')).resolves.toMatchObject({ success: true });
  // Replace the worker: the new one holds no context for this run.
  await stop();
  await h.startWorker({ taskQueue });
  m.enqueue(
    toolCalls([{ name: 'read_file', arguments: { file_path: CONFIG }, id: 'call_2' }]),
    toolCalls([{ name: 'read_file', arguments: { file_path: INSTRUCTIONS }, id: 'call_3' }]),
    text('Second.'),
  );
  const second = await session.send('second');
  expect(second).toMatchObject({ success: true, iterations: 3 });
  expect(toolResults(await session.turnMessages(second)).map((t) => [t.id, t.result.success])).toEqual([
    ['call_2', true],
    ['call_3', true],
  ]);
  const history = await session.workflow.fetchHistory();
  const calls = modelCalls(history);
  expect(calls).toHaveLength(6);
  // The new worker holds neither the definitions nor the context: the first call, naming the
  // definitions by key, fails at once, and the workflow sends it again with them.
  expect(calls[2]!.input.tools).toBeUndefined();
  expect(calls[2]!.result).toBeUndefined();
  const failed = (history.events ?? []).filter((e) => e.activityTaskFailedEventAttributes);
  expect(failed.map((e) => e.activityTaskFailedEventAttributes!.failure?.applicationFailureInfo?.type)).toEqual(['LoopwrightToolsUnknown']);
  expect(calls[3]!.input.tools?.length).toBeGreaterThan(0);
  expect(calls[3]!.input.inline?.context).toBeUndefined();
  expect(calls[3]!.result).toMatchObject({ inlineNeedsContext: true });
  expect(calls[3]!.result!.toolResults).toBeUndefined();
  // Sent again with the next call, and the reads of that reply ran inline.
  expect(calls[4]!.input.inline?.context).toMatchObject({ bundleRoot: expect.any(String) });
  expect(calls[4]!.result!.toolResults).toEqual([expect.objectContaining({ success: true })]);
  expect(localActivities(history)).toBe(1);
  await session.end();
});
