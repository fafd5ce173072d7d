/**
 * The model-graded scorer of an eval: a rubric the user writes, and a grader model (the candidate's
 * unless named) that reads each turn's user message and final answer, on both sides (the recording
 * and the candidate), and answers with a structured grade. What the eval's input carries, what a
 * grade is, and what a case's grading adds to the report. A grade the model wrote badly is a typed
 * failure in the report, never a failed eval.
 */
import type { TokenUsage } from '../messages';

/** Longest rubric an eval takes, in characters (it is sent with every grading call). */
export const MAX_RUBRIC_CHARS = 20_000;
/** Highest score a grade gives (scores run from 0 to this). */
export const GRADE_SCALE = 10;
/** Longest reason kept from a grade, in characters. */
export const MAX_GRADE_REASON_CHARS = 300;
/** Grading calls per answer: a malformed reply is asked for once more before it is reported. */
export const GRADE_ATTEMPTS = 2;

/** The grader's reply could not be read as a grade (no JSON, wrong shape, a score off the scale). */
export const GRADE_MALFORMED = 'LoopwrightGradeMalformed';
/** The turn has no answer to grade (it failed, or the candidate never reached it). */
export const GRADE_NO_ANSWER = 'LoopwrightGradeNoAnswer';
/** The grading of the whole case failed (the grader model refused the key, or does not exist). */
export const GRADING_FAILED = 'LoopwrightGradingFailed';

/** Settings of the model-graded scorer (`EvalInput.grader`). */
export interface GraderSettings {
  /** What a good answer is, in the user's words. */
  rubric: string;
  /** Where the rubric was read from (a file), for the report. */
  rubricSource?: string;
  /** The grading model; default: the candidate session's model. The worker's base URL and key serve it. */
  model?: string;
}

/** A grade: a score on the 0..GRADE_SCALE scale, whether the answer meets the rubric, and why. */
export interface Grade {
  score: number;
  passed: boolean;
  reason: string;
}

/** One side's grade of one turn, or why there is none. */
export type GradeOutcome = { grade: Grade } | { failure: { type: string; message: string } };

/** One turn graded on both sides. */
export interface TurnGrades {
  turn: number;
  baseline: GradeOutcome;
  candidate: GradeOutcome;
}

/** What grading one case gives: the grades per turn, their means, and what grading cost (apart from the candidate's tokens). */
export interface CaseGrades {
  /** The model that graded. */
  model: string;
  turns: TurnGrades[];
  /** Mean score of the turns graded, per side (absent when none was). */
  baselineMean?: number;
  candidateMean?: number;
  /** Grading calls made (a malformed reply asked again counts twice). */
  calls: number;
  /** Grades that could not be had (malformed, or no answer). */
  failures: number;
  usage: TokenUsage;
  /** The grading failed as a whole (the case is scored without grades). */
  error?: { type: string; message: string };
}

/** The mean score of the outcomes that are grades, rounded to two decimals. */
export function meanScore(outcomes: readonly GradeOutcome[]): number | undefined {
  const scores = outcomes.flatMap((o) => ('grade' in o ? [o.grade.score] : []));
  if (scores.length === 0) return undefined;
  return Math.round((scores.reduce((a, b) => a + b, 0) / scores.length) * 100) / 100;
}

/** `7/10 passed`, `3/10 failed: <reason>`, or the failure's type and message. */
export function gradeText(outcome: GradeOutcome, withReason = false): string {
  if ('failure' in outcome) return `${outcome.failure.type}: ${outcome.failure.message}`;
  const { score, passed, reason } = outcome.grade;
  return `${score}/${GRADE_SCALE} ${passed ? 'passed' : 'failed'}${withReason && reason ? `: ${reason}` : ''}`;
}
