/**
 * The model-graded scorer's pure parts and the suite budget's report: reading a grade strictly
 * (a malformed one names the field at fault), the grade rules, the grade column and lines of the
 * terminal report, cases skipped for the budget in the table, the rules and the JUnit XML, and a
 * person's recorded action an eval did not replay.
 */
import { parseGrade, renderGradeRequest } from '../../../activities/eval/grader';
import { brokenRules, parseRule } from '../../../common/eval/thresholds';
import { junitXml } from '../../../common/eval/junit';
import { type CaseGrades, GRADE_MALFORMED, GRADE_NO_ANSWER, meanScore } from '../../../common/eval/grading';
import type { EvalCaseReport, EvalReport, SideFigures } from '../../../common/eval/eval-types';
import { evalReportLines } from '../../../cli/commands/eval-report-text';

function side(tokens: number): SideFigures {
  return { status: 'completed', turns: 2, iterations: 2, usage: { promptTokens: tokens - 10, completionTokens: 10, totalTokens: tokens } };
}

function caseReport(extra: Partial<EvalCaseReport> = {}): EvalCaseReport {
  return {
    index: 0,
    name: 'intake',
    source: { workflowId: 'w1' },
    candidateWorkflowId: 'eval-1-0',
    baseline: side(1000),
    candidate: side(1000),
    turns: [],
    statusChanged: false,
    trajectory: { same: true },
    replay: { answered: 0, ran: 0, diverged: 0, divergedCalls: [], approvalsAsRecorded: 0, approvalsByRule: 0 },
    scorers: [],
    warnings: [],
    ...extra,
  };
}

const GRADES: CaseGrades = {
  model: 'grader',
  turns: [
    { turn: 1, baseline: { grade: { score: 9, passed: true, reason: 'names the users' } }, candidate: { grade: { score: 4, passed: false, reason: 'no users named' } } },
    { turn: 2, baseline: { grade: { score: 8, passed: true, reason: 'ok' } }, candidate: { failure: { type: GRADE_MALFORMED, message: 'the grader\'s reply holds no JSON object: "great"' } } },
  ],
  baselineMean: 8.5,
  candidateMean: 4,
  calls: 5,
  failures: 1,
  usage: { promptTokens: 900, completionTokens: 100, totalTokens: 1000 },
};

test('grader: a grade is read from the whole reply or its one fenced block; anything else names what is wrong', () => {
  expect(parseGrade('{"score": 7, "passed": true, "reason": " clear "}')).toEqual({ ok: true, grade: { score: 7, passed: true, reason: 'clear' } });
  expect(parseGrade('Here:\n```json\n{"score": 2.5, "passed": false, "reason": "vague"}\n```')).toEqual({ ok: true, grade: { score: 2.5, passed: false, reason: 'vague' } });
  expect(parseGrade('great answer')).toEqual({ ok: false, reason: 'the grader\'s reply holds no JSON object: "great answer"' });
  const high = parseGrade('{"score": 12, "passed": true, "reason": "x"}');
  expect(high.ok).toBe(false);
  expect(!high.ok && high.reason).toMatch(/^the grade's JSON does not have the asked shape \(score: .*10.*\)/);
  const missing = parseGrade('{"score": 5, "reason": "x"}');
  expect(!missing.ok && missing.reason).toMatch(/\(passed: /);
  expect(parseGrade(`{"score": 5, "passed": true, "reason": "${'r'.repeat(400)}"}`)).toMatchObject({ ok: true, grade: { reason: expect.stringMatching(/^r{299}…$/) } });
  const request = renderGradeRequest({ rubric: ' Names the users. ', message: 'Who uses it?', answer: 'Clerks.' });
  expect(request).toContain('----- BEGIN RUBRIC -----\nNames the users.\n----- END RUBRIC -----');
  expect(request).toContain('----- BEGIN ANSWER -----\nClerks.\n----- END ANSWER -----');
  expect(meanScore([{ grade: { score: 7, passed: true, reason: '' } }, { failure: { type: GRADE_NO_ANSWER, message: '' } }, { grade: { score: 8, passed: true, reason: '' } }])).toBe(7.5);
  expect(meanScore([{ failure: { type: GRADE_NO_ANSWER, message: '' } }])).toBeUndefined();
});

test('rules: grade-failed names each candidate turn not passed or not graded; grade-dropped compares the means; a skipped case breaks none', () => {
  const rules = ['grade-failed', 'grade-dropped', 'status-changed'].map(parseRule);
  expect(brokenRules(caseReport({ grades: GRADES }), rules)).toEqual([
    {
      rule: 'grade-failed',
      message: `the grader did not pass turn 1 (4/10 failed: no users named); turn 2 (${GRADE_MALFORMED}: the grader's reply holds no JSON object: "great")`,
    },
    { rule: 'grade-dropped', message: 'mean grade 8.5 → 4 (of 10)' },
  ]);
  const even: CaseGrades = { ...GRADES, turns: [GRADES.turns[0]!].map((t) => ({ ...t, candidate: t.baseline })), candidateMean: 8.5 };
  expect(brokenRules(caseReport({ grades: even }), rules)).toEqual([]);
  expect(brokenRules(caseReport({ grades: { ...GRADES, turns: [], error: { type: 'ModelNotFound', message: 'no model grader' } } }), rules)[0]).toEqual({
    rule: 'grade-failed',
    message: 'the answers could not be graded: ModelNotFound: no model grader',
  });
  // Without grades the grade rules have nothing to say (the command refuses them without a rubric).
  expect(brokenRules(caseReport(), rules)).toEqual([]);
  expect(brokenRules(caseReport({ skipped: 'budget', baseline: undefined, candidate: undefined }), rules)).toEqual([]);
});

test('report: a grade column and lines when a rubric graded the answers; skipped cases and the budget in the table and the JUnit XML', () => {
  const report: EvalReport = {
    evalId: 'eval-1',
    candidate: {},
    replay: {},
    total: 2,
    cases: [caseReport({ grades: GRADES }), caseReport({ index: 1, name: 'later', skipped: 'budget', baseline: undefined, candidate: undefined })],
    budget: { tokens: 800, spentTokens: 1000, reached: true, skipped: 1 },
  };
  const broken = new Map(report.cases.map((c) => [c.index, brokenRules(c, [parseRule('grade-failed')])]));
  const lines = evalReportLines(report, broken);
  expect(lines[0]).toMatch(/\s+calls\s+grade\s+result$/);
  expect(lines[1]).toMatch(/\s8\.5 → 4 \(1 ungraded\)\s+FAIL grade-failed$/);
  expect(lines[2]).toMatch(/^2\s+later\s.*SKIPPED \(budget\)$/);
  expect(lines).toContain('  grade: turn 1 candidate 4/10 failed: no users named');
  expect(lines).toContain(`  grade: turn 2 candidate ${GRADE_MALFORMED}: the grader's reply holds no JSON object: "great"`);
  expect(lines.at(-2)).toBe('2 recording(s): 0 passed, 1 failed, 1 skipped · tokens 1,000 → 1,000 (±0%) · grading 1,000 tokens');
  expect(lines.at(-1)).toBe('suite budget reached (1,000 of 800 tokens): 1 recording(s) not replayed, reported as skipped');

  const xml = junitXml(report, broken);
  expect(xml).toMatch(/<testsuite name="loopwright eval eval-1" tests="2" failures="1" errors="0" skipped="1"/);
  expect(xml).toContain(`<skipped message="not replayed: the suite's budget was reached before it started"/>`);
  expect(xml).toContain('grades (grader): mean 8.5 → 4, 1000 grading tokens');
  expect(xml).toContain('  turn 1: 9/10 passed: names the users → 4/10 failed: no users named');
});

test('report: a recorded action the candidate did not replay is named in the details and the JUnit output', () => {
  const c = caseReport({
    replay: {
      ...caseReport().replay,
      actionsReplayed: 2,
      actionsNotReplayed: [{ turn: 3, kind: 'interrupt', at: 1, reason: "the candidate's turn ended after 0 model replies that called tools" }],
    },
  });
  const report: EvalReport = { evalId: 'eval-2', candidate: {}, replay: {}, total: 1, cases: [c] };
  const note = "  not replayed: turn 3: the interrupt after 1 model reply (the candidate's turn ended after 0 model replies that called tools)";
  expect(evalReportLines(report, new Map([[0, []]]))).toContain(note);
  const xml = junitXml(report, new Map([[0, []]]));
  expect(xml).toContain('recorded actions replayed: 2');
  expect(xml).toContain("not replayed: turn 3: the interrupt after 1 model reply (the candidate's turn ended");
});
