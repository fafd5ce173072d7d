/**
 * The built-in scores of one case: a recorded session (the baseline) and its replay (the
 * candidate), turn by turn side by side — status, iterations, tokens, cost, latency, the document
 * checks, a headless answer's JSON status and the tool-call trajectory — and summed per session,
 * with the recorded actions of a person the candidate replayed and those it could not.
 * Pure: the eval's scoring activity reads both histories and calls this.
 */
import { callCost } from '../model-cost';
import type { ModelPrice } from '../budget-types';
import type { TokenUsage } from '../messages';
import { parseHeadlessStatus } from '../headless';
import type { EvalCaseReport, SideFigures, TurnScore } from './eval-types';
import { figuresOf, type RecordedTurn, type Recording } from './recording';
import { compareTrajectory } from './trajectory';

/** What `scoreCase` computes; the caller adds the case's name, source, scorers and workspace. */
export type CaseScores = Pick<EvalCaseReport, 'baseline' | 'candidate' | 'turns' | 'statusChanged' | 'trajectory' | 'replay' | 'warnings'>;

/** Score a candidate against its baseline; `prices` price turns their sessions did not price themselves. */
export function scoreCase(baseline: Recording, candidate: Recording, prices?: Record<string, ModelPrice>): CaseScores {
  const turns: TurnScore[] = baseline.turns.map((b, i) => {
    const c = candidate.turns[i];
    const difference = compareTrajectory(b.calls, c?.calls ?? []);
    return {
      turn: i + 1,
      message: b.message.length > 120 ? `${b.message.slice(0, 120)}…` : b.message,
      baseline: side(b, baseline, prices),
      ...(c ? { candidate: side(c, candidate, prices) } : {}),
      statusChanged: c === undefined || figuresOf(c).status !== figuresOf(b).status,
      trajectory: difference ? { same: false, firstDifference: difference } : { same: true },
    };
  });
  const first = turns.find((t) => !t.trajectory.same);
  const replay: CaseScores['replay'] = { answered: 0, ran: 0, diverged: 0, divergedCalls: [], approvalsAsRecorded: 0, approvalsByRule: 0 };
  candidate.turns.forEach((t, i) => {
    const r = t.result?.replay;
    if (!r) return;
    replay.answered += r.answered;
    replay.ran += r.ran;
    replay.diverged += r.diverged.length;
    replay.approvalsAsRecorded += r.approvalsAsRecorded;
    replay.approvalsByRule += r.approvalsByRule;
    for (const d of r.diverged) if (replay.divergedCalls.length < 50) replay.divergedCalls.push({ ...d, turn: i + 1 });
    if (r.actionsReplayed) replay.actionsReplayed = (replay.actionsReplayed ?? 0) + r.actionsReplayed;
    for (const a of r.actionsNotReplayed ?? []) (replay.actionsNotReplayed ??= []).push({ ...a, turn: i + 1 });
  });
  const warnings = [...baseline.warnings.map((w) => `recording: ${w}`), ...candidate.warnings.map((w) => `candidate: ${w}`)];
  if (candidate.turns.length > baseline.turns.length) warnings.push(`the candidate ran ${candidate.turns.length} turns, the recording ${baseline.turns.length}`);
  return {
    baseline: session(baseline, prices),
    candidate: session(candidate, prices),
    turns,
    statusChanged: turns.some((t) => t.statusChanged) || candidate.turns.length !== baseline.turns.length,
    trajectory: first ? { same: false, firstDifference: { ...first.trajectory.firstDifference!, turn: first.turn } } : { same: true },
    replay,
    warnings,
  };
}

/** A turn's figures, priced, with its latency and the number of calls. */
function side(turn: RecordedTurn, recording: Recording, prices: Record<string, ModelPrice> | undefined): TurnScore['baseline'] {
  const figures = figuresOf(turn);
  const cost = figures.cost ?? priced(figures.usage, turn.model ?? recording.input.model, prices);
  return { ...figures, ...(cost !== undefined ? { cost } : {}), ...(turn.latencyMs !== undefined ? { latencyMs: turn.latencyMs } : {}), calls: turn.calls.length };
}

/** A session's figures: its last turn's status, and its turns' sums. */
function session(recording: Recording, prices: Record<string, ModelPrice> | undefined): SideFigures {
  const turns = recording.turns.map((t) => side(t, recording, prices));
  const last = turns.at(-1);
  const usage = turns.reduce<TokenUsage>(
    (sum, t) => ({ promptTokens: sum.promptTokens + t.usage.promptTokens, completionTokens: sum.completionTokens + t.usage.completionTokens, totalTokens: sum.totalTokens + t.usage.totalTokens }),
    { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
  );
  const costs = turns.map((t) => t.cost);
  const checked = turns.filter((t) => t.verification);
  const headless = last ? parseHeadlessStatus(last.response ?? undefined)?.status : undefined;
  const latencies = turns.map((t) => t.latencyMs);
  return {
    status: last?.status ?? 'no turns',
    turns: turns.length,
    iterations: turns.reduce((n, t) => n + t.iterations, 0),
    usage,
    ...(costs.length > 0 && costs.every((c) => c !== undefined) ? { cost: round(costs.reduce((a, b) => a! + b!, 0)!) } : {}),
    ...(latencies.length > 0 && latencies.every((l) => l !== undefined) ? { latencyMs: latencies.reduce((a, b) => a! + b!, 0) } : {}),
    ...(checked.length > 0
      ? { checks: { verified: checked.filter((t) => t.verification!.status === 'verified').length, failed: checked.filter((t) => t.verification!.status !== 'verified').length } }
      : {}),
    ...(headless ? { headless } : {}),
  };
}

/** The cost of `usage` at the price of `model` (or `*`), when priced: cached prompt tokens at the cache prices, as budgets count them. */
function priced(usage: TokenUsage, model: string | undefined, prices: Record<string, ModelPrice> | undefined): number | undefined {
  const price = prices ? (prices[model ?? ''] ?? prices['*']) : undefined;
  return price ? round(callCost(usage, price)) : undefined;
}

function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
