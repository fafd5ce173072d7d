/**
 * The verify phase on the real dev server: a bundle workflow whose checklist checks the document it
 * saves. The (scripted) agent saves a document that fails an item, is told which, fixes it and
 * passes on the second attempt; a document that keeps failing ends the turn `failed_verification`
 * with its report after the third attempt; a `validate-workflow` menu item checks on demand; and
 * the phase can be turned off. The verifier's replies come from the fake model like the agent's.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChatMessage } from '../../common/messages';
import type { SessionState, TurnResult } from '../../common/session-types';
import type { LoopwrightClient, SessionHandle } from '../../client/session-client';
import { text, toolCalls } from '../../fake-model/server';
import { verdict, writeVerifyBundle } from '../support/verify-bundle';
import { type FakeLane, type FakeLanes, type LaneHarness, startLaneHarness } from '../support/fake-lanes';

jest.setTimeout(90_000);

let suite: LaneHarness | undefined;
/** Each test's own script and requests on the shared fake model (the tests run side by side). */
let lanes: FakeLanes;
let loopwright: LoopwrightClient;
/** The tests' project folders, removed at the end. */
const roots: string[] = [];

beforeAll(async () => {
  suite = await startLaneHarness();
  ({ lanes, loopwright } = suite);
}, 120_000);

afterAll(async () => {
  await suite?.close();
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

/**
 * A test's own project: the spec bundle in `root/spec-bundle`, documents in `root/docs`, and a lane
 * on `root` (the agent's prompts name the bundle's files, the verifier's the document's path).
 */
interface Project {
  m: FakeLane;
  root: string;
  bundle: string;
}

function openProject(): Project {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'lw-verify-')));
  roots.push(root);
  const bundle = writeVerifyBundle(root);
  return { m: lanes.open(root), root, bundle };
}

function start(project: Project, extra: Partial<Parameters<LoopwrightClient['start']>[0]> = {}): Promise<SessionHandle> {
  return loopwright.start({ bundlePath: project.bundle, agentId: 'writer', projectRoot: project.root, outputRoots: [path.join(project.root, 'docs')], ...extra });
}

const runWorkflow = toolCalls([{ id: 'w1', name: 'execute_workflow', arguments: { workflow_path: '{bundle-root}/workflows/spec/workflow.yaml' } }]);
const save = (id: string, content: string) => toolCalls([{ id, name: 'save_output', arguments: { file_path: '{output_folder}/spec.md', content } }]);

/** The requests that were verification calls (they ask for the checklist_result format). */
function verifyRequests(lane: FakeLane): { index: number; body: Record<string, unknown> }[] {
  return lane.requests.map((r, index) => ({ index, body: r.body as Record<string, unknown> })).filter((r) => JSON.stringify(r.body?.response_format ?? '').includes('checklist_result'));
}

const systemNotes = (messages: ChatMessage[]): string[] => messages.filter((m) => m.role === 'system').map((m) => String(m.content));

test.concurrent('a saved document fails one item, the agent fixes it, and the second attempt verifies it', async () => {
  const project = openProject();
  const { m, root } = project;
  m.enqueue(
    runWorkflow,
    save('s1', 'Goal: faster invoices.'),
    text('Saved the spec.'),
    verdict({ 2: 'no users are named' }),
    save('s2', 'Goal: faster invoices.\nUsers: the finance team.'),
    text('Fixed: the spec names the users now.'),
    verdict(),
  );
  const session = await start(project);
  const result = await session.send('*spec');
  expect(result).toMatchObject({ success: true, status: 'completed', response: 'Fixed: the spec names the users now.' });
  expect(result.verification).toMatchObject({ status: 'verified', attempts: 2, maxAttempts: 3, passed: 3, failed: 0, source: 'workflow', name: 'spec' });
  expect(result.verification!.document).toBe(fs.realpathSync(path.join(root, 'docs/spec.md')));
  expect(result.verification!.items.map((i) => i.item)).toEqual(['States the goal', 'Names the users', 'Has no placeholders left']);
  expect(result.verification!.items[0]!.section).toBe('Content');

  // The failed item went back to the agent, and the model saw it before saving again.
  const messages = await session.turnMessages(result);
  const fix = systemNotes(messages).find((m) => m.startsWith('[Loopwright verify]'));
  expect(fix).toContain('1 of 3 items failed (attempt 1 of 3)');
  expect(fix).toContain('Names the users — no users are named');
  const calls = verifyRequests(m);
  expect(calls).toHaveLength(2);
  // Each verification read the document as saved at the time.
  expect(JSON.stringify(calls[0]!.body.messages)).toContain('Goal: faster invoices.');
  expect(JSON.stringify(calls[0]!.body.messages)).not.toContain('finance team');
  expect(JSON.stringify(calls[1]!.body.messages)).toContain('finance team');
  const afterFix = m.requests[calls[0]!.index + 1]!.body!.messages as { content: string }[];
  expect(afterFix.some((m) => String(m.content).includes('no users are named'))).toBe(true);

  const state = await session.state();
  expect(state.lastTurn?.verification).toMatchObject({ status: 'verified', attempts: 2 });
  expect(state.verify).toEqual({ phase: expect.any(String) });
  // Each verification is a verifyDocument activity in history, with a summary for the Web UI's event list.
  const events = (await session.workflow.fetchHistory()).events ?? [];
  const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'verifyDocument');
  expect(scheduled).toHaveLength(2);
  const summaries = scheduled.map((e) => Buffer.from(e.userMetadata!.summary!.data!).toString('utf8'));
  expect(summaries).toEqual(['"verify spec · attempt 1 of 3"', '"verify spec · attempt 2 of 3"']);
  await session.end();
});

test.concurrent('a document that keeps failing ends the turn failed_verification with its report after the third attempt', async () => {
  const project = openProject();
  const { m } = project;
  m.enqueue(
    runWorkflow,
    save('s1', 'Goal: TBD'),
    text('Saved.'),
    verdict({ 3: 'TBD is a placeholder' }),
    save('s2', 'Goal: TBD.'),
    text('Saved again.'),
    verdict({ 3: 'still TBD' }),
    save('s3', 'Goal: TBD!'),
    text('Saved once more.'),
    verdict({ 3: 'TBD remains' }),
  );
  const session = await start(project);
  const result: TurnResult = await session.send('*spec');
  expect(result).toMatchObject({ success: false, status: 'failed_verification', response: 'Saved once more.' });
  expect(result.error).toContain('1 of 3 checklist items failed after 3 attempts');
  expect(result.verification).toMatchObject({ status: 'failed_verification', attempts: 3, passed: 2, failed: 1 });
  expect(result.verification!.items.find((i) => !i.passed)).toMatchObject({ item: 'Has no placeholders left', note: 'TBD remains', section: 'Form' });
  expect(verifyRequests(m)).toHaveLength(3);

  // The document keeps waiting: saved again in a later turn, it is verified with fresh attempts.
  const state: SessionState = await session.state();
  expect(state.verify?.pending).toMatchObject({ name: 'spec', attempts: 0, maxAttempts: 3 });
  m.enqueue(save('s4', 'Goal: faster invoices.'), text('Replaced TBD.'), verdict());
  const next = await session.send('Please fix the placeholder.');
  expect(next).toMatchObject({ status: 'completed', verification: { status: 'verified', attempts: 1 } });
  expect((await session.state()).verify?.pending).toBeUndefined();
  await session.end();
});

test.concurrent('a validate-workflow menu item checks the saved document on demand, by trigger or number', async () => {
  const project = openProject();
  const { m, root, bundle } = project;
  fs.mkdirSync(path.join(root, 'docs'), { recursive: true });
  fs.writeFileSync(path.join(root, 'docs/spec.md'), 'Goal: faster invoices.\n');
  m.enqueue(verdict({ 2: 'no users' }), verdict());
  const session = await start(project);
  const first = await session.send('*validate-spec');
  expect(first).toMatchObject({ status: 'failed_verification', iterations: 0 });
  expect(first.verification).toMatchObject({ source: 'command', name: '*validate-spec', attempts: 1, maxAttempts: 1, failed: 1 });
  expect(first.response).toContain('✗ [Content] Names the users — no users');
  // The checklist came from the workflow's validation, the document from its default_output_file.
  expect(first.verification!.checklist).toBe(fs.realpathSync(path.join(bundle, 'workflows/spec/checklist.md')));
  const second = await session.send('3');
  expect(second).toMatchObject({ status: 'completed', success: true, verification: { status: 'verified', passed: 3 } });
  // Only the verifier was asked: no agent model call.
  expect(m.requests).toHaveLength(2);
  expect(verifyRequests(m)).toHaveLength(2);
  await session.end();
});

test.concurrent('a missing document is reported not verified, without a model call', async () => {
  const project = openProject();
  const { m } = project;
  m.enqueue(text('unused'));
  const session = await start(project);
  const result = await session.send('validate-spec');
  expect(result).toMatchObject({ status: 'completed', verification: { status: 'not_verified' } });
  expect(result.verification!.reason).toMatch(/spec\.md/);
  expect(m.requests).toHaveLength(0);
  await session.end();
});

test.concurrent('with verify off, a saved document is not checked', async () => {
  const project = openProject();
  const { m } = project;
  m.enqueue(runWorkflow, save('s1', 'Goal: TBD'), text('Saved.'));
  const session = await start(project, { verify: { enabled: false } });
  const result = await session.send('*spec');
  expect(result).toMatchObject({ status: 'completed', response: 'Saved.' });
  expect(result.verification).toBeUndefined();
  expect(verifyRequests(m)).toHaveLength(0);
  expect((await session.state()).verify).toBeUndefined();
  await session.end();
});

test.concurrent('a pending verification and its attempts travel with the turn when the session continues as new between iterations', async () => {
  const project = openProject();
  const { m } = project;
  m.enqueue(
    runWorkflow,
    save('s1', 'Goal: faster invoices.'),
    text('Saved the spec.'),
    verdict({ 2: 'no users are named' }),
    save('s2', 'Goal: faster invoices.\nUsers: the finance team.'),
    text('Fixed.'),
    verdict(),
  );
  // Every iteration boundary hands the turn to a fresh run.
  const session = await start(project, { continueAsNew: { maxHistoryEvents: 1 } });
  const result = await session.send('*spec');
  expect(result).toMatchObject({ status: 'completed', verification: { status: 'verified', attempts: 2 } });
  expect((await session.state()).run).toBeGreaterThanOrEqual(4);
  expect(verifyRequests(m)).toHaveLength(2);
  await session.end();
});
