/**
 * One case of an eval as a page shows it: each recorded turn with its scores as the report holds
 * them (never scored again here), the two transcripts side by side — the recording's (baseline)
 * and the candidate's, each the user's message, the tool calls with their arguments, results and
 * approvals, and the answer — and the differences to mark, named from the report's own facts: the
 * trajectory's first difference (another tool, other arguments, a skipped or an added step), the
 * calls that diverged from the recording, a changed status, a failed document check, and tokens or
 * cost that changed by more than a tenth. Pure: the reader (client/eval-reader.ts) reads the report
 * and both recordings.
 */
import type { EvalCaseReport, TurnScore } from './eval-types';
import { asRecorded } from './canonical-json';
import type { DivergedCall, FailedCheckItem, RecordedTurn, Recording } from './recording';
import { changeText, formatMetric } from './thresholds';
import { differenceText } from './trajectory';

/** A change of tokens or cost at least this large (in percent of the baseline's) is marked. */
export const NOTABLE_CHANGE_PERCENT = 10;
/** Arguments and results are cut to this many characters in a transcript. */
export const TRANSCRIPT_TEXT_CHARS = 4_000;

/** One tool call of a transcript. */
export interface TranscriptCall {
  /** Its place in the turn's calls (0-based), as the trajectory counts. */
  index: number;
  /** The model reply (1-based, within the turn) that asked for it. */
  iteration: number;
  tool: string;
  /** As the model wrote them; a candidate's with its scratch copy's folders written as recorded. */
  arguments: string;
  /** The result as JSON, where history holds it (a call answered from the recording has none of its own). */
  result?: string;
  /** The result's `success`, where history holds it. */
  ok?: boolean;
  /** The decision on a call that waited for approval. */
  approval?: { approved: boolean; reason?: string };
  /** A candidate's call that matches no recorded call of the turn, and what the eval did with it. */
  diverged?: DivergedCall['action'];
}

/** One side of a turn: what the user said, the calls, and how the turn ended. */
export interface TranscriptTurn {
  message: string;
  calls: TranscriptCall[];
  response: string | null;
  status: string;
  error?: string;
  verification?: { status: string; passed: number; failed: number; failedItems?: FailedCheckItem[] };
}

/** What a difference is about. */
export type DifferenceKind = 'tool' | 'arguments' | 'missing' | 'extra' | 'diverged' | 'status' | 'check' | 'tokens' | 'cost' | 'not-reached';

/** One difference to mark in a turn. */
export interface TurnDifference {
  kind: DifferenceKind;
  /** What differs, in a line for people, after its kind (`call 2: save_output {…} instead of {…}`, `6,147 → 29,215 (+375%)`). */
  text: string;
  /** The call it is about (its index in the turn), for the trajectory's kinds and a diverged call. */
  index?: number;
}

/** One turn: its scores from the report, the differences to mark, and both transcripts. */
export interface EvalTurnView extends TurnScore {
  differences: TurnDifference[];
  /** A side is absent when its recording could not be read (see `problems`) or never had this turn. */
  transcripts: { baseline?: TranscriptTurn; candidate?: TranscriptTurn };
}

/** One case of an eval: its report entry, with each turn's transcripts and marked differences. */
export type EvalCaseView = Omit<EvalCaseReport, 'turns'> & {
  evalId: string;
  turns: EvalTurnView[];
  /** Transcripts that could not be read (a history file gone, a session deleted), in a line each. */
  problems: string[];
};

/** The case view of `report` (one case of the report, as written), with the recordings read for it. */
export function evalCaseView(evalId: string, report: EvalCaseReport, baseline: Recording | undefined, candidate: Recording | undefined, problems: readonly string[] = []): EvalCaseView {
  const paths = candidate?.input.eval?.paths;
  const turns = report.turns.map((score): EvalTurnView => {
    const b = baseline?.turns[score.turn - 1];
    const c = candidate?.turns[score.turn - 1];
    const diverged = report.replay.divergedCalls.filter((d) => d.turn === score.turn);
    const matched = c ? matchDiverged(c, diverged) : new Map<DivergedCall, number>();
    return {
      ...score,
      differences: differencesOf(score, diverged, matched, c, paths),
      transcripts: { ...(b ? { baseline: transcriptOf(b, undefined, new Map()) } : {}), ...(c ? { candidate: transcriptOf(c, paths, matched) } : {}) },
    };
  });
  return { ...report, evalId, turns, problems: [...problems] };
}

/** Which call of the candidate's turn each diverged call the report lists is (listed with its arguments as written, cut to 200 characters and `…`). */
function matchDiverged(turn: RecordedTurn, diverged: readonly DivergedCall[]): Map<DivergedCall, number> {
  const matched = new Map<DivergedCall, number>();
  const taken = new Set<number>();
  for (const d of diverged) {
    const prefix = d.arguments.endsWith('…') ? d.arguments.slice(0, -1) : undefined;
    const index = turn.calls.findIndex((call, i) => !taken.has(i) && call.tool === d.tool && (call.arguments === d.arguments || (prefix !== undefined && call.arguments.startsWith(prefix))));
    if (index < 0) continue;
    taken.add(index);
    matched.set(d, index);
  }
  return matched;
}

/** A recorded turn as a transcript, its diverged calls marked. */
function transcriptOf(turn: RecordedTurn, paths: Readonly<Record<string, string>> | undefined, diverged: ReadonlyMap<DivergedCall, number>): TranscriptTurn {
  const actions = new Map([...diverged].map(([d, index]) => [index, d.action]));
  const calls = turn.calls.map((call, index): TranscriptCall => {
    const approval = turn.approvals.find((a) => a.callId === call.id);
    const action = actions.get(index);
    return {
      index,
      iteration: call.iteration,
      tool: call.tool,
      arguments: cut(asRecorded(call.arguments, paths)),
      ...(call.result !== undefined ? { result: cut(asRecorded(JSON.stringify(call.result), paths)), ok: call.result.success } : {}),
      ...(approval ? { approval: { approved: approval.approved, ...(approval.reason !== undefined ? { reason: approval.reason } : {}) } } : {}),
      ...(action ? { diverged: action } : {}),
    };
  });
  const result = turn.result;
  const v = result?.verification;
  return {
    message: turn.message,
    calls,
    response: result?.response === null || result?.response === undefined ? null : asRecorded(result.response, paths),
    status: result?.status ?? 'unknown',
    ...(result?.error !== undefined ? { error: asRecorded(result.error, paths) } : {}),
    ...(v ? { verification: { status: v.status, passed: v.passed, failed: v.failed, ...(v.failedItems ? { failedItems: v.failedItems } : {}) } } : {}),
  };
}

/** The differences of a scored turn, from the report's facts (and the candidate's failed checklist items). */
function differencesOf(
  score: TurnScore,
  diverged: readonly DivergedCall[],
  matched: ReadonlyMap<DivergedCall, number>,
  candidate: RecordedTurn | undefined,
  paths: Readonly<Record<string, string>> | undefined,
): TurnDifference[] {
  const out: TurnDifference[] = [];
  const c = score.candidate;
  if (!c) return [{ kind: 'not-reached', text: 'the candidate never reached this turn' }];
  const first = score.trajectory.firstDifference;
  if (first) out.push({ kind: first.kind, text: asRecorded(differenceText(first), paths), index: first.index });
  for (const d of diverged) {
    const index = matched.get(d);
    out.push({ kind: 'diverged', text: `${d.tool} ${asRecorded(d.arguments, paths)}: ${divergedActionText(d.action)}`, ...(index !== undefined ? { index } : {}) });
  }
  if (score.statusChanged) out.push({ kind: 'status', text: `${score.baseline.status} → ${c.status}${c.error ? ` (${c.error})` : ''}` });
  const bv = score.baseline.verification;
  const cv = c.verification;
  if (cv && cv.failed > 0 && (!bv || cv.failed > bv.failed || bv.status !== cv.status)) {
    const items = (candidate?.result?.verification?.failedItems ?? []).map((i) => `${i.item}${i.note ? ` (${i.note})` : ''}`);
    out.push({ kind: 'check', text: `${cv.failed} checklist item(s) failed${bv ? ` (the recording: ${bv.failed})` : ''}${items.length ? `: ${items.join('; ')}` : ''}` });
  }
  const tokens = notable(score.baseline.usage.totalTokens, c.usage.totalTokens);
  if (tokens) out.push({ kind: 'tokens', text: `${formatMetric('tokens', score.baseline.usage.totalTokens)} → ${formatMetric('tokens', c.usage.totalTokens)} (${tokens})` });
  const cost = score.baseline.cost !== undefined && c.cost !== undefined ? notable(score.baseline.cost, c.cost) : undefined;
  if (cost) out.push({ kind: 'cost', text: `${formatMetric('cost', score.baseline.cost!)} → ${formatMetric('cost', c.cost!)} (${cost})` });
  return out;
}

/** What the eval did with a call that diverged, as the terminal report says it. */
export function divergedActionText(action: DivergedCall['action']): string {
  return action === 'run' ? 'ran in the scratch copy' : action === 'stub' ? 'answered with a stub' : 'answered with an error';
}

/** The change from `baseline` to `candidate` as text, when it is at least NOTABLE_CHANGE_PERCENT. */
function notable(baseline: number, candidate: number): string | undefined {
  if (baseline === candidate) return undefined;
  if (baseline !== 0 && (Math.abs(candidate - baseline) / baseline) * 100 < NOTABLE_CHANGE_PERCENT) return undefined;
  return changeText(baseline, candidate);
}

function cut(text: string): string {
  return text.length > TRANSCRIPT_TEXT_CHARS ? `${text.slice(0, TRANSCRIPT_TEXT_CHARS)}…` : text;
}
