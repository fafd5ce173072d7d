/**
 * The eval routes of `loopwright serve` over real HTTP, on a real dev server and worker with the
 * fake model: a session is recorded (test/support/eval-fixture.ts), an eval of it against a
 * candidate with planted differences is started with POST /api/evals; the list names it, its
 * report is answered as the eval wrote it (each case with the rules of `failOn` it broke), and its
 * one case shows per turn both transcripts and exactly the planted differences: a diverging
 * argument on a write, a failed checklist item (and the status it changed), a skipped step, more
 * tokens and cost. Unknown evals and cases are 404s naming them; a file is never taken as a session.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EvalCaseReport, EvalReport } from '../../common/eval/eval-types';
import { EVAL_CANDIDATE_MODEL, evalResponder, FAILED_ITEM_NOTE, INJECTED_IMG, INJECTED_SCRIPT, recordEvalSession, SECOND_MESSAGE } from '../support/eval-fixture';
import { delay, text } from '../../fake-model/server';
import { api, useServeSuite } from './serve-harness';

jest.setTimeout(120_000);

const suite = useServeSuite();
let root: string;
let recorded: string;
let evalId: string;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-serve-eval-'));
  suite.h.fake.setResponder(evalResponder);
  recorded = await recordEvalSession(suite.loopwright, root);
  const started = await api(suite.serve.base, 'POST', '/api/evals', { sessions: [recorded], model: EVAL_CANDIDATE_MODEL, workflowId: `serve-eval-${process.pid}` });
  expect(started.status).toBe(201);
  evalId = String(started.body.id);
  await suite.h.client.workflow.getHandle(evalId).result();
}, 120_000);

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

test('evals api: the list names the eval; its report is the one the eval wrote, each case with the failOn rules it broke', async () => {
  const { base } = suite.serve;
  const list = await api(base, 'GET', '/api/evals');
  expect(list.body.evals).toEqual(expect.arrayContaining([expect.objectContaining({ id: evalId, status: 'COMPLETED', startTime: expect.any(String) })]));
  const overview = await api(base, 'GET', `/api/evals/${evalId}`);
  expect(overview.status).toBe(200);
  const summary = overview.body.summary as { reportPath: string };
  expect(overview.body).toMatchObject({
    id: evalId,
    status: 'COMPLETED',
    webUiUrl: expect.stringContaining(evalId),
    summary: { total: 1, scored: 1, errors: 0, statusChanged: 1, trajectoryChanged: 1 },
  });
  // Nothing of the file is lost on the way (the response schema lets every field through).
  const written = JSON.parse(fs.readFileSync(summary.reportPath, 'utf8')) as EvalReport;
  expect(overview.body.report).toEqual({ ...written, failOn: [], failed: 0, cases: written.cases.map((c) => ({ ...c, broken: [] })) });
  expect(written.candidate).toEqual({ model: EVAL_CANDIDATE_MODEL });

  const ruled = await api(base, 'GET', `/api/evals/${evalId}?failOn=${encodeURIComponent('checks-failed,tokens>+20%,iterations>+5')}`);
  const report = ruled.body.report as { failOn: string[]; failed: number; cases: (EvalCaseReport & { broken: { rule: string }[] })[] };
  expect(report.failOn).toEqual(['checks-failed', 'tokens>+20%', 'iterations>+5']);
  expect(report.failed).toBe(1);
  expect(report.cases[0]!.broken.map((b) => b.rule)).toEqual(['checks-failed', 'tokens>+20%']);
  expect((await api(base, 'GET', `/api/evals/${evalId}?failOn=speed>+1`)).body.error).toMatchObject({ type: 'BadRequest', field: 'failOn' });
});

test('evals api: one case shows both transcripts per turn, with exactly the planted differences marked', async () => {
  const { base } = suite.serve;
  const answer = await api(base, 'GET', `/api/evals/${evalId}/cases/0`);
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  const view = answer.body as unknown as {
    name: string;
    candidateWorkflowId: string;
    problems: string[];
    turns: {
      turn: number;
      baseline: { status: string };
      candidate: { status: string };
      differences: { kind: string; text: string; index?: number }[];
      transcripts: Record<
        'baseline' | 'candidate',
        { message: string; response: string; calls: { tool: string; arguments: string; diverged?: string; result?: string }[]; verification?: { failedItems?: { note?: string }[] } }
      >;
    }[];
  };
  expect(view).toMatchObject({ name: recorded, candidateWorkflowId: `${evalId}-0`, problems: [] });
  const [one, two] = view.turns;
  // The scores are the report's, not computed again.
  const written = (await api(base, 'GET', `/api/evals/${evalId}`)).body.report as EvalReport;
  for (const t of view.turns) {
    const { differences: _d, transcripts: _t, ...score } = t;
    expect(score).toEqual(written.cases[0]!.turns[t.turn - 1]);
  }

  // Turn 1: the save with other content (run in the scratch copy), the check it failed, the status it changed.
  expect(one!.differences.map((d) => [d.kind, d.index])).toEqual([
    ['arguments', 1],
    ['diverged', 1],
    ['status', undefined],
    ['check', undefined],
  ]);
  expect(one!.differences.find((d) => d.kind === 'check')!.text).toBe(`1 checklist item(s) failed (the recording: 0): Names the users (${FAILED_ITEM_NOTE})`);
  expect(one!.differences.find((d) => d.kind === 'status')!.text).toMatch(/^completed → failed_verification/);
  const b1 = one!.transcripts.baseline;
  const c1 = one!.transcripts.candidate;
  expect(b1.calls.map((c) => c.tool)).toEqual(['execute_workflow', 'save_output']);
  expect(c1.calls.map((c) => [c.tool, c.diverged])).toEqual([
    ['execute_workflow', undefined],
    ['save_output', 'run'],
  ]);
  expect(JSON.parse(b1.calls[1]!.arguments).content).toContain(INJECTED_SCRIPT);
  expect(JSON.parse(c1.calls[1]!.arguments).content).toBe('Goal: faster invoices.\n');
  expect(c1.verification!.failedItems).toEqual([{ item: 'Names the users', section: 'Content', note: FAILED_ITEM_NOTE }]);
  expect([one!.baseline.status, one!.candidate.status]).toEqual(['completed', 'failed_verification']);

  // Turn 2: the second read skipped, more tokens and cost; the texts as they were written.
  expect(two!.differences.map((d) => [d.kind, d.index])).toEqual([
    ['missing', 1],
    ['tokens', undefined],
    ['cost', undefined],
  ]);
  const b2 = two!.transcripts.baseline;
  const c2 = two!.transcripts.candidate;
  expect(b2.calls.map((c) => c.tool)).toEqual(['read_file', 'read_file']);
  expect(c2.calls.map((c) => c.tool)).toEqual(['read_file']);
  expect([b2.message, c2.message]).toEqual([SECOND_MESSAGE, SECOND_MESSAGE]);
  expect(c2.response).toBe(`Read them. ${INJECTED_IMG}`);
  // The recording's reads ran (their results are in its history); the candidate's was answered from the recording.
  expect(b2.calls.every((c) => c.result !== undefined)).toBe(true);
  expect(c2.calls[0]!.result).toBeUndefined();
});

test('evals api: an unknown eval, a session given as an eval and a case out of range are 404s naming them; a file is never a session', async () => {
  const { base } = suite.serve;
  const unknown = await api(base, 'GET', '/api/evals/no-such-eval');
  expect(unknown.status).toBe(404);
  expect(unknown.body.error).toEqual({ type: 'NotFound', message: 'No eval no-such-eval' });
  expect((await api(base, 'GET', '/api/evals/no-such-eval/cases/0')).body.error!.message).toBe('No eval no-such-eval');
  const session = await api(base, 'GET', `/api/evals/${recorded}`);
  expect(session.status).toBe(404);
  expect(session.body.error!.message).toBe(`No eval ${recorded}: that workflow is a agentSession`);
  const beyond = await api(base, 'GET', `/api/evals/${evalId}/cases/3`);
  expect(beyond.status).toBe(404);
  expect(beyond.body.error!.message).toBe(`Eval ${evalId} has no case 3 (its cases are 0 to 0)`);
  expect((await api(base, 'GET', `/api/evals/${evalId}/cases/first`)).status).toBe(400);

  // A name that is a file or folder where the server runs, or looks like one: refused, nothing started.
  for (const name of ['package.json', '/etc', '.', 'evals/x']) {
    const refused = await api(base, 'POST', '/api/evals', { sessions: [recorded, name] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ type: 'BadRequest', field: 'sessions', message: expect.stringContaining('sessions[1]') });
  }
  expect((await api(base, 'POST', '/api/evals', { sessions: [] })).body.error).toMatchObject({ type: 'BadRequest' });
  expect((await api(base, 'POST', '/api/evals', { sessions: [recorded], bundlePath: '/tmp' })).body.error).toMatchObject({ type: 'BadRequest', field: 'bundlePath' });
  const again = await api(base, 'POST', '/api/evals', { sessions: [recorded], workflowId: evalId });
  expect(again.status).toBe(409);
});

test('evals api: a running eval answers its counters and no report yet; its cases wait for the report (409)', async () => {
  const { base } = suite.serve;
  // The candidate's first model call takes long enough for the reads below.
  suite.h.fake.setResponder(() => delay(20_000, text('late')));
  const started = await api(base, 'POST', '/api/evals', { sessions: [recorded], model: EVAL_CANDIDATE_MODEL });
  expect(started.status).toBe(201);
  const id = String(started.body.id);
  try {
    const overview = await api(base, 'GET', `/api/evals/${id}`);
    expect(overview.body).toMatchObject({ id, status: 'RUNNING', problem: 'the eval is still running: its report is written when it ends' });
    expect(overview.body.state).toMatchObject({ total: 1, phase: 'running', errors: 0 });
    expect(overview.body.report).toBeUndefined();
    const waiting = await api(base, 'GET', `/api/evals/${id}/cases/0`);
    expect(waiting.status).toBe(409);
    expect(waiting.body.error).toEqual({ type: 'Conflict', message: `Eval ${id} has no report to read: the eval is still running: its report is written when it ends` });
  } finally {
    await suite.h.client.workflow.getHandle(id).terminate('the test is done with it');
  }
});
