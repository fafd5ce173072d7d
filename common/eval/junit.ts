/**
 * An eval's report as JUnit XML, the form CI systems read test results in (GitHub Actions through
 * a reporter action, GitLab, Jenkins, Azure): one `testsuite` for the eval, one `testcase` per
 * recorded session, a `failure` per threshold the case broke, an `error` when it could not be
 * replayed, `skipped` when the suite's budget was reached before it started, and the case's figures
 * (with its grades, when a rubric graded them) as its `system-out`.
 */
import type { EvalCaseReport, EvalReport } from './eval-types';
import type { BrokenRule } from './thresholds';
import { changeText } from './thresholds';
import { differenceText } from './trajectory';
import { gradeText } from './grading';
import { actionText } from './actions';

/** The JUnit XML of `report`, with each case's broken rules (`brokenRules`), by case index. */
export function junitXml(report: EvalReport, broken: ReadonlyMap<number, readonly BrokenRule[]>): string {
  const cases = report.cases.map((c) => testcase(c, broken.get(c.index) ?? []));
  const failures = report.cases.filter((c) => c.error === undefined && (broken.get(c.index)?.length ?? 0) > 0).length;
  const errors = report.cases.filter((c) => c.error !== undefined).length;
  const skipped = report.cases.filter((c) => c.skipped !== undefined).length;
  const time = seconds(report.cases.reduce((n, c) => n + (c.candidate?.latencyMs ?? 0), 0));
  const suite = `  <testsuite name="${attr(`loopwright eval ${report.evalId}`)}" tests="${report.cases.length}" failures="${failures}" errors="${errors}" skipped="${skipped}" time="${time}">\n${cases.join('')}  </testsuite>\n`;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="loopwright eval" tests="${report.cases.length}" failures="${failures}" errors="${errors}" time="${time}">\n${suite}</testsuites>\n`;
}

function testcase(c: EvalCaseReport, broken: readonly BrokenRule[]): string {
  const open = `    <testcase classname="loopwright.eval" name="${attr(c.name)}" time="${seconds(c.candidate?.latencyMs ?? 0)}">\n`;
  const body: string[] = [];
  if (c.skipped !== undefined) body.push(`      <skipped message="${attr(`not replayed: the suite's ${c.skipped} was reached before it started`)}"/>\n`);
  else if (c.error !== undefined) body.push(`      <error type="error" message="${attr(c.error)}">${text(c.error)}</error>\n`);
  else for (const b of broken) body.push(`      <failure type="${attr(b.rule)}" message="${attr(b.message)}">${text(b.message)}</failure>\n`);
  body.push(`      <system-out>${text(summaryLines(c).join('\n'))}</system-out>\n`);
  return `${open}${body.join('')}    </testcase>\n`;
}

/** The case's figures, baseline beside candidate, for a CI log. */
export function summaryLines(c: EvalCaseReport): string[] {
  const lines = [`candidate session: ${c.candidateWorkflowId}`];
  const b = c.baseline;
  const n = c.candidate;
  if (b && n) {
    lines.push(`status: ${b.status} → ${n.status}`, `turns: ${b.turns} → ${n.turns}`, `iterations: ${b.iterations} → ${n.iterations}`);
    lines.push(`tokens: ${b.usage.totalTokens} → ${n.usage.totalTokens} (${changeText(b.usage.totalTokens, n.usage.totalTokens)})`);
    if (b.cost !== undefined && n.cost !== undefined) lines.push(`cost: ${b.cost} → ${n.cost}`);
    if (b.latencyMs !== undefined && n.latencyMs !== undefined) lines.push(`latency: ${b.latencyMs} ms → ${n.latencyMs} ms`);
  }
  lines.push(c.trajectory.same ? 'trajectory: the same' : `trajectory: ${differenceText(c.trajectory.firstDifference!)}`);
  lines.push(`calls: ${c.replay.answered} answered from the recording, ${c.replay.ran} ran, ${c.replay.diverged} diverged`);
  if (c.replay.actionsReplayed) lines.push(`recorded actions replayed: ${c.replay.actionsReplayed}`);
  for (const a of c.replay.actionsNotReplayed ?? []) lines.push(`not replayed: ${actionText(a)}`);
  for (const s of c.scorers)
    lines.push(
      `scorer ${s.name}: ${s.error ? `error: ${s.error}` : [s.value !== undefined ? `${s.value}` : '', s.passed !== undefined ? (s.passed ? 'passed' : 'failed') : '', s.note ?? ''].filter(Boolean).join(' ')}`,
    );
  const g = c.grades;
  if (g?.error) lines.push(`grades (${g.model}): ${g.error.type}: ${g.error.message}`);
  else if (g) {
    lines.push(`grades (${g.model}): mean ${g.baselineMean ?? '–'} → ${g.candidateMean ?? '–'}, ${g.usage.totalTokens} grading tokens`);
    for (const t of g.turns) lines.push(`  turn ${t.turn}: ${gradeText(t.baseline, true)} → ${gradeText(t.candidate, true)}`);
  }
  return lines;
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

/** XML-escaped attribute text (characters XML 1.0 cannot hold dropped). */
function attr(value: string): string {
  return text(value).replace(/"/g, '&quot;').replace(/\n/g, '&#10;');
}

function text(value: string): string {
  return (
    value
      // eslint-disable-next-line no-control-regex -- the control characters XML 1.0 allows are the ones kept
      .replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
  );
}
