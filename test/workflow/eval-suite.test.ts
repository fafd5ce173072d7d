/**
 * Eval suites beyond the replay itself, on the real dev server with the fake model: the
 * model-graded scorer (a rubric; each turn's answer graded on both sides, a malformed grade and a
 * grader that fails reported as typed failures, grading usage counted apart from the candidate's),
 * the suite budget (cases not yet started skipped once the candidate's spending reaches it, across
 * a worker replaced mid-suite and runs continued as new), evals on a worker made with
 * LoopwrightPlugin, and a person's actions during a recorded session (extend, interrupt, budget,
 * compact) done again at the same points, or reported as not replayed.
 *
 * The budget and actions tests run side by side on one worker and fake model, each in a folder of
 * its own (its project, the eval's scratch copies and report) with a fake-model lane on it. The
 * tests with a grader run after them, alone on the fake model: a grading request names no folder
 * (only the rubric, the user's message and the answer), so no lane could answer it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChatMessage } from '../../common/messages';
import { EVAL_WORKFLOW, type EvalCaseReport } from '../../common/eval/eval-types';
import { GRADE_MALFORMED } from '../../common/eval/grading';
import { EvalOptionsError, startEval } from '../../client/eval-client';
import { LoopwrightClient } from '../../client/session-client';
import { fault, hang, isSummaryRequest, type RecordedRequest, type Step, text, toolCalls } from '../../fake-model/server';
import { copyExampleBundle, EXAMPLE_BUNDLE, type SessionHarness } from '../support/session-harness';
import { type FakeLane, type FakeLanes, type LaneHarness, startLaneHarness } from '../support/fake-lanes';
import { Worker } from '@temporalio/worker';
import { LoopwrightPlugin } from '../../worker/plugin';
import { defineScorer } from '../../activities/eval/scorers';

jest.setTimeout(120_000);

const CANDIDATE = 'candidate-model';
let h: SessionHarness;
let suite: LaneHarness | undefined;
/** Each side-by-side test's own script and requests on the shared fake model. */
let lanes: FakeLanes;
let loopwright: LoopwrightClient;
/** The example bundle the tests with a grader record on. */
let bundleCopy: ReturnType<typeof copyExampleBundle>;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-eval-suite-'));
  suite = await startLaneHarness();
  ({ h, lanes, loopwright } = suite);
  bundleCopy = copyExampleBundle();
}, 120_000);
afterAll(async () => {
  await suite?.close();
  bundleCopy?.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A folder of the test's own under `dir`, with a copy of the example bundle in its project, and a lane on it. */
function openLane(prefix: string): { folder: string; bundle: string; m: FakeLane } {
  const folder = fs.mkdtempSync(path.join(dir, prefix));
  const bundle = path.join(folder, 'project', path.basename(EXAMPLE_BUNDLE));
  fs.cpSync(EXAMPLE_BUNDLE, bundle, { recursive: true });
  return { folder, bundle, m: lanes.open(folder) };
}

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

/** Record a session of the example bundle at `bundle` with the given user messages (answers come from the responder). */
async function record(bundle: string, messages: string[], workflowId: string): Promise<string> {
  const session = await loopwright.start({ bundlePath: bundle, agentId: 'facilitator', projectRoot: path.dirname(bundle), workflowId });
  for (const m of messages) expect(await session.send(m)).toMatchObject({ status: 'completed' });
  await session.end();
  await session.result();
  return session.workflowId;
}

test.concurrent(
  'eval budget: once the candidate spent the suite budget, cases not yet started are skipped and reported; the spending survives a replaced worker and runs continued as new',
  async () => {
    const { folder, bundle, m } = openLane('budget-');
    m.setResponder(() => text('An answer.', { usage: { prompt_tokens: 1000, completion_tokens: 100 } }));
    const recorded = await record(bundle, ['answer me'], `rec-budget-${process.pid}`);
    // A worker of its own, stopped once a case is scored and replaced: the next one replays the eval from history.
    const taskQueue = `eval-budget-${process.pid}`;
    const first = await h.startWorker({ taskQueue });
    const client = new LoopwrightClient(h.client, taskQueue);
    const evaluation = await startEval(client, {
      sources: [recorded, recorded, recorded, recorded],
      candidate: { model: CANDIDATE },
      // 1,100 tokens a case: the first two cases run (1,100 < 1,500), the last two are skipped (2,200 ≥ 1,500).
      budget: { tokens: 1500 },
      concurrency: 1,
      continueAfter: 1,
      scratchRoot: path.join(folder, 'scratch-budget'),
      reportPath: path.join(folder, 'report-budget.json'),
      workflowId: `eval-budget-${process.pid}`,
    });
    for (;;) {
      const state = await evaluation.state().catch(() => undefined);
      if (state && state.scored >= 1) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await first.stop();
    await h.startWorker({ taskQueue });
    const summary = await evaluation.result();
    expect(summary).toMatchObject({ total: 4, started: 2, scored: 2, skipped: 2, errors: 0, candidateTokens: 2200, budgetReached: true, reportCases: 4 });
    // Each case ran in a run of its own: the spending was carried from run to run.
    expect(summary.runs).toBe(3);
    const report = await evaluation.report();
    expect(report.budget).toEqual({ tokens: 1500, spentTokens: 2200, reached: true, skipped: 2 });
    expect(report.cases.map((c) => [c.index, c.skipped ?? 'ran', c.candidate?.usage.totalTokens])).toEqual([
      [0, 'ran', 1100],
      [1, 'ran', 1100],
      [2, 'budget', undefined],
      [3, 'budget', undefined],
    ]);
    // The skipped cases never started a session.
    for (const index of [2, 3]) await expect(h.client.workflow.getHandle(`${evaluation.workflowId}-${index}`).describe()).rejects.toMatchObject({ name: 'WorkflowNotFoundError' });
    // An eval run again under its id counts what the cases its journal holds spent: here case 0 (1,100 tokens), so only case 1 runs.
    const againId = `eval-budget-again-${process.pid}`;
    const againReport = path.join(folder, 'report-budget-again.json');
    fs.writeFileSync(`${againReport}.journal`, `${JSON.stringify({ ...report.cases[0], evalId: againId })}\n`);
    const again = await startEval(client, {
      sources: [recorded, recorded, recorded, recorded],
      candidate: { model: CANDIDATE },
      budget: { tokens: 1500 },
      concurrency: 1,
      scratchRoot: path.join(folder, 'scratch-budget-again'),
      reportPath: againReport,
      workflowId: againId,
    });
    expect(await again.result()).toMatchObject({ scored: 2, skipped: 2, candidateTokens: 2200, budgetReached: true });
    expect((await again.report()).cases.map((c) => c.skipped ?? 'ran')).toEqual(['ran', 'ran', 'budget', 'budget']);
    await expect(h.client.workflow.getHandle(`${againId}-0`).describe()).rejects.toMatchObject({ name: 'WorkflowNotFoundError' });
    // A cost budget needs prices: refused before anything starts, and by the workflow itself.
    await expect(startEval(client, { sources: [recorded], budget: { cost: 1 }, scratchRoot: path.join(folder, 'scratch-cost') })).rejects.toThrow(EvalOptionsError);
    const unpriced = await h.client.workflow.start(EVAL_WORKFLOW, {
      taskQueue,
      workflowId: `eval-unpriced-${process.pid}`,
      args: [{ cases: [{ name: 'r', source: { workflowId: recorded } }], candidate: {}, scratchRoot: folder, reportPath: path.join(folder, 'unpriced.json'), budget: { cost: 1 } }],
    });
    await expect(unpriced.result()).rejects.toMatchObject({ cause: { message: expect.stringContaining('budget.cost needs prices'), type: 'LoopwrightBadInput' } });
  },
);

test.concurrent('eval actions: extend and interrupt replayed after as many model replies, budget and compact before the turn; one whose point the candidate never reaches is reported', async () => {
  const { folder, bundle, m } = openLane('actions-');
  const TEMPLATE = { file_path: '{bundle-root}/workflows/intake/template.md' };
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  m.setResponder((request): Step | Promise<Step> => {
    if (isSummaryRequest(request)) return text('Summary: the user asked for work on the intake template.');
    const candidate = request.body?.model === CANDIDATE;
    const messages: ChatMessage[] = request.body?.messages ?? [];
    const last = messages.map((m) => m.role).lastIndexOf('user');
    const step = messages.slice(last).filter((m) => m.role === 'assistant').length;
    const message = lastUserMessage(request);
    if (message === 'work long') {
      // Three model calls: the session's limit of 2 is extended during the second.
      if (step < 2) return step === 1 && !candidate ? gate.then(() => toolCalls([{ name: 'read_file', arguments: TEMPLATE }])) : toolCalls([{ name: 'read_file', arguments: TEMPLATE }]);
      return text('Worked long.');
    }
    // The recording is interrupted during its second model call; the candidate's would answer at once.
    if (message === 'work slowly') return step === 0 ? toolCalls([{ name: 'read_file', arguments: TEMPLATE }]) : candidate ? text('Done at once.') : hang();
    // The candidate answers without a tool: it never reaches the point of the recorded interrupt.
    if (message === 'stop me') return candidate ? text('Nothing to do.') : step === 0 ? toolCalls([{ name: 'read_file', arguments: TEMPLATE }]) : hang();
    return text(`no script for ${message}`);
  });
  const session = await loopwright.start({
    bundlePath: bundle,
    agentId: 'facilitator',
    projectRoot: path.dirname(bundle),
    maxIterations: 2,
    context: { window: 8192, keepRecent: 1 },
    budget: { sessionTokens: 1_000_000 },
    workflowId: `rec-actions-${process.pid}`,
  });
  const requests = () => m.requests.length;
  // Turn 1: extended by 1 while its second model call runs.
  let seen = requests();
  const first = session.send('work long');
  await m.waitForRequests(seen + 2, 20_000);
  expect(await session.extend(1)).toBe(3);
  release();
  expect(await first).toMatchObject({ status: 'completed', iterations: 3 });
  // Between turns 1 and 2 a budget raised; between turns 2 and 3 the view compacted. Turns 2 and 3 interrupted during their second model call.
  await session.budget({ sessionTokens: 5000 });
  for (const message of ['work slowly', 'stop me']) {
    if (message === 'stop me') expect(await session.compact()).not.toBeNull();
    seen = requests();
    const turn = session.send(message);
    await m.waitForRequests(seen + 2, 20_000);
    await session.interrupt('enough');
    expect(await turn).toMatchObject({ status: 'interrupted' });
  }
  await session.end();
  await session.result();

  const evaluation = await startEval(loopwright, {
    sources: [session.workflowId],
    candidate: { model: CANDIDATE },
    scratchRoot: path.join(folder, 'scratch-actions'),
    reportPath: path.join(folder, 'report-actions.json'),
  });
  expect(await evaluation.result()).toMatchObject({ scored: 1, errors: 0 });
  const [c] = (await evaluation.report()).cases as [EvalCaseReport];
  // Turns 1 and 2 end as recorded: the extend let the third call run, the interrupt stopped the second.
  // (An interrupted turn counts the model call it stopped.)
  expect(c.turns.map((t) => [t.baseline.status, t.baseline.iterations, t.candidate?.status, t.candidate?.iterations])).toEqual([
    ['completed', 3, 'completed', 3],
    ['interrupted', 2, 'interrupted', 2],
    ['interrupted', 2, 'completed', 1],
  ]);
  expect(c.replay.actionsReplayed).toBe(4);
  expect(c.replay.actionsNotReplayed).toEqual([{ turn: 3, kind: 'interrupt', at: 1, reason: "the candidate's turn ended after 0 model replies that called tools" }]);
  // The budget raise and the compaction came before the candidate's turns 2 and 3, as they did in the recording.
  const state = await loopwright.session(c.candidateWorkflowId).state();
  expect(state.context?.compactions).toBeGreaterThan(0);
  expect(state.budget?.sessionTokens.limit).toBe(1_005_000);
});

// After the side-by-side tests (they have finished when these start): a grading request names no lane, so these have the fake model to themselves.
describe('with a grader', () => {
  beforeEach(() => h.fake.reset());

  test('eval grading: each turn graded on both sides against the rubric; a malformed grade is a typed failure; grading usage apart from the candidate', async () => {
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
    const recorded = await record(bundleCopy.bundle, ['who uses it?', 'what are the steps?'], `rec-graded-${process.pid}`);
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

  test('eval on a plugin worker: a worker made with LoopwrightPlugin alone runs an eval suite, its grader and its custom scorers', async () => {
    h.fake.setResponder((request) => (isGrading(request) ? text('{"score": 6, "passed": true, "reason": "answers"}') : text('An answer.')));
    const recorded = await record(bundleCopy.bundle, ['answer me'], `rec-plugin-${process.pid}`);
    const taskQueue = `eval-plugin-${process.pid}`;
    const scored: string[] = [];
    const worker = await Worker.create({
      connection: h.nativeConnection,
      taskQueue,
      workflowBundle: h.workflowBundle,
      plugins: [
        new LoopwrightPlugin({
          model: { baseURL: h.fake.baseURL, apiKey: 'test-key' },
          scorers: [defineScorer({ name: 'answered', score: ({ name, candidate }) => (scored.push(name), candidate.turns.length === 1) })],
        }),
      ],
    });
    const running = worker.run();
    try {
      // Only the plugin worker polls this queue: the eval, its sessions and every activity run there.
      const evaluation = await startEval(new LoopwrightClient(h.client, taskQueue), {
        sources: [recorded, recorded],
        candidate: { model: CANDIDATE },
        grader: { rubric: 'Any answer.' },
        scorers: ['answered'],
        scratchRoot: path.join(dir, 'scratch-plugin'),
        reportPath: path.join(dir, 'report-plugin.json'),
      });
      expect(await evaluation.result()).toMatchObject({ total: 2, scored: 2, errors: 0, statusChanged: 0, trajectoryChanged: 0 });
      const report = await evaluation.report();
      for (const c of report.cases) {
        expect(c.error).toBeUndefined();
        expect(c.scorers).toEqual([{ name: 'answered', passed: true }]);
        expect(c.grades).toMatchObject({ model: CANDIDATE, baselineMean: 6, candidateMean: 6, failures: 0 });
      }
      expect(scored).toEqual([recorded, recorded]);
    } finally {
      worker.shutdown();
      await running;
    }
  });
});
