/**
 * Recorded sessions as evaluations, on the real dev server with the fake model: three sessions are
 * recorded (one reading then saving a file over two turns, one whose writes wait for approval,
 * one reading two files at once), one of them exported to a history file; then an eval replays
 * them against a second responder with planted differences (a wrong argument on a write, more
 * tokens, a skipped read). The report finds exactly those; read-only calls that match the
 * recording are answered from it (no activity for them in the candidate's history); the diverging
 * write runs in the scratch copy and the project is left as it was.
 *
 * The tests run side by side on one worker and fake model: each has a folder of its own holding its
 * project and the eval's scratch copies, and a fake-model lane on it (the recorded sessions' and the
 * candidates' requests name paths inside it).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChatMessage } from '../../common/messages';
import type { SessionState } from '../../common/session-types';
import type { EvalCaseReport } from '../../common/eval/eval-types';
import type { SessionHandle } from '../../client/session-client';
import { startEval } from '../../client/eval-client';
import { exportSession } from '../../client/session-export';
import { decodeJsonPayload, fetchSessionHistory } from '../../activities/eval/history-json';
import type { JsonPayload } from '../../common/eval/extract-recording';
import { isSummaryRequest, type RecordedRequest, type Step, text, toolCalls } from '../../fake-model/server';
import { EXAMPLE_BUNDLE, type SessionHarness } from '../support/session-harness';
import { type FakeLane, type FakeLanes, type LaneHarness, startLaneHarness } from '../support/fake-lanes';
import { verdict, writeVerifyBundle } from '../support/verify-bundle';
import { writeDelegationBundle } from '../support/delegation-bundle';
import { createWorker } from '../../worker/create-worker';
import { defineScorer } from '../../activities/eval/scorers';
import { LoopwrightClient } from '../../client/session-client';
import { brokenRules, parseRule } from '../../common/eval/thresholds';

jest.setTimeout(120_000);

const CANDIDATE = 'candidate-model';
let h: SessionHarness;
let suite: LaneHarness | undefined;
/** Each test's own script and requests on the shared fake model (the tests run side by side). */
let lanes: FakeLanes;
let loopwright: LoopwrightClient;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-eval-'));
  suite = await startLaneHarness();
  ({ h, lanes, loopwright } = suite);
}, 120_000);
afterAll(async () => {
  await suite?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A folder of the test's own under `dir` (its project, the eval's scratch copies and report), and a lane on it. */
function openLane(prefix: string): { folder: string; m: FakeLane } {
  const folder = fs.mkdtempSync(path.join(dir, prefix));
  return { folder, m: lanes.open(folder) };
}

/** The last user message and how many model replies followed it (the step of the turn). */
function where(request: RecordedRequest): { message: string; step: number } {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const last = messages.map((m) => m.role).lastIndexOf('user');
  return { message: String(messages[last]?.content ?? ''), step: messages.slice(last).filter((m) => m.role === 'assistant').length };
}

const TEMPLATE = { file_path: '{bundle-root}/workflows/intake/template.md' };
const INSTRUCTIONS = { file_path: '{bundle-root}/workflows/intake/instructions.md' };

/** The recorded behaviour, and the candidate's with its planted differences (`request.body.model` tells them apart). */
function responder(request: RecordedRequest): Step {
  const candidate = request.body?.model === CANDIDATE;
  const { message, step } = where(request);
  if (message === 'write notes') {
    if (step === 0) return toolCalls([{ name: 'read_file', arguments: TEMPLATE }]);
    // Planted: the candidate saves under another name (a wrong argument on a write).
    if (step === 1) return toolCalls([{ name: 'save_output', arguments: { file_path: `{output_folder}/${candidate ? 'notes-v2' : 'notes'}.md`, content: '# Notes\n' } }]);
    return text('Saved the notes.');
  }
  if (message === 'read them back') {
    if (step === 0) return toolCalls([{ name: 'read_file', arguments: { file_path: '{output_folder}/notes.md' } }]);
    return text('They say: Notes.');
  }
  if (message === 'save twice') {
    if (step === 0) return toolCalls([{ name: 'save_output', arguments: { file_path: '{output_folder}/approved.md', content: '# Yes\n' } }]);
    if (step === 1) return toolCalls([{ name: 'save_output', arguments: { file_path: '{output_folder}/denied.md', content: '# No\n' } }]);
    // Planted: the candidate spends more tokens on its answer.
    return text('One saved, one declined.', candidate ? { usage: { prompt_tokens: 20_000, completion_tokens: 900 } } : {});
  }
  if (message === 'read both') {
    // Planted: the candidate skips the second read.
    if (step === 0)
      return toolCalls(
        candidate
          ? [{ name: 'read_file', arguments: TEMPLATE }]
          : [
              { name: 'read_file', arguments: TEMPLATE },
              { name: 'read_file', arguments: INSTRUCTIONS },
            ],
      );
    return text('Read them.');
  }
  return text(`no script for ${message}`);
}

async function waitForState(session: SessionHandle, test: (s: SessionState) => boolean): Promise<SessionState> {
  for (let i = 0; i < 400; i++) {
    const state = await session.state();
    if (test(state)) return state;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('state never matched');
}

/** The activities a session ran (scheduled, and local ones by their markers), sorted. */
async function activitiesRun(workflowId: string): Promise<string[]> {
  const names: string[] = [];
  for (const run of await fetchSessionHistory(h.client, workflowId)) {
    for (const event of run.events) {
      const scheduled = event.activityTaskScheduledEventAttributes as { activityType?: { name?: string } } | undefined;
      if (scheduled) names.push(scheduled.activityType?.name ?? '?');
      const marker = event.markerRecordedEventAttributes as { markerName?: string; details?: { data?: { payloads?: JsonPayload[] } } } | undefined;
      if (marker?.markerName === 'core_local_activity') names.push(`local ${(decodeJsonPayload(marker.details!.data!.payloads![0]!) as { activity_type: string }).activity_type}`);
    }
  }
  return names.sort();
}

/** Every file under `root` with a hash of its content. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) walk(full);
      else out[path.relative(root, full)] = crypto.createHash('sha256').update(fs.readFileSync(full)).digest('hex');
    }
  };
  walk(root);
  return out;
}

test.concurrent('eval: recorded sessions replayed against a candidate; the report finds exactly the planted differences', async () => {
  const { folder, m } = openLane('core-');
  // The project: a copy of the example bundle (the scratch copies go beside it, in the test's folder).
  const projectRoot = path.join(folder, 'project');
  const bundle = path.join(projectRoot, path.basename(EXAMPLE_BUNDLE));
  fs.cpSync(EXAMPLE_BUNDLE, bundle, { recursive: true });
  m.setResponder(responder);
  const base = { bundlePath: bundle, agentId: 'facilitator', projectRoot };

  // Recorded: a read then a write, and a read of what was written in a second turn.
  const notes = await loopwright.start({ ...base, workflowId: `rec-notes-${process.pid}` });
  expect(await notes.send('write notes')).toMatchObject({ status: 'completed', response: 'Saved the notes.' });
  expect(await notes.send('read them back')).toMatchObject({ status: 'completed' });
  await notes.end();
  // Recorded: two writes that wait for approval; the first approved, the second denied.
  const approvals = await loopwright.start({ ...base, workflowId: `rec-approvals-${process.pid}`, approval: { policy: 'writes' } });
  const turn = approvals.send('save twice');
  await waitForState(approvals, (s) => s.pendingApprovals.length === 1);
  await approvals.approve();
  await waitForState(approvals, (s) => s.pendingApprovals.some((p) => p.path?.endsWith('denied.md') === true));
  await approvals.deny(undefined, 'not that one');
  expect(await turn).toMatchObject({ status: 'completed', response: 'One saved, one declined.' });
  await approvals.end();
  // Recorded, then exported to a file: two reads in one reply.
  const both = await loopwright.start({ ...base, workflowId: `rec-both-${process.pid}` });
  await both.send('read both');
  await both.end();
  await both.result();
  const exported = path.join(folder, 'read-both.json');
  fs.writeFileSync(exported, JSON.stringify(await exportSession(h.client, both.workflowId, { payloads: 'decoded' })));

  const before = snapshot(projectRoot);
  const requestsBefore = m.requests.length;
  const scratchRoot = path.join(folder, 'scratch');
  const evaluation = await startEval(loopwright, {
    sources: [notes.workflowId, approvals.workflowId, exported],
    candidate: { model: CANDIDATE },
    scratchRoot,
    reportPath: path.join(folder, 'report.json'),
    keepScratch: true,
    concurrency: 2,
    workflowId: `eval-core-${process.pid}`,
  });
  const summary = await evaluation.result();
  expect(summary).toMatchObject({ total: 3, scored: 3, errors: 0, statusChanged: 0, trajectoryChanged: 2, reportCases: 3 });
  const report = await evaluation.report();
  const [a, b, c] = report.cases as [EvalCaseReport, EvalCaseReport, EvalCaseReport];
  expect(report.cases.map((x) => x.name)).toEqual([notes.workflowId, approvals.workflowId, 'read-both']);

  // A wrong argument on a write: the trajectory's first difference, a diverged call that ran in the scratch copy.
  expect(a.statusChanged).toBe(false);
  expect(a.trajectory).toEqual({
    same: false,
    firstDifference: expect.objectContaining({
      turn: 1,
      index: 1,
      kind: 'arguments',
      baseline: expect.objectContaining({ tool: 'save_output' }),
      candidate: expect.objectContaining({ tool: 'save_output', arguments: expect.stringContaining('notes-v2.md') }),
    }),
  });
  expect(a.turns.map((t) => t.trajectory.same)).toEqual([false, true]);
  expect(a.replay).toMatchObject({ answered: 2, ran: 0, diverged: 1, divergedCalls: [expect.objectContaining({ turn: 1, tool: 'save_output', action: 'run' })] });
  // More tokens, nothing else: approvals decided as recorded.
  expect(b.statusChanged).toBe(false);
  expect(b.trajectory.same).toBe(true);
  expect(b.replay).toMatchObject({ answered: 0, ran: 2, diverged: 0, approvalsAsRecorded: 2, approvalsByRule: 0 });
  expect(b.candidate!.usage.totalTokens).toBeGreaterThan(b.baseline!.usage.totalTokens + 15_000);
  expect(a.candidate!.usage.totalTokens).toBeLessThan(a.baseline!.usage.totalTokens * 1.2);
  // A skipped step, read from the exported file.
  expect(c.source).toEqual({ file: exported });
  expect(c.trajectory.firstDifference).toMatchObject({ turn: 1, index: 1, kind: 'missing', baseline: { tool: 'read_file' } });
  expect(c.replay).toMatchObject({ answered: 1, diverged: 0 });
  for (const x of report.cases) expect(x.error).toBeUndefined();

  // Read-only calls that matched were answered from the recording: no read_file activity or local activity in the candidate's history.
  // Turn 1: model, (read answered), model, save_output (ran), model; turn 2: model, (read answered), model; a turn is loaded per recorded turn, and once more to end.
  const ran = await activitiesRun(a.candidateWorkflowId);
  expect(ran.filter((n) => n !== 'checkPins')).toEqual([
    ...Array<string>(5).fill('callModelV2'),
    'describeModel',
    'initializeAgent',
    'listTools',
    ...Array<string>(3).fill('loadEvalTurn'),
    'save_output',
  ]);
  expect(await activitiesRun(c.candidateWorkflowId)).not.toContain('read_file');
  // The candidates asked the model once per recorded iteration (the planted skip aside).
  expect(m.requests.length - requestsBefore).toBe(3 + 2 + 3 + 2);

  // The diverging write ran in the scratch copy; the project is untouched.
  expect(snapshot(projectRoot)).toEqual(before);
  expect(fs.readFileSync(path.join(a.workspace!.path, 'docs', 'notes-v2.md'), 'utf8')).toBe('# Notes\n');
  expect(fs.existsSync(path.join(projectRoot, 'docs', 'notes-v2.md'))).toBe(false);
  expect(fs.existsSync(path.join(projectRoot, 'docs', 'notes.md'))).toBe(true);
});

/** The spec writer: runs its workflow, saves the spec, answers; the candidate also lists the docs folder first (a read the recording has not). */
function specResponder(request: RecordedRequest): Step {
  const candidate = request.body?.model === CANDIDATE;
  // The verifier's call: the recording's spec passes every item, the candidate's fails "Names the users".
  if (JSON.stringify(request.body?.response_format ?? '').includes('checklist_result')) return candidate ? verdict({ 2: 'no users are named' }) : verdict();
  const { step } = where(request);
  const calls = [
    toolCalls([{ name: 'execute_workflow', arguments: { workflow_path: '{bundle-root}/workflows/spec/workflow.yaml' } }]),
    toolCalls([{ name: 'save_output', arguments: { file_path: '{output_folder}/spec.md', content: 'Goal: faster invoices.' } }]),
    text('Saved.'),
  ];
  if (candidate) calls.unshift(toolCalls([{ name: 'read_file', arguments: { file_path: '{bundle-root}/workflows/spec/extra-notes.md' } }]));
  return calls[Math.min(step, calls.length - 1)]!;
}

test.concurrent('eval: a failed checklist item, a call stubbed by the divergence rule, a custom scorer, and a candidate that continues as new mid-turn', async () => {
  const { folder, m } = openLane('spec-');
  const root = path.join(folder, 'project');
  fs.mkdirSync(root);
  const bundle = writeVerifyBundle(root);
  // A worker with a custom scorer that checks the candidate's scratch copy.
  const taskQueue = `eval-scorers-${process.pid}`;
  const seen: string[] = [];
  const specSaved = defineScorer({
    name: 'spec-saved',
    score: ({ workspace, name }) => {
      seen.push(name);
      const saved = fs.existsSync(path.join(workspace!, 'docs', 'spec.md'));
      return { passed: saved, value: saved ? 1 : 0, note: saved ? 'docs/spec.md is there' : 'no docs/spec.md' };
    },
  });
  const worker = await createWorker({
    connection: h.nativeConnection,
    taskQueue,
    workflowBundle: h.workflowBundle,
    activityOptions: { model: { baseURL: h.fake.baseURL, apiKey: 'test-key' } },
    scorers: [specSaved],
  });
  const running = worker.run();
  try {
    const loopwright = new LoopwrightClient(h.client, taskQueue);
    m.setResponder(specResponder);
    // Recorded: the spec saved and verified at the first attempt; every run is short (it continues as new every 25 events).
    const session = await loopwright.start({
      bundlePath: bundle,
      agentId: 'writer',
      projectRoot: root,
      outputRoots: [path.join(root, 'docs')],
      verify: { maxAttempts: 1 },
      continueAsNew: { maxHistoryEvents: 25 },
    });
    expect(await session.send('*spec')).toMatchObject({ status: 'completed', verification: { status: 'verified' } });
    await session.end();
    await session.result();
    const before = snapshot(root);

    const evaluation = await startEval(loopwright, {
      sources: [session.workflowId],
      candidate: { model: CANDIDATE },
      replay: { onDivergence: 'stub' },
      scorers: ['spec-saved', 'not-registered'],
      scratchRoot: path.join(folder, 'scratch-spec'),
      reportPath: path.join(folder, 'report-spec.json'),
    });
    const summary = await evaluation.result();
    expect(summary).toMatchObject({ total: 1, scored: 1, errors: 0, statusChanged: 1, trajectoryChanged: 1 });
    const [c] = (await evaluation.report()).cases as [EvalCaseReport];
    // The checklist item the candidate's document fails: the turn ends failed_verification where the recording verified.
    expect(c.turns[0]).toMatchObject({
      statusChanged: true,
      baseline: { status: 'completed', verification: { status: 'verified', failed: 0 } },
      candidate: { status: 'failed_verification', verification: { failed: 1 } },
    });
    expect(c.baseline!.checks).toEqual({ verified: 1, failed: 0 });
    expect(c.candidate!.checks).toEqual({ verified: 0, failed: 1 });
    // The extra read was answered with a stub (no activity): the rest matched the recording.
    expect(c.trajectory.firstDifference).toMatchObject({ turn: 1, index: 0, kind: 'extra', candidate: { tool: 'read_file' } });
    expect(c.replay).toMatchObject({ answered: 1, ran: 1, diverged: 1, divergedCalls: [expect.objectContaining({ tool: 'read_file', action: 'stub' })] });
    expect(await activitiesRun(c.candidateWorkflowId)).not.toContain('read_file');
    // The candidate continued as new (mid-turn), and its recording reads across its runs.
    const runs = await fetchSessionHistory(h.client, c.candidateWorkflowId);
    expect(runs.length).toBeGreaterThan(1);
    const carried = runs.slice(1).map((run) => {
      const started = run.events[0]!.workflowExecutionStartedEventAttributes as { input: { payloads: JsonPayload[] } };
      return (decodeJsonPayload(started.input.payloads[0]!) as { continued: { pendingTurn?: unknown; replay?: { usedCalls: number[] } } }).continued;
    });
    // At least one hand-over came mid-turn, carrying the recorded calls the turn had used.
    expect(carried.some((x) => x.pendingTurn !== undefined && x.replay !== undefined && x.replay.usedCalls.length > 0)).toBe(true);
    // The scorer ran once, on the scratch copy; a scorer the worker lacks is an error outcome, not a failed eval.
    expect(seen).toEqual([session.workflowId]);
    expect(c.scorers).toEqual([
      { name: 'spec-saved', passed: true, value: 1, note: 'docs/spec.md is there' },
      { name: 'not-registered', error: 'this worker has no scorer not-registered (load it with --scorer-module)' },
    ]);
    expect(brokenRules(c, ['checks-failed', 'status-changed', 'scorer-failed'].map(parseRule)).map((b) => b.rule)).toEqual(['checks-failed', 'status-changed', 'scorer-failed']);
    // Scratch copies are removed once scored; the project is as it was.
    expect(fs.readdirSync(path.join(folder, 'scratch-spec'))).toEqual([]);
    expect(snapshot(root)).toEqual(before);
  } finally {
    worker.shutdown();
    await running;
  }
});

test.concurrent('eval: a recording with a delegation replays with the same trajectory (the child runs again, live, in the scratch copy), and the project stays as it was', async () => {
  const { folder, m } = openLane('team-');
  const root = path.join(folder, 'project');
  fs.mkdirSync(root);
  const bundle = writeDelegationBundle(root);
  m.setResponder((request) => {
    const { message, step } = where(request);
    if (message === 'Plan the login page') {
      if (step === 0) return toolCalls([{ id: 'd1', name: 'delegate_task', arguments: { agent: 'pm', task: 'Write three requirements for a login page.' } }]);
      return text('The PM wrote them.');
    }
    if (message === 'Write three requirements for a login page.') return text('1. Email. 2. Reset. 3. Lockout.');
    return text(`no script for ${message}`);
  });
  const session = await loopwright.start({ bundlePath: bundle, agentId: 'lead', projectRoot: root, outputRoots: [path.join(root, 'docs')] });
  expect(await session.send('Plan the login page')).toMatchObject({ status: 'completed', delegations: 1 });
  await session.end();
  await session.result();
  const before = snapshot(root);

  const evaluation = await startEval(loopwright, {
    sources: [session.workflowId],
    candidate: { model: CANDIDATE },
    scratchRoot: path.join(folder, 'scratch-team'),
    reportPath: path.join(folder, 'report-team.json'),
  });
  const summary = await evaluation.result();
  expect(summary).toMatchObject({ total: 1, scored: 1, errors: 0, statusChanged: 0, trajectoryChanged: 0 });
  const [c] = (await evaluation.report()).cases as [EvalCaseReport];
  expect(c.turns[0]).toMatchObject({ statusChanged: false, baseline: { status: 'completed' }, candidate: { status: 'completed' } });
  expect(c.trajectory.firstDifference).toBeUndefined();
  // The delegation is not answered from the recording: its child session runs again, live, in the scratch copy.
  expect(c.replay).toMatchObject({ answered: 0, diverged: 0 });
  const child = await h.client.workflow.getHandle(`${c.candidateWorkflowId}-t1-i1-d1`).describe();
  expect(child.status.name).toBe('COMPLETED');
  expect(snapshot(root)).toEqual(before);
});

test.concurrent('eval: a recording whose context was compacted replays with the same trajectory, the candidate compacting too', async () => {
  const { folder, m } = openLane('compact-');
  const root = path.join(folder, 'project');
  fs.mkdirSync(root);
  const bundle = writeVerifyBundle(root);
  fs.writeFileSync(path.join(root, 'log.md'), `${'a line of the harbour log, read again and again\n'.repeat(60)}`);
  m.setResponder((request) => {
    if (isSummaryRequest(request)) return text('Summary: the user had the log read several times.');
    const { message, step } = where(request);
    if (step === 0) return toolCalls([{ name: 'read_file', arguments: { file_path: path.join(root, 'log.md') } }]);
    return text(`Read it (${message}).`);
  });
  const session = await loopwright.start({ bundlePath: bundle, agentId: 'writer', projectRoot: root, outputRoots: [path.join(root, 'docs')], context: { window: 4096, keepRecent: 1 } });
  for (let i = 1; i <= 4; i++) expect(await session.send(`read the log ${i}`)).toMatchObject({ status: 'completed' });
  expect((await session.state()).context?.compactions).toBeGreaterThan(0);
  await session.end();
  await session.result();

  const evaluation = await startEval(loopwright, {
    sources: [session.workflowId],
    candidate: { model: CANDIDATE },
    scratchRoot: path.join(folder, 'scratch-compact'),
    reportPath: path.join(folder, 'report-compact.json'),
  });
  expect(await evaluation.result()).toMatchObject({ total: 1, scored: 1, errors: 0, statusChanged: 0, trajectoryChanged: 0 });
  const [c] = (await evaluation.report()).cases as [EvalCaseReport];
  expect(c.turns).toHaveLength(4);
  // The reads matched the recording and were answered from it.
  expect(c.replay).toMatchObject({ answered: 4, diverged: 0 });
  expect((await loopwright.session(c.candidateWorkflowId).state()).context?.compactions).toBeGreaterThan(0);
});
