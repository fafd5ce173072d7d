/**
 * The fakes the core unit tests stand on (test/support/workflow-fakes.ts): the mocked
 * `@temporalio/workflow` records logs, metrics and patches and answers `workflowInfo` outside a
 * workflow while keeping the real pure parts; the fake activity stubs record each call with its
 * arguments and summary and answer from the script, failing loudly on a call nobody scripted.
 */
jest.mock('@temporalio/workflow', () => jest.requireActual('../../support/workflow-fakes').fakeWorkflowModule());

import * as wf from '@temporalio/workflow';
import { ActivityFailure, ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { activityCancelled, activityFailure, FakeActivities, readingSession, workflowFake } from '../../support/workflow-fakes';

beforeEach(() => workflowFake.reset());

test('workflow fakes: log, metrics, patched and workflowInfo work outside a workflow and are recorded', () => {
  wf.log.warn('something odd', { turn: 2 });
  wf.metricMeter.createCounter('loopwright_things', 'things').add(2, { kind: 'a' });
  workflowFake.unpatched.add('old-patch');
  expect(wf.patched('new-patch')).toBe(true);
  expect(wf.patched('old-patch')).toBe(false);
  workflowFake.info = { workflowId: 'session-7' };
  expect(wf.workflowInfo()).toMatchObject({ workflowId: 'session-7', runId: 'run-unit' });
  expect(workflowFake.logs).toEqual([{ level: 'warn', message: 'something odd', attrs: { turn: 2 } }]);
  expect(workflowFake.metric('loopwright_things')).toEqual([{ kind: 'counter', name: 'loopwright_things', value: 2, attributes: { kind: 'a' } }]);
  expect(workflowFake.patchesAsked).toEqual(['new-patch', 'old-patch']);
});

test('workflow fakes: the pure parts are the real ones (failure classes, isCancellation, defineSignal)', () => {
  expect(wf.ApplicationFailure).toBe(ApplicationFailure);
  expect(wf.ActivityFailure).toBe(ActivityFailure);
  expect(wf.isCancellation(activityCancelled('read_file'))).toBe(true);
  expect(wf.isCancellation(new CancelledFailure('x'))).toBe(true);
  expect(wf.isCancellation(activityFailure('read_file', 'Oops', 'no'))).toBe(false);
  expect(wf.defineSignal('hello').name).toBe('hello');
});

test('workflow fakes: condition resolves once its predicate holds, and false after a timeout', async () => {
  let ready = false;
  const waiting = wf.condition(() => ready);
  setTimeout(() => (ready = true), 5);
  await expect(waiting).resolves.toBeUndefined();
  await expect(wf.condition(() => false, 20)).resolves.toBe(false);
  await expect(wf.condition(() => true, '1 minute')).resolves.toBe(true);
});

test('workflow fakes: signals, handlers, children and the cancellation scope', async () => {
  const ping = wf.defineSignal<[number]>('ping');
  const got: number[] = [];
  wf.setHandler(ping, (n) => void got.push(n));
  workflowFake.deliver('ping', 4);
  expect(got).toEqual([4]);
  await wf.getExternalWorkflowHandle('other').signal(ping, 5);
  expect(workflowFake.signals).toEqual([{ workflowId: 'other', signal: 'ping', args: [5] }]);
  workflowFake.scriptChildren({ done: true }, new Error('child failed'));
  await expect(wf.executeChild('child', { workflowId: 'c1', args: [] })).resolves.toEqual({ done: true });
  await expect(wf.executeChild('child', { workflowId: 'c2', args: [] })).rejects.toThrow('child failed');
  await expect(wf.executeChild('child', { workflowId: 'c3', args: [] })).rejects.toThrow(/no scripted answer for child workflow child \(c3\)/);
  expect(workflowFake.children.map((c) => c.options.workflowId)).toEqual(['c1', 'c2', 'c3']);
  expect(wf.CancellationScope.current().consideredCancelled).toBe(false);
  workflowFake.scopeCancelled = true;
  expect(wf.CancellationScope.current().consideredCancelled).toBe(true);
});

test('fake activities: calls are recorded with arguments and summaries and answered in script order', async () => {
  const fake = new FakeActivities();
  fake.script('describeModel', { model: 'm', contextWindow: 4096, source: 'props' }, new Error('server gone'));
  await expect(fake.stubs.describeModel.executeWithOptions({ summary: 'first' }, [{ model: 'm' }])).resolves.toMatchObject({ contextWindow: 4096 });
  await expect(fake.stubs.describeModel({ model: 'm' })).rejects.toThrow('server gone');
  await expect(fake.stubs.describeModel({})).rejects.toThrow('no scripted answer for activity describeModel (call 3)');
  fake.respond('read_file', (_ctx: unknown, args: { file_path: string }) => ({ success: true, content: args.file_path }));
  await expect(fake.stubs.localReads.read_file!({} as never, { file_path: 'a.md' })).resolves.toEqual({ success: true, content: 'a.md' });
  expect(fake.calls.map((c) => [c.name, c.summary, c.local])).toEqual([
    ['describeModel', 'first', false],
    ['describeModel', undefined, false],
    ['describeModel', undefined, false],
    ['read_file', undefined, true],
  ]);
  expect(fake.stubs.localReads.save_output).toBeUndefined();
  expect(fake.unused()).toEqual({});
});

test('transcript builders: a reading session is four messages a turn after its system prompt', () => {
  const transcript = readingSession(2, 100);
  expect(transcript.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool', 'assistant']);
  expect(transcript.messages[7]).toMatchObject({ role: 'tool', tool_call_id: 'call_2' });
  expect(transcript.hashAt()).toMatch(/^[0-9a-f]{32}$/);
});
