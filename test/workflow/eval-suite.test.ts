/**
 * Eval suites beyond the replay itself, on the real dev server with the fake model: the
 * model-graded scorer (a rubric; each turn's answer graded on both sides, a malformed grade and a
 * grader that fails reported as typed failures, grading usage counted apart from the candidate's),
 * the suite budget (cases not yet started skipped once the candidate's spending reaches it, across
 * a worker replaced mid-suite and runs continued as new), and evals on a worker made with
 * LoopwrightPlugin.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChatMessage } from '../../common/messages';
import type { EvalCaseReport } from '../../common/eval/eval-types';
import { GRADE_MALFORMED } from '../../common/eval/grading';
import { startEval } from '../../client/eval-client';
import { fault, type RecordedRequest, type Step, text } from '../../fake-model/server';
import { useSessionHarness } from '../support/session-harness';

jest.setTimeout(120_000);

const shared = useSessionHarness();
const CANDIDATE = 'candidate-model';
let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-eval-suite-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function isGrading(request: RecordedRequest): boolean {
  return JSON.stringify(request.body?.response_format ?? '').includes('turn_grade') || String(request.body?.messages?.[0]?.content ?? '').startsWith('You are a strict grader');
}

/** The last user message of a session's request. */
function lastUserMessage(request: RecordedRequest): string {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  return String(messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
}

/** The answer a grading request shows the grader. */
function gradedAnswer(request: RecordedRequest): string {
  return /----- BEGIN ANSWER -----\n([\s\S]*?)\n----- END ANSWER -----/.exec(lastUserMessage(request))?.[1] ?? '';
}

/** Record a session of the example bundle with the given user messages (answers come from the responder). */
async function record(messages: string[], workflowId: string): Promise<string> {
  const { loopwright, bundle } = shared;
  const session = await loopwright.start({ bundlePath: bundle, agentId: 'facilitator', projectRoot: path.dirname(bundle), workflowId });
  for (const m of messages) expect(await session.send(m)).toMatchObject({ status: 'completed' });
  await session.end();
  await session.result();
  return session.workflowId;
}

test('eval grading: each turn graded on both sides against the rubric; a malformed grade is a typed failure; grading usage apart from the candidate', async () => {
  const { h, loopwright } = shared;
  // The recording names the users and lists the steps; the candidate names nobody, then answers turn 2 in a way the grader cannot grade.
  h.fake.setResponder((request): Step => {
    if (isGrading(request)) {
      const answer = gradedAnswer(request);
      if (answer.includes('unreadable')) return text('What a great answer!', { usage: { prompt_tokens: 300, completion_tokens: 7 } });
      const good = answer.includes('clerks');
      return text(JSON.stringify({ score: good ? 9 : 3, passed: good, reason: good ? 'names the users' : 'names no users' }), { usage: { prompt_tokens: 300, completion_tokens: 20 } });
    }
    const candidate = request.body?.model === CANDIDATE;
    const message = lastUserMessage(request);
    const usage = { usage: { prompt_tokens: 500, completion_tokens: 50 } };
    if (message === 'who uses it?') return text(candidate ? 'Somebody does.' : 'The clerks of the harbour office.', usage);
    return text(candidate ? 'An unreadable answer.' : 'Three steps, by the clerks.', usage);
  });
  const recorded = await record(['who uses it?', 'what are the steps?'], `rec-graded-${process.pid}`);
  const requestsBefore = h.fake.requests.length;

  const evaluation = await startEval(loopwright, {
    sources: [recorded],
    candidate: { model: CANDIDATE },
    grader: { rubric: 'A good answer names the users (the clerks).', rubricSource: 'text', model: 'grader-model' },
    scratchRoot: path.join(dir, 'scratch-graded'),
    reportPath: path.join(dir, 'report-graded.json'),
  });
  const summary = await evaluation.result();
  const report = await evaluation.report();
  const [c] = report.cases as [EvalCaseReport];
  expect(report.grader).toEqual({ rubricSource: 'text', model: 'grader-model' });
  expect(c.grades).toMatchObject({
    model: 'grader-model',
    turns: [
      { turn: 1, baseline: { grade: { score: 9, passed: true, reason: 'names the users' } }, candidate: { grade: { score: 3, passed: false, reason: 'names no users' } } },
      { turn: 2, baseline: { grade: { score: 9, passed: true } }, candidate: { failure: { type: GRADE_MALFORMED, message: expect.stringContaining('holds no JSON object') } } },
    ],
    baselineMean: 9,
    candidateMean: 3,
    failures: 1,
    // Two answers per turn, and the malformed one asked for twice.
    calls: 5,
  });
  // Grading asked the grader model only, and its usage is counted apart from the candidate's.
  const sent = h.fake.requests.slice(requestsBefore);
  const grading = sent.filter(isGrading);
  expect(grading.map((r) => r.body?.model)).toEqual(Array<string>(5).fill('grader-model'));
  expect(c.grades!.usage).toEqual({ promptTokens: 5 * 300, completionTokens: 3 * 20 + 2 * 7, totalTokens: 1500 + 74 });
  expect(summary.graderTokens).toBe(1574);
  expect(sent.filter((r) => !isGrading(r)).map((r) => r.body?.model)).toEqual([CANDIDATE, CANDIDATE]);
  expect(c.candidate!.usage.totalTokens).toBe(2 * 550);
  expect(summary.candidateTokens).toBe(2 * 550);

  // Without a grader model the candidate's grades; a grader that fails (an unknown model) is a typed failure in the report, the case still scored.
  h.fake.setResponder((request): Step => {
    if (isGrading(request)) return request.body?.model === 'missing-model' ? fault(404, { message: 'no such model' }) : text('{"score": 5, "passed": true, "reason": "fine"}');
    return text('An answer.');
  });
  const before = h.fake.requests.length;
  const defaults = await startEval(loopwright, {
    sources: [recorded],
    candidate: { model: CANDIDATE },
    grader: { rubric: 'Any answer.' },
    scratchRoot: path.join(dir, 'scratch-default-grader'),
    reportPath: path.join(dir, 'report-default-grader.json'),
  });
  expect(await defaults.result()).toMatchObject({ scored: 1, errors: 0 });
  expect((await defaults.report()).cases[0]!.grades).toMatchObject({ model: CANDIDATE, baselineMean: 5, candidateMean: 5, failures: 0 });
  expect(
    h.fake.requests
      .slice(before)
      .filter(isGrading)
      .map((r) => r.body?.model),
  ).toEqual(Array<string>(4).fill(CANDIDATE));
  const failing = await startEval(loopwright, {
    sources: [recorded],
    candidate: { model: CANDIDATE },
    grader: { rubric: 'Any answer.', model: 'missing-model' },
    scratchRoot: path.join(dir, 'scratch-failing-grader'),
    reportPath: path.join(dir, 'report-failing-grader.json'),
  });
  expect(await failing.result()).toMatchObject({ scored: 1, errors: 0 });
  const [f] = (await failing.report()).cases as [EvalCaseReport];
  expect(f.error).toBeUndefined();
  expect(f.trajectory.same).toBe(true);
  expect(f.grades).toMatchObject({ model: 'missing-model', turns: [], error: { type: 'ModelNotFound', message: expect.stringContaining('Check the model name') } });
});
