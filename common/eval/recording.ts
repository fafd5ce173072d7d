/**
 * A recorded session as an evaluation reads it: the session's input, then per turn the user's
 * message, the tool calls the model made (with their arguments and, where history holds them,
 * their results), the approvals a person decided and the turn's result. Made from a session's
 * history by `extractRecording` (extract-recording.ts), for the baseline and for the candidate alike.
 */
import type { TokenUsage, ToolResult } from '../messages';
import type { BudgetChange } from '../budget-types';
import type { SessionInput } from '../settings/session-settings';

/** One tool call of a recorded turn. */
export interface RecordedCall {
  /** The call's id as the model gave it. */
  id: string;
  tool: string;
  /** The arguments as the model wrote them. */
  arguments: string;
  /** What arguments are compared by (`argumentsKey`: canonical JSON, or the trimmed text). */
  key: string;
  /** The model call (1-based, within the turn) whose reply asked for it. */
  iteration: number;
  /** The result, where history holds it: a tool activity's, a local activity's or an inline read's. */
  result?: ToolResult;
  /** How the result was recorded. */
  ran?: 'activity' | 'local' | 'inline';
}

/** A person's (or a rule's) decision on a call that waited for approval. */
export interface RecordedApproval {
  callId: string;
  tool: string;
  key: string;
  approved: boolean;
  reason?: string;
}

/** Counts of how an eval session answered its tool calls in one turn (set on candidate turns only). */
export interface ReplayCounts {
  /** Read-only calls answered from the recording (no activity). */
  answered: number;
  /** Calls that matched the recording and ran for real (writes). */
  ran: number;
  /** Calls that match no recorded call of the turn, with what was done with each. */
  diverged: DivergedCall[];
  /** Approvals decided as recorded, and by the eval's rule (no recorded decision matched). */
  approvalsAsRecorded: number;
  approvalsByRule: number;
  /** The recorded actions of the turn (interrupt, extend, budget, compact) replayed at their point, and those that were not. */
  actionsReplayed?: number;
  actionsNotReplayed?: ActionNotReplayed[];
}

/** What a person did to a session besides sending messages and deciding approvals, which an eval replays at the same point. */
export const ACTION_KINDS = ['interrupt', 'extend', 'budget', 'compact'] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];

/**
 * A person's action during a recorded turn, or between two turns: where it came (`at`: after how
 * many of the turn's model replies; `before`: while the session waited, before the turn's message)
 * and what it asked (`extend`'s n, `budget`'s change).
 */
export interface RecordedAction {
  kind: ActionKind;
  at: number | 'before';
  n?: number | null;
  change?: BudgetChange;
}

/** A recorded action an eval session did not replay, and why. */
export interface ActionNotReplayed {
  kind: ActionKind;
  at: number | 'before';
  reason: string;
}

/** What an eval session's turn handed over to its next run carries of its replay. */
export interface ReplayCarry {
  counts: ReplayCounts;
  /** Indexes of the recorded calls and approvals of the turn already used. */
  usedCalls: number[];
  usedApprovals: number[];
  /** Model replies of the turn so far, and the indexes of its recorded actions already replayed. */
  replies?: number;
  usedActions?: number[];
}

/** A call of an eval session that differs from every recorded call of its turn. */
export interface DivergedCall {
  tool: string;
  /** The arguments, cut to 200 characters. */
  arguments: string;
  /** What the eval did: ran it (in the scratch copy), answered with a stub, or answered with an error. */
  action: 'run' | 'stub' | 'fail';
}

/** A checklist item a document failed, with the verifier's note. */
export interface FailedCheckItem {
  item: string;
  section?: string;
  note?: string;
}

/** Failed checklist items a turn's figures list at most. */
export const MAX_FAILED_ITEMS_LISTED = 20;

/** How a turn ended, as its result (or, failing one, its history) says. */
export interface TurnFigures {
  status: string;
  success: boolean;
  iterations: number;
  usage: TokenUsage;
  response: string | null;
  error?: string;
  /** The turn's cost, when its session priced its model calls. */
  cost?: number;
  /** The document check of the turn, when the verifier ran; `failedItems`: the checklist items its last attempt failed (at most 20). */
  verification?: { status: string; passed: number; failed: number; attempts: number; failedItems?: FailedCheckItem[] };
  /** Eval sessions: how their calls were answered. */
  replay?: ReplayCounts;
  /** True when no turn result was recorded and the figures were counted from the turn's model calls. */
  derived?: true;
}

/** One turn of a recorded session. */
export interface RecordedTurn {
  /** The turn's number in its session. */
  turn: number;
  /** The user's message (or the answer to the model's question) that started it. */
  message: string;
  calls: RecordedCall[];
  approvals: RecordedApproval[];
  /** What a person did during the turn (or while the session waited before it), in order. */
  actions?: RecordedAction[];
  result?: TurnFigures;
  /** From the turn's start to its result, by the server's event times. */
  latencyMs?: number;
  /** Model the turn's calls asked for (the session's). */
  model?: string;
}

/** A recorded session. */
export interface Recording {
  workflowId?: string;
  /** Runs read, first to last. */
  runIds: string[];
  /** The session's input as it was started (without what a later run carried). */
  input: SessionInput;
  turns: RecordedTurn[];
  /** How the session's last run ended: `running` when it had not. */
  ended: 'completed' | 'failed' | 'continued' | 'cancelled' | 'terminated' | 'timed_out' | 'running';
  /** What the reader noticed: a history that starts mid-session, turns without a result. */
  warnings: string[];
}

/** The figures of a recorded turn: its result, else an `unknown` result counted from its calls. */
export function figuresOf(turn: RecordedTurn): TurnFigures {
  return turn.result ?? { status: 'unknown', success: false, iterations: 0, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, response: null, derived: true };
}
