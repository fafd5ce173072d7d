/**
 * How a session reports a finished turn: the one-shot result (or its typed failure), the
 * `loopwright.turn` span's closing attributes, and the short reply kept in the state.
 */
import { ApplicationFailure } from '@temporalio/workflow';
import { BUDGET_EXCEEDED, MAX_ITERATIONS_EXCEEDED, REPLY_REFUSED, REPLY_TRUNCATED, TURN_FAILED, VERIFICATION_FAILED } from '../../common/failure-types';
import type { VerificationReport } from '../../common/verify-types';
import type { SessionResult, TurnResult } from '../../common/session-types';
import type { SpanEnd } from '../tracing/trace-hook';
import { isPaused, type PausedTurn, type TurnOutcome } from '../turn/turn';

/** Longest reply kept in `state.lastTurn` (the whole reply is in the transcript and the turn's result). */
const LAST_TURN_EXCERPT = 4_000;

/** Failure type of a one-shot turn that ended in each of these statuses. */
const ONE_SHOT_FAILURES: Partial<Record<TurnResult['status'], string>> = {
  max_iterations: MAX_ITERATIONS_EXCEEDED,
  failed: TURN_FAILED,
  truncated: REPLY_TRUNCATED,
  budget_exceeded: BUDGET_EXCEEDED,
  refused: REPLY_REFUSED,
  content_filtered: REPLY_REFUSED,
  failed_verification: VERIFICATION_FAILED,
};

export function excerpt(response: string | null): string | null {
  return response !== null && response.length > LAST_TURN_EXCERPT ? `${response.slice(0, LAST_TURN_EXCERPT)}…` : response;
}

/** A one-shot session returns its turn (and the session's warnings), or fails with a stable type carrying the partial result. */
export function oneShotOutcome(result: TurnResult, turns: number, warnings?: readonly string[]): SessionResult {
  const type = ONE_SHOT_FAILURES[result.status];
  if (type) {
    const message =
      result.status === 'max_iterations'
        ? (result.error ?? 'Agent execution exceeded maximum iterations')
        : result.status === 'failed'
          ? `The turn failed: ${result.error ?? 'unknown error'}`
          : (result.error ?? `The turn ended ${result.status}`);
    throw ApplicationFailure.create({ type, message, nonRetryable: true, details: [result] });
  }
  return { turns, lastTurn: result, usage: result.usage, endedBy: 'one_shot', ...(warnings?.length ? { warnings: [...warnings] } : {}) };
}

/** What the `loopwright.turn` span records when the turn ends (or pauses for the next run). */
export function turnSpanEnd(outcome: TurnOutcome | PausedTurn): SpanEnd {
  if (isPaused(outcome)) return { attributes: { 'loopwright.status': 'paused', 'loopwright.iterations': outcome.paused.iterations } };
  return {
    attributes: {
      'loopwright.status': outcome.status,
      'loopwright.iterations': outcome.iterations,
      'loopwright.tool_calls': outcome.toolCalls,
      'gen_ai.usage.input_tokens': outcome.usage.promptTokens,
      'gen_ai.usage.output_tokens': outcome.usage.completionTokens,
      ...(outcome.compactions?.length ? { 'loopwright.compactions': outcome.compactions.length } : {}),
      ...(outcome.compactions?.some((c) => c.cachedTokensLost !== undefined)
        ? { 'loopwright.compaction.cached_tokens_lost': outcome.compactions.reduce((sum, c) => sum + (c.cachedTokensLost ?? 0), 0) }
        : {}),
      ...(outcome.continuations ? { 'loopwright.continuations': outcome.continuations } : {}),
      ...(outcome.verification ? { 'loopwright.verification': outcome.verification.status, 'loopwright.verify.attempts': outcome.verification.attempts } : {}),
    },
    ...(outcome.status === 'failed' ? { error: outcome.error ?? 'the turn failed' } : {}),
  };
}

/** A verification report for the session's state: the counts, and only the first failed items. */
export function shortReport(report: VerificationReport): VerificationReport {
  return { ...report, items: report.items.filter((item) => !item.passed).slice(0, 20) };
}
