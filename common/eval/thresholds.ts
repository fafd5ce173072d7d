/**
 * Thresholds that make an eval fail (`loopwright eval --fail-on <rule>`), checked on each case of
 * the report: a changed turn status, a changed trajectory, a call that diverged from the recording,
 * a document check the candidate failed where the recording passed, a custom scorer that failed,
 * or a figure that grew past a bound (`tokens>+20%`, `iterations>+2`, `cost>+10%`, `latency>+50%`);
 * with a rubric, a candidate answer the grader did not pass (or could not grade), or a candidate
 * whose mean grade fell below the recording's. A case that could not be replayed always fails; a
 * case skipped for the suite's budget breaks no rule (the command reports skipped cases apart).
 */
import type { EvalCaseReport, SideFigures } from './eval-types';
import { differenceText } from './trajectory';
import { GRADE_SCALE, gradeText } from './grading';

/** The rules without a figure. */
export const FLAG_RULES = ['status-changed', 'trajectory-changed', 'diverged', 'checks-failed', 'scorer-failed', 'grade-failed', 'grade-dropped'] as const;
/** The rules that need the model-graded scorer (a rubric). */
export const GRADE_RULES: readonly string[] = ['grade-failed', 'grade-dropped'];
/** The figures a bound may be put on. */
export const METRICS = ['tokens', 'iterations', 'cost', 'latency'] as const;

export type Metric = (typeof METRICS)[number];
/** A parsed rule. */
export type ThresholdRule = { text: string; kind: (typeof FLAG_RULES)[number] } | { text: string; kind: 'metric'; metric: Metric; amount: number; percent: boolean };

/** One rule a case broke, and how. */
export interface BrokenRule {
  rule: string;
  message: string;
}

/** A rule that is not one; names what is accepted. */
export class ThresholdError extends Error {
  override name = 'ThresholdError';
}

/** Parse a rule: one of FLAG_RULES, or `<metric>>+<n>[%]` (the `+` may be left out). */
export function parseRule(text: string): ThresholdRule {
  const rule = text.trim();
  if ((FLAG_RULES as readonly string[]).includes(rule)) return { text: rule, kind: rule as (typeof FLAG_RULES)[number] };
  const match = /^([a-z]+)\s*>\s*\+?\s*(\d+(?:\.\d+)?)\s*(%?)$/.exec(rule);
  if (match && (METRICS as readonly string[]).includes(match[1]!)) return { text: rule, kind: 'metric', metric: match[1] as Metric, amount: Number(match[2]), percent: match[3] === '%' };
  throw new ThresholdError(`${JSON.stringify(text)} is not a rule: use ${FLAG_RULES.join(', ')}, or <metric>>+<n>[%] with metric ${METRICS.join(', ')} (e.g. tokens>+20%)`);
}

/** The rules `case` breaks (a case that could not be replayed breaks `error`, whatever the rules). */
export function brokenRules(c: EvalCaseReport, rules: readonly ThresholdRule[]): BrokenRule[] {
  if (c.skipped !== undefined) return [];
  if (c.error !== undefined) return [{ rule: 'error', message: c.error }];
  const broken: BrokenRule[] = [];
  for (const rule of rules) {
    const message = check(c, rule);
    if (message !== undefined) broken.push({ rule: rule.text, message });
  }
  return broken;
}

function check(c: EvalCaseReport, rule: ThresholdRule): string | undefined {
  switch (rule.kind) {
    case 'status-changed': {
      if (!c.statusChanged) return undefined;
      const changed = c.turns.filter((t) => t.statusChanged).map((t) => `turn ${t.turn}: ${t.baseline.status} → ${t.candidate?.status ?? 'not reached'}`);
      return changed.length > 0 ? `status changed (${changed.join('; ')})` : `the candidate ran ${c.candidate?.turns ?? 0} turns, the recording ${c.baseline?.turns ?? 0}`;
    }
    case 'trajectory-changed':
      return c.trajectory.same ? undefined : `trajectory changed: ${differenceText(c.trajectory.firstDifference!)}`;
    case 'diverged':
      return c.replay.diverged === 0
        ? undefined
        : `${c.replay.diverged} call(s) diverged from the recording: ${c.replay.divergedCalls.map((d) => `turn ${d.turn} ${d.tool} (${d.action})`).join(', ')}`;
    case 'checks-failed': {
      const b = c.baseline?.checks?.failed ?? 0;
      const n = c.candidate?.checks?.failed ?? 0;
      return n > b ? `document checks failed in ${n} turn(s) (the recording: ${b})` : undefined;
    }
    case 'scorer-failed': {
      const failed = c.scorers.filter((s) => s.passed === false || s.error !== undefined);
      return failed.length === 0 ? undefined : `scorer(s) failed: ${failed.map((s) => `${s.name}${s.error ? ` (${s.error})` : s.note ? ` (${s.note})` : ''}`).join(', ')}`;
    }
    case 'grade-failed': {
      const g = c.grades;
      if (!g) return undefined;
      if (g.error) return `the answers could not be graded: ${g.error.type}: ${g.error.message}`;
      const failed = g.turns.filter((t) => !('grade' in t.candidate) || !t.candidate.grade.passed);
      return failed.length === 0 ? undefined : `the grader did not pass ${failed.map((t) => `turn ${t.turn} (${gradeText(t.candidate, true)})`).join('; ')}`;
    }
    case 'grade-dropped': {
      const g = c.grades;
      if (g?.baselineMean === undefined || g.candidateMean === undefined || g.candidateMean >= g.baselineMean) return undefined;
      return `mean grade ${g.baselineMean} → ${g.candidateMean} (of ${GRADE_SCALE})`;
    }
    case 'metric':
      return metricCheck(c, rule);
  }
}

function metricCheck(c: EvalCaseReport, rule: Extract<ThresholdRule, { kind: 'metric' }>): string | undefined {
  const b = metricOf(c.baseline, rule.metric);
  const n = metricOf(c.candidate, rule.metric);
  if (b === undefined || n === undefined) return undefined;
  const growth = n - b;
  const over = rule.percent ? (b === 0 ? growth > 0 : (growth / b) * 100 > rule.amount) : growth > rule.amount;
  if (!over) return undefined;
  return `${rule.metric} ${formatMetric(rule.metric, b)} → ${formatMetric(rule.metric, n)} (${changeText(b, n)}), over +${rule.amount}${rule.percent ? '%' : ''}`;
}

/** A figure of one side. */
export function metricOf(side: SideFigures | undefined, metric: Metric): number | undefined {
  if (!side) return undefined;
  switch (metric) {
    case 'tokens':
      return side.usage.totalTokens;
    case 'iterations':
      return side.iterations;
    case 'cost':
      return side.cost;
    case 'latency':
      return side.latencyMs;
  }
}

/** `+12.5%`, `-3%`, `±0%`, or `+120` when the baseline is 0. */
export function changeText(baseline: number, candidate: number): string {
  if (baseline === 0) return candidate === 0 ? '±0%' : `+${candidate}`;
  const pct = ((candidate - baseline) / baseline) * 100;
  const rounded = Math.abs(pct) >= 10 ? Math.round(pct) : Math.round(pct * 10) / 10;
  return rounded === 0 ? '±0%' : `${rounded > 0 ? '+' : ''}${rounded}%`;
}

/** A figure as a report shows it: tokens with separators, latency in seconds, cost with its digits. */
export function formatMetric(metric: Metric, value: number): string {
  if (metric === 'latency') return `${(value / 1000).toFixed(value < 10_000 ? 2 : 1)} s`;
  if (metric === 'cost') return value.toFixed(value < 0.01 ? 6 : 4);
  return value.toLocaleString('en-US');
}
