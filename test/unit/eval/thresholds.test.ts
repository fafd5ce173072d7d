/** Thresholds that fail an eval, the JUnit XML and the terminal table, on hand-made report cases. */
import { brokenRules, changeText, parseRule, ThresholdError } from '../../../common/eval/thresholds';
import { junitXml } from '../../../common/eval/junit';
import type { EvalCaseReport, EvalReport, SideFigures } from '../../../common/eval/eval-types';
import { evalReportLines } from '../../../cli/commands/eval-report-text';

function side(tokens: number, extra: Partial<SideFigures> = {}): SideFigures {
  return { status: 'completed', turns: 1, iterations: 3, usage: { promptTokens: tokens - 10, completionTokens: 10, totalTokens: tokens }, latencyMs: 1000, ...extra };
}

function caseReport(extra: Partial<EvalCaseReport> = {}): EvalCaseReport {
  return {
    index: 0,
    name: 'intake <1> & "more"',
    source: { workflowId: 'w1' },
    candidateWorkflowId: 'eval-1-0',
    baseline: side(1000),
    candidate: side(1000),
    turns: [],
    statusChanged: false,
    trajectory: { same: true },
    replay: { answered: 2, ran: 1, diverged: 0, divergedCalls: [], approvalsAsRecorded: 0, approvalsByRule: 0 },
    scorers: [],
    warnings: [],
    ...extra,
  };
}

test('rules: the named ones and bounds on a figure, with or without % and +; anything else names what is accepted', () => {
  expect(parseRule('status-changed')).toEqual({ text: 'status-changed', kind: 'status-changed' });
  expect(parseRule(' tokens>+20% ')).toEqual({ text: 'tokens>+20%', kind: 'metric', metric: 'tokens', amount: 20, percent: true });
  expect(parseRule('iterations>2')).toMatchObject({ metric: 'iterations', amount: 2, percent: false });
  expect(parseRule('latency > +50.5%')).toMatchObject({ metric: 'latency', amount: 50.5, percent: true });
  expect(() => parseRule('tokens<20%')).toThrow(ThresholdError);
  expect(() => parseRule('speed>+1')).toThrow(/status-changed, trajectory-changed, diverged, checks-failed, scorer-failed, grade-failed, grade-dropped, or <metric>/);
});

test('rules: a case breaks exactly the rules its figures break; a case that could not run breaks "error" whatever the rules', () => {
  const rules = ['status-changed', 'trajectory-changed', 'diverged', 'checks-failed', 'scorer-failed', 'tokens>+20%', 'iterations>+1', 'cost>+10%', 'latency>+50%'].map(parseRule);
  expect(brokenRules(caseReport({ candidate: side(1199) }), rules)).toEqual([]);
  expect(brokenRules(caseReport({ candidate: side(1201) }), rules)).toEqual([{ rule: 'tokens>+20%', message: 'tokens 1,000 → 1,201 (+20%), over +20%' }]);
  expect(brokenRules(caseReport({ candidate: side(1000, { iterations: 5, latencyMs: 1600 }) }), rules).map((b) => b.rule)).toEqual(['iterations>+1', 'latency>+50%']);
  // Cost only when both sides are priced.
  expect(brokenRules(caseReport({ baseline: side(1000, { cost: 0.01 }), candidate: side(1000, { cost: 0.0111 }) }), rules).map((b) => b.rule)).toEqual(['cost>+10%']);
  expect(brokenRules(caseReport({ baseline: side(1000), candidate: side(1000, { cost: 1 }) }), rules)).toEqual([]);
  const changed = caseReport({
    statusChanged: true,
    turns: [
      {
        turn: 1,
        message: 'm',
        baseline: { ...side(1), status: 'completed', success: true, response: null, calls: 0 },
        candidate: { ...side(1), status: 'max_iterations', success: false, response: null, calls: 0 },
        statusChanged: true,
        trajectory: { same: true },
      },
    ],
    trajectory: { same: false, firstDifference: { turn: 1, index: 0, kind: 'tool', baseline: { tool: 'a', arguments: '{}' }, candidate: { tool: 'b', arguments: '{}' } } },
    replay: { answered: 0, ran: 0, diverged: 1, divergedCalls: [{ turn: 1, tool: 'b', arguments: '{}', action: 'run' }], approvalsAsRecorded: 0, approvalsByRule: 0 },
    baseline: side(1000, { checks: { verified: 1, failed: 0 } }),
    candidate: side(1000, { checks: { verified: 0, failed: 1 } }),
    scorers: [
      { name: 'saved', passed: false, note: 'no file' },
      { name: 'fine', value: 1 },
    ],
  });
  expect(brokenRules(changed, rules)).toEqual([
    { rule: 'status-changed', message: 'status changed (turn 1: completed → max_iterations)' },
    { rule: 'trajectory-changed', message: 'trajectory changed: turn 1, call 1: b instead of a' },
    { rule: 'diverged', message: '1 call(s) diverged from the recording: turn 1 b (run)' },
    { rule: 'checks-failed', message: 'document checks failed in 1 turn(s) (the recording: 0)' },
    { rule: 'scorer-failed', message: 'scorer(s) failed: saved (no file)' },
  ]);
  expect(brokenRules(caseReport({ error: 'the project is too large' }), rules)).toEqual([{ rule: 'error', message: 'the project is too large' }]);
  expect(brokenRules(caseReport({ error: 'x' }), [])).toHaveLength(1);
  expect([changeText(100, 112), changeText(100, 100), changeText(0, 5), changeText(1000, 1004)]).toEqual(['+12%', '±0%', '+5', '+0.4%']);
});

test('JUnit: one testcase per recording, a failure per broken rule, an error for a case that could not run, text escaped', () => {
  const report: EvalReport = {
    evalId: 'eval-1',
    candidate: { model: 'm2' },
    replay: {},
    total: 3,
    cases: [caseReport(), caseReport({ index: 1, name: 'b', candidate: side(2000) }), caseReport({ index: 2, name: 'c', error: 'cannot read <it>' })],
  };
  const broken = new Map(report.cases.map((c) => [c.index, brokenRules(c, [parseRule('tokens>+20%')])]));
  const xml = junitXml(report, broken);
  expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="loopwright eval" tests="3" failures="1" errors="1" time="3.000">/);
  expect(xml).toContain('<testcase classname="loopwright.eval" name="intake &lt;1&gt; &amp; &quot;more&quot;" time="1.000">');
  expect(xml).toContain('<failure type="tokens&gt;+20%" message="tokens 1,000 → 2,000 (+100%), over +20%">');
  expect(xml).toContain('<error type="error" message="cannot read &lt;it&gt;">');
  expect(xml.match(/<testcase /g)).toHaveLength(3);
  expect(xml).toContain('calls: 2 answered from the recording, 1 ran, 0 diverged');

  const lines = evalReportLines(report, broken);
  expect(lines[0]).toMatch(/^#\s+recording\s+turns\s+status\s+iterations\s+tokens\s+latency\s+trajectory\s+calls\s+result$/);
  expect(lines[1]).toMatch(/^1\s+intake <1> & "more"\s+1\s+completed\s+3\s+1,000 → 1,000 \(±0%\)\s+1\.00 s → 1\.00 s\s+same\s+2 answered, 1 ran\s+ok$/);
  expect(lines[2]).toMatch(/FAIL tokens>\+20%$/);
  expect(lines[3]).toMatch(/ERROR$/);
  expect(lines).toContain('  broke tokens>+20%: tokens 1,000 → 2,000 (+100%), over +20%');
  expect(lines).toContain('  error: cannot read <it>');
  expect(lines.at(-1)).toBe('3 recording(s): 1 passed, 2 failed · tokens 3,000 → 4,000 (+33%)');
});
