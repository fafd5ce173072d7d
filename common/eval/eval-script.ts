/**
 * What an eval session is told about the recorded turn it replays (the `loadEvalTurn` activity's
 * answer, one per turn): the user's message, the recorded calls it may be answered from and the
 * recorded approvals. The session's own settings for it are `SessionInput.eval`.
 */
import type { ToolResult } from '../messages';
import type { RecordedAction } from './recording';

/** What a call that matches no recorded call of its turn gets: run for real (in the scratch copy), a stub result, or an error result. */
export const DIVERGENCE_RULES = ['run', 'stub', 'fail'] as const;
export type DivergenceRule = (typeof DIVERGENCE_RULES)[number];

/** How an approval with no recorded decision is decided. */
export const UNRECORDED_APPROVALS = ['approve', 'deny'] as const;
export type UnrecordedApprovalRule = (typeof UNRECORDED_APPROVALS)[number];

/** A recorded call as the eval session matches it: its tool, its arguments' key, and its result when recorded. */
export interface ScriptCall {
  tool: string;
  /** `argumentsKey` of its arguments. */
  key: string;
  result?: ToolResult;
}

/** A recorded decision on a call that waited for approval. */
export interface ScriptApproval {
  tool: string;
  key: string;
  approved: boolean;
  reason?: string;
}

/** Input of `loadEvalTurn`: the recording (a file on the session's files host) and the turn wanted (1-based). */
export interface LoadEvalTurnInput {
  script: string;
  turn: number;
}

/** One recorded turn to replay; `loadEvalTurn` answers null past the last one. */
export interface EvalTurn {
  turn: number;
  /** Turns in the recording. */
  total: number;
  message: string;
  calls: ScriptCall[];
  approvals: ScriptApproval[];
  /** What a person did during the turn (interrupt, extend, budget) or before it (budget, compact): replayed at the same point. */
  actions?: RecordedAction[];
  /** Recorded results left out to keep this answer under its size bound (those calls run for real). */
  omittedResults?: number;
}

/** Largest total of recorded results one `loadEvalTurn` answer carries (JSON bytes); Temporal's payload limit is 2 MB. */
export const EVAL_TURN_RESULTS_BYTES = 1024 * 1024;
