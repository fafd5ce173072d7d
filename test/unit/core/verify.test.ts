/**
 * The verify phase's decisions (workflows/verify/verify.ts `SessionVerifier`, and its turn
 * extension in verify-session.ts) against a fake `verifyDocument` activity: a workflow that names
 * a checklist makes its document pending; a save of that document (not another file) is checked when
 * the model answers, with the input and Web UI summary the activity gets; failed items go back to the
 * model with the fix request until `maxAttempts`, then the turn ends `failed_verification` and the
 * document keeps waiting with fresh attempts; a model that does not save again lets the last report
 * stand; a verify call that fails or finds nothing readable is "not verified"; a `validate-workflow`
 * menu item (by trigger or number) checks on demand in one attempt; phases, metrics, usage and what
 * carries to the next run.
 */
jest.mock('@temporalio/workflow', () => jest.requireActual('../../support/workflow-fakes').fakeWorkflowModule());

import type { TokenUsage } from '../../../common/messages';
import type { RuntimeContext } from '../../../common/runtime-context';
import type { ChecklistItemResult, CommandCheck, VerifyInput, VerifyResult, VerifySettings } from '../../../common/verify-types';
import { SessionVerifier } from '../../../workflows/verify/verify';
import { verifyExtension } from '../../../workflows/verify/verify-extension';
import { activityCancelled, FakeActivities, toolCall, usage, workflowFake } from '../../support/workflow-fakes';

beforeEach(() => workflowFake.reset());

const CONTEXT: RuntimeContext = { bundleRoot: '/b', coreRoot: '/b', projectRoot: '/p', variables: {}, readRoots: ['/b'], writeRoots: ['/p/docs'], maxReadBytes: 1000 };
const WORKFLOW = '{bundle-root}/workflows/spec/workflow.yaml';
const CHECKLIST = '/b/workflows/spec/checklist.md';
const DOCUMENT = '/p/docs/spec.md';
/** The verify bundle's menu (test/support/verify-bundle.ts): `*validate-spec` is item 3. */
const COMMANDS = [{ cmd: '*help' }, { cmd: '*spec' }, { cmd: '*validate-spec' }, { cmd: '*exit' }];
const CHECKS: CommandCheck[] = [{ cmd: '*validate-spec', kind: 'validate', workflow: WORKFLOW }];

const writes = (name: string): boolean => name === 'save_output' || name === 'edit_file';
const runWorkflow = toolCall('w1', 'execute_workflow', { workflow_path: WORKFLOW });
const workflowStarted = { success: true, workflow_name: 'spec', config: { validation: CHECKLIST, default_output_file: DOCUMENT } };
const save = (id: string, path = DOCUMENT) => [[toolCall(id, 'save_output', { file_path: '{output_folder}/spec.md', content: 'x' })], [{ success: true, path }]] as const;

/** The verifier's answer for the checklist's three items: item n passes unless `failing` names it. */
function verdict(failing: Record<number, string> = {}): VerifyResult {
  const names: [string, string][] = [
    ['States the goal', 'Content'],
    ['Names the users', 'Content'],
    ['Has no placeholders left', 'Form'],
  ];
  const items: ChecklistItemResult[] = names.map(([item, section], i) => ({ item, section, passed: !(i + 1 in failing), note: failing[i + 1] ?? 'present' }));
  const failed = items.filter((i) => !i.passed).length;
  return { checklist: CHECKLIST, document: DOCUMENT, items, passed: items.length - failed, failed, usage: usage(900, 100), durationMs: 4 };
}

/** A verifier over a fake activity; `phases` holds the phase at each change, `used` the usage recorded. */
function verifier(settings?: VerifySettings, checks: CommandCheck[] = CHECKS, carried?: ConstructorParameters<typeof SessionVerifier>[1]) {
  const fake = new FakeActivities();
  const phases: string[] = [];
  const used: TokenUsage[] = [];
  const record = (u: TokenUsage) => void used.push(u);
  const v: SessionVerifier = new SessionVerifier(
    { activities: fake.stubs, settings, context: () => CONTEXT, checks, commands: COMMANDS, model: 'checker', onChange: () => void phases.push(v.phase) },
    carried,
  );
  return { v, fake, phases, used, record };
}

/** The workflow ran and its document was saved. */
function workflowRanAndSaved(v: SessionVerifier, id = 's1'): void {
  v.noteToolResults([runWorkflow], [workflowStarted], writes);
  v.noteToolResults(...save(id), writes);
}

describe('SessionVerifier: after a workflow saves its document', () => {
  test('verify: a workflow naming a checklist makes its document pending; the save moves the turn to act', () => {
    const { v, phases } = verifier();
    v.startTurn();
    expect(v.view()).toEqual({ phase: 'gather' });
    v.noteToolResults([runWorkflow], [workflowStarted], writes);
    expect(v.view()).toEqual({ phase: 'gather', pending: { name: 'spec', checklist: CHECKLIST, attempts: 0, maxAttempts: 3 } });
    expect(workflowFake.logs).toEqual([{ level: 'info', message: 'Verification pending', attrs: { workflow: 'spec', checklist: CHECKLIST } }]);
    v.noteToolResults(...save('s1'), writes);
    expect(v.view()).toEqual({ phase: 'act', pending: { name: 'spec', checklist: CHECKLIST, document: DOCUMENT, attempts: 0, maxAttempts: 3 } });
    expect(phases).toEqual(['gather']);
  });

  test('verify: a failed item goes back to the model, and the second attempt verifies the document', async () => {
    const { v, fake, phases, used, record } = verifier();
    fake.script('verifyDocument', verdict({ 2: 'no users are named' }), verdict());
    v.startTurn();
    workflowRanAndSaved(v);
    const first = await v.atAnswer(1, record);
    expect(first).toEqual({ continueWith: expect.stringContaining('1 of 3 items failed (attempt 1 of 3)') });
    const fix = (first as { continueWith: string }).continueWith;
    expect(fix.startsWith(`[Loopwright verify] ${DOCUMENT} was checked against the checklist ${CHECKLIST}:`)).toBe(true);
    expect(fix).toContain('- ✗ [Content] Names the users — no users are named');
    expect(fix).toContain('2 verification attempts left.');
    expect(v.view().phase).toBe('act');

    v.noteToolResults(...save('s2'), writes);
    expect(await v.atAnswer(1, record)).toBeUndefined();
    expect(v.turnReport()).toEqual({
      status: 'verified',
      attempts: 2,
      maxAttempts: 3,
      passed: 3,
      failed: 0,
      source: 'workflow',
      name: 'spec',
      checklist: CHECKLIST,
      document: DOCUMENT,
      items: verdict().items,
    });
    // Verified: nothing waits any more.
    expect(v.view()).toEqual({ phase: 'act' });

    const inputs = fake.inputsOf<VerifyInput>('verifyDocument');
    expect(inputs[0]).toEqual({ target: { source: 'workflow', checklist: CHECKLIST, workflow: WORKFLOW, name: 'spec', document: DOCUMENT }, context: CONTEXT, attempt: 1, model: 'checker' });
    expect(inputs[1]!.attempt).toBe(2);
    expect(fake.calls.map((c) => c.summary)).toEqual(['verify spec · attempt 1 of 3', 'verify spec · attempt 2 of 3']);
    expect(used).toEqual([usage(900, 100), usage(900, 100)]);
    // The session shows `verifying` while the check runs (its onChange sees the phase).
    expect(phases.filter((p) => p === 'verify')).toHaveLength(2);
    expect(workflowFake.metric('loopwright_verify_calls').map((m) => m.attributes.result)).toEqual(['failed_verification', 'verified']);
    expect(workflowFake.metric('loopwright_verifications').map((m) => m.attributes)).toEqual([{ status: 'verified', source: 'workflow' }]);
  });

  test('verify: a document that keeps failing ends the turn after the last attempt, and keeps waiting with fresh attempts', async () => {
    const { v, fake, record } = verifier();
    fake.script('verifyDocument', verdict({ 3: 'TBD is a placeholder' }), verdict({ 3: 'still TBD' }), verdict({ 3: 'TBD remains' }), verdict());
    v.startTurn();
    workflowRanAndSaved(v);
    expect(await v.atAnswer(1, record)).toHaveProperty('continueWith');
    v.noteToolResults(...save('s2'), writes);
    expect(await v.atAnswer(1, record)).toHaveProperty('continueWith');
    v.noteToolResults(...save('s3'), writes);
    expect(await v.atAnswer(1, record)).toEqual({
      end: { status: 'failed_verification', error: 'The document failed verification: 1 of 3 checklist items failed after 3 attempts' },
    });
    expect(v.turnReport()).toMatchObject({ status: 'failed_verification', attempts: 3, passed: 2, failed: 1 });
    expect(v.turnReport()!.items.find((i) => !i.passed)).toEqual({ item: 'Has no placeholders left', section: 'Form', passed: false, note: 'TBD remains' });
    expect(v.view().pending).toEqual({ name: 'spec', checklist: CHECKLIST, attempts: 0, maxAttempts: 3 });

    // Saved again in a later turn: verified with fresh attempts.
    v.startTurn();
    expect(v.turnReport()).toBeUndefined();
    v.noteToolResults(...save('s4'), writes);
    expect(await v.atAnswer(2, record)).toBeUndefined();
    expect(v.turnReport()).toMatchObject({ status: 'verified', attempts: 1 });
    expect(v.view().pending).toBeUndefined();
  });

  test("verify: maxAttempts is the session's; a model that answers without saving again lets the last report stand", async () => {
    const { v, fake, record } = verifier({ maxAttempts: 2 });
    fake.script('verifyDocument', verdict({ 1: 'no goal' }));
    workflowRanAndSaved(v);
    const fix = await v.atAnswer(1, record);
    expect((fix as { continueWith: string }).continueWith).toContain('(attempt 1 of 2)');
    expect(await v.atAnswer(1, record)).toEqual({ end: { status: 'failed_verification', error: 'The document failed verification: 1 of 3 checklist items failed after 1 attempts' } });
    expect(fake.callsOf('verifyDocument')).toHaveLength(1);
  });

  test("verify: only the workflow's own document is checked; with nothing pending an answer ends the turn as it is", async () => {
    const { v, fake, record } = verifier();
    expect(await v.atAnswer(1, record)).toBeUndefined();
    v.noteToolResults([runWorkflow], [workflowStarted], writes);
    v.noteToolResults(...save('s1', '/p/docs/notes.md'), writes);
    // A failed save counts for nothing either.
    v.noteToolResults([toolCall('s2', 'save_output', { file_path: 'x' })], [{ success: false, error: 'denied', path: DOCUMENT }], writes);
    expect(await v.atAnswer(1, record)).toBeUndefined();
    expect(fake.calls).toEqual([]);
    // A workflow without a checklist leaves nothing pending.
    const plain = verifier();
    plain.v.noteToolResults([runWorkflow], [{ success: true, workflow_name: 'notes', config: {} }], writes);
    expect(plain.v.view()).toEqual({ phase: 'gather' });
  });

  test('verify: a verify call that fails, or finds nothing to read, is "not verified" and the turn completes', async () => {
    const { v, fake, record } = verifier();
    fake.script('verifyDocument', new Error('model server down'));
    workflowRanAndSaved(v);
    expect(await v.atAnswer(1, record)).toBeUndefined();
    expect(v.turnReport()).toEqual({
      status: 'not_verified',
      attempts: 1,
      maxAttempts: 3,
      source: 'workflow',
      name: 'spec',
      checklist: CHECKLIST,
      document: DOCUMENT,
      passed: 0,
      failed: 0,
      items: [],
      reason: 'the verification call failed: model server down',
    });
    expect(workflowFake.logs.find((l) => l.level === 'warn')).toEqual({ level: 'warn', message: 'Verification failed to run', attrs: { error: 'the verification call failed: model server down' } });
    expect(v.view().phase).toBe('act');

    const missing = verifier();
    missing.fake.script('verifyDocument', { items: [], passed: 0, failed: 0, problem: `No document at ${DOCUMENT}`, usage: null, durationMs: 1 });
    workflowRanAndSaved(missing.v);
    await missing.v.atAnswer(1, missing.record);
    expect(missing.v.turnReport()).toMatchObject({ status: 'not_verified', reason: `No document at ${DOCUMENT}` });
    expect(missing.used).toEqual([]);
  });

  test("verify: an interrupt during the check is the turn's, not a report", async () => {
    const { v, fake, record } = verifier();
    fake.script('verifyDocument', activityCancelled('verifyDocument'));
    workflowRanAndSaved(v);
    await expect(v.atAnswer(1, record)).rejects.toThrow('Activity cancelled');
    expect(v.turnReport()).toBeUndefined();
  });

  test('verify: the pending document and its attempts carry into the next run', async () => {
    const first = verifier();
    first.fake.script('verifyDocument', verdict({ 2: 'no users are named' }));
    workflowRanAndSaved(first.v);
    await first.v.atAnswer(1, first.record);
    first.v.noteToolResults(...save('s2'), writes);
    const carried = JSON.parse(JSON.stringify(first.v.carry())) as ReturnType<SessionVerifier['carry']>;
    expect(carried?.pending).toMatchObject({ attempts: 1, saved: DOCUMENT, expected: DOCUMENT });
    const next = verifier(undefined, CHECKS, carried);
    next.fake.script('verifyDocument', verdict());
    expect(await next.v.atAnswer(1, next.record)).toBeUndefined();
    expect(next.fake.inputsOf<VerifyInput>('verifyDocument')[0]!.attempt).toBe(2);
    expect(next.v.turnReport()).toMatchObject({ status: 'verified', attempts: 2 });
    expect(next.v.carry()).toEqual({ report: next.v.turnReport() });
    expect(verifier().v.carry()).toBeUndefined();
  });
});

describe('SessionVerifier: a validate-workflow menu item', () => {
  test('verify: the menu item is found by trigger, without its star, in any case, or by number', () => {
    const { v } = verifier();
    for (const message of ['*validate-spec', 'validate-spec', '  VALIDATE-SPEC ', '3']) expect(v.commandFor(message)).toBe(CHECKS[0]);
    for (const message of ['2', '*spec', '9', 'please validate-spec', '']) expect(v.commandFor(message)).toBeUndefined();
    expect(verifier(undefined, [{ cmd: '*spec', kind: 'workflow', checklist: CHECKLIST }]).v.commandFor('*spec')).toBeUndefined();
  });

  test('verify: a check on demand is one attempt; as a turn extension its report is the reply', async () => {
    const { v, fake, used, record } = verifier();
    fake.script('verifyDocument', verdict({ 2: 'no users' }), verdict());
    const extension = verifyExtension(v);
    const run = extension.command!('*validate-spec')!;
    const failed = await run({ turn: 4, recordUsage: record });
    expect(failed.status).toBe('failed_verification');
    expect(failed.error).toBe('1 of 3 checklist items failed');
    expect(failed.response).toContain('✗ [Content] Names the users — no users');
    expect(failed.response.split('\n')[0]).toBe('Verification *validate-spec: failed verification (1 of 3 items failed after 1 attempt)');
    expect(fake.inputsOf<VerifyInput>('verifyDocument')[0]!.target).toEqual({ source: 'command', name: '*validate-spec', workflow: WORKFLOW });
    expect(fake.calls[0]!.summary).toBe('verify *validate-spec · attempt 1 of 1');
    expect(extension.report!(undefined as never, 0, 0)).toEqual({ verification: expect.objectContaining({ source: 'command', attempts: 1, maxAttempts: 1, failed: 1 }) });

    const passed = await extension.command!('3')!({ turn: 5, recordUsage: record });
    expect(passed).toMatchObject({ status: 'completed' });
    expect(passed.response.split('\n')[0]).toBe('Verification *validate-spec: verified (3/3 items, attempt 1 of 1)');
    expect(used).toHaveLength(2);
    expect(extension.command!('hello')).toBeUndefined();
  });
});
