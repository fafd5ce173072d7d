/**
 * An eval's report for people: one row per recorded session, the baseline beside the candidate
 * (turn status, iterations, tokens with the change, latency, how the calls were answered, the mean
 * grade when a rubric graded them), then for each session that changed one line per difference and
 * per rule it broke, then the totals (with the grader's tokens and the suite budget apart).
 */
import type { EvalCaseReport, EvalReport } from '../../common/eval/eval-types';
import { type BrokenRule, changeText, formatMetric } from '../../common/eval/thresholds';
import { differenceText } from '../../common/eval/trajectory';
import { gradeText } from '../../common/eval/grading';
import { actionText } from '../../common/eval/actions';

/** The report as lines: a table, then the details of each case that changed or broke a rule, then the totals. */
export function evalReportLines(report: EvalReport, broken: ReadonlyMap<number, readonly BrokenRule[]>): string[] {
  const graded = report.cases.some((c) => c.grades !== undefined);
  const head = ['#', 'recording', 'turns', 'status', 'iterations', 'tokens', 'latency', 'trajectory', 'calls', ...(graded ? ['grade'] : []), 'result'];
  const rows = report.cases.map((c) => row(c, broken.get(c.index) ?? [], graded));
  const widths = head.map((h, i) => Math.min(i === 1 ? 40 : 60, Math.max(h.length, ...rows.map((r) => r[i]!.length))));
  const line = (cells: string[]): string =>
    cells
      .map((cell, i) => (cell.length > widths[i]! ? `${cell.slice(0, widths[i]! - 1)}…` : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const lines = [line(head), ...rows.map(line)];
  const details = report.cases.flatMap((c) => detailLines(c, broken.get(c.index) ?? []));
  if (details.length > 0) lines.push('', ...details);
  const failed = report.cases.filter((c) => (broken.get(c.index)?.length ?? 0) > 0).length;
  const skipped = report.cases.filter((c) => c.skipped !== undefined).length;
  const tokens = report.cases.reduce((sum, c) => ({ b: sum.b + (c.baseline?.usage.totalTokens ?? 0), n: sum.n + (c.candidate?.usage.totalTokens ?? 0) }), { b: 0, n: 0 });
  const graderTokens = report.cases.reduce((n, c) => n + (c.grades?.usage.totalTokens ?? 0), 0);
  lines.push(
    '',
    `${report.cases.length} recording(s): ${report.cases.length - failed - skipped} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''} · tokens ${formatMetric('tokens', tokens.b)} → ${formatMetric('tokens', tokens.n)} (${changeText(tokens.b, tokens.n)})${graded ? ` · grading ${formatMetric('tokens', graderTokens)} tokens` : ''}`,
  );
  const budget = report.budget;
  if (budget) {
    const caps = [
      budget.tokens !== undefined ? `${formatMetric('tokens', budget.spentTokens)} of ${formatMetric('tokens', budget.tokens)} tokens` : '',
      budget.cost !== undefined ? `${formatMetric('cost', budget.spentCost ?? 0)} of ${budget.cost} cost` : '',
    ]
      .filter(Boolean)
      .join(', ');
    lines.push(budget.reached ? `suite budget reached (${caps}): ${budget.skipped} recording(s) not replayed, reported as skipped` : `suite budget: ${caps} spent`);
  }
  return lines;
}

function row(c: EvalCaseReport, broken: readonly BrokenRule[], graded: boolean): string[] {
  const b = c.baseline;
  const n = c.candidate;
  const result = c.skipped !== undefined ? `SKIPPED (${c.skipped})` : c.error !== undefined ? 'ERROR' : broken.length > 0 ? `FAIL ${broken.map((r) => r.rule).join(', ')}` : 'ok';
  const grade = graded ? [gradeCell(c)] : [];
  if (!b || !n) return [String(c.index + 1), c.name, '', '', '', '', '', '', '', ...grade.map(() => ''), result];
  const same = (x: string, y: string): string => (x === y ? x : `${x} → ${y}`);
  return [
    String(c.index + 1),
    c.name,
    same(String(b.turns), String(n.turns)),
    same(b.status, n.status),
    same(String(b.iterations), String(n.iterations)),
    `${formatMetric('tokens', b.usage.totalTokens)} → ${formatMetric('tokens', n.usage.totalTokens)} (${changeText(b.usage.totalTokens, n.usage.totalTokens)})`,
    b.latencyMs !== undefined && n.latencyMs !== undefined ? `${formatMetric('latency', b.latencyMs)} → ${formatMetric('latency', n.latencyMs)}` : '',
    c.trajectory.same ? 'same' : `differs at turn ${c.trajectory.firstDifference!.turn}`,
    `${c.replay.answered} answered, ${c.replay.ran} ran${c.replay.diverged ? `, ${c.replay.diverged} diverged` : ''}`,
    ...grade,
    result,
  ];
}

/** `8 → 6.5` (mean grades of the recording and the candidate), `error` when grading failed, blank without grades. */
function gradeCell(c: EvalCaseReport): string {
  const g = c.grades;
  if (!g) return '';
  if (g.error) return 'error';
  return `${g.baselineMean ?? '–'} → ${g.candidateMean ?? '–'}${g.failures ? ` (${g.failures} ungraded)` : ''}`;
}

const SHOWN_ABOVE = new Set(['trajectory-changed', 'status-changed', 'diverged', 'scorer-failed', 'grade-failed']);

function detailLines(c: EvalCaseReport, broken: readonly BrokenRule[]): string[] {
  const notes: string[] = [];
  if (c.error !== undefined) notes.push(`error: ${c.error}`);
  else {
    if (!c.trajectory.same) notes.push(`trajectory: ${differenceText(c.trajectory.firstDifference!)}`);
    for (const t of c.turns) if (t.statusChanged) notes.push(`turn ${t.turn}: ${t.baseline.status} → ${t.candidate?.status ?? 'not reached'}${t.candidate?.error ? ` (${t.candidate.error})` : ''}`);
    for (const d of c.replay.divergedCalls)
      notes.push(`diverged: turn ${d.turn} ${d.tool} ${d.arguments} (${d.action === 'run' ? 'ran in the scratch copy' : d.action === 'stub' ? 'answered with a stub' : 'answered with an error'})`);
    for (const a of c.replay.actionsNotReplayed ?? []) notes.push(`not replayed: ${actionText(a)}`);
    for (const s of c.scorers) if (s.error !== undefined || s.passed === false) notes.push(`scorer ${s.name}: ${s.error ?? `failed${s.note ? `: ${s.note}` : ''}`}`);
    if (c.grades?.error) notes.push(`grading failed: ${c.grades.error.type}: ${c.grades.error.message}`);
    for (const t of c.grades?.turns ?? [])
      for (const [side, outcome] of [
        ['recording', t.baseline],
        ['candidate', t.candidate],
      ] as const)
        if (!('grade' in outcome) || !outcome.grade.passed) notes.push(`grade: turn ${t.turn} ${side} ${gradeText(outcome, true)}`);
    // Rules whose facts are already listed above are named in the table's last column only.
    for (const r of broken) if (!SHOWN_ABOVE.has(r.rule)) notes.push(`broke ${r.rule}: ${r.message}`);
  }
  for (const w of c.warnings) notes.push(`note: ${w}`);
  if (notes.length === 0) return [];
  return [`${c.index + 1} ${c.name} (candidate ${c.candidateWorkflowId}):`, ...notes.map((n) => `  ${n}`)];
}
