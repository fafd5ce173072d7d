/**
 * What one run of a session hands the next when it continues as new (`SessionInput.continued`):
 * the transcript, counters, the unfinished turn, the view, budgets and verification. This is a
 * contract between builds: under Worker Deployment Versioning the next run may be a newer build's
 * (docs/concepts/sessions.md, "The carried state"), so its layout is versioned
 * (`CONTINUED_SESSION_VERSION`) and common/continued-contract.ts reads this one and the one before.
 */
import type { ChatMessage, TokenUsage } from './messages';
import type { ModelView } from './model-view';
import type { TranscriptGap } from './transcript';
import type { CompactionRecord, InitializeResult, PendingQuestion, TurnResult, TurnSummary } from './session-types';
import type { VerifyCarry } from './verify-types';
import type { ReplayCarry } from './eval/recording';

/** A turn that was under way when its run continued as new; the next run resumes it. */
export interface PendingTurn {
  turn: number;
  /** Index of the turn's user message in the transcript. */
  firstIndex: number;
  /** Model calls made so far. */
  iterations: number;
  usage: TokenUsage;
  /** When the turn started (epoch ms), for its duration. */
  startedAt: number;
  /** The turn's iteration limit, when `extend` raised it. */
  maxIterations?: number;
  /** The model was already told that the limit is near. */
  warned?: boolean;
  /** How often each failing call (tool, arguments, error) failed so far. */
  failures?: Record<string, number>;
  /** The turn's budget was raised by this many tokens (`budget` update). */
  turnTokensExtra?: number;
  /** Budgets already warned about in this turn. */
  budgetWarned?: string[];
}

/**
 * The layout of `ContinuedSession` this build writes. 1: the layout before the field existed (the
 * same fields, no `version`); 2: `version` and `upgradedFrom` added. Raise it when a field changes
 * meaning or a new one must not be dropped, and teach the reader the step from the one before.
 */
export const CONTINUED_SESSION_VERSION = 2;

/** What a run hands the next one when it continues as new. */
export interface ContinuedSession {
  /** The layout (`CONTINUED_SESSION_VERSION` of the build that wrote it); absent: 1. */
  version?: number;
  /** The build the previous run ran on, when the session moved to the current build with this hand-over. */
  upgradedFrom?: string;
  /** Run id of the run this one continues. */
  fromRunId: string;
  /** Number of this run within the session (1 is the first). */
  run: number;
  /** The agent, tools and runtime context from initialisation (the messages are in the transcript). */
  init: Omit<InitializeResult, 'messages'>;
  /**
   * The transcript: inline when small, else paged over from `fromRunId` by an activity. With `gap`,
   * only what the model's view still needs travels: `head` (the messages before the gap) and the
   * messages from `gap.to` on; the gap's messages stay in the earlier runs.
   */
  transcript: { count: number; hash: string; bytes: number; messages?: ChatMessage[]; gap?: TranscriptGap; head?: ChatMessage[] };
  turn: number;
  usage: TokenUsage;
  lastTurn?: TurnSummary;
  endRequested: boolean;
  pendingTurn?: PendingTurn;
  /** Results of the latest turns, so a client can collect one that finished in a later run. */
  recentTurns: TurnResult[];
  /** An `ask_question` call waiting for the user's answer. */
  pendingQuestion?: PendingQuestion;
  /** Initialisation's warnings, shown by `state` in every run. */
  warnings?: string[];
  /** The model's view of the transcript, its window and compactions. */
  context?: { view: ModelView; window: number; windowSource: string; compactions: number; lastCompaction?: CompactionRecord; calibration?: number };
  /** Session budgets as raised so far, and the cost so far. */
  budget?: { sessionTokensExtra: number; sessionCostExtra: number; cost: number; warned?: string[] };
  /** The document waiting to be verified, and the running turn's report. */
  verify?: VerifyCarry;
  /** An eval session's turn handed over mid-way: which recorded calls and approvals it used, and its counts. */
  replay?: ReplayCarry;
}
