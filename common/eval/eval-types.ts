/**
 * Evaluations: recorded sessions replayed against a candidate (another model, other model
 * settings, another version of the bundle or project) as child sessions of an `agentEval`
 * workflow. Its input, the cases it runs, its counters and state, and what each case's scoring and
 * the whole report hold.
 */
import type { TokenUsage } from '../messages';
import type { ModelPrice } from '../budget-types';
import type { SessionInput } from '../settings/session-settings';
import type { DivergenceRule, UnrecordedApprovalRule } from './eval-script';
import type { ActionNotReplayed, DivergedCall, TurnFigures } from './recording';
import type { TrajectoryDifference } from './trajectory';
import type { CaseGrades, GraderSettings } from './grading';

/** Name of the eval workflow type, as registered by the worker. */
export const EVAL_WORKFLOW = 'agentEval';
/** Sessions replayed at once unless `concurrency` says otherwise. */
export const DEFAULT_EVAL_CONCURRENCY = 4;
/** A run continues as new after this many cases were scored in it (history stays bounded). */
export const DEFAULT_EVAL_CONTINUE_AFTER = 200;
/** Most cases one eval takes (they travel in its input). */
export const MAX_EVAL_CASES = 5_000;
/** Largest project an eval copies for one case (bytes), unless `maxCopyBytes` says otherwise. */
export const DEFAULT_MAX_COPY_BYTES = 512 * 1024 * 1024;

/** Where a recording comes from: a session on the server, or a history file on the files host. */
export type EvalSource = { workflowId: string } | { file: string };

/** One recorded session to replay. */
export interface EvalCase {
  /** What the report calls it: the workflow id, or the file's name. */
  name: string;
  source: EvalSource;
}

/** What the candidate changes: its model and settings, and the bundle or project it runs. Anything left out is the recording's. */
export type EvalCandidate = Partial<Pick<SessionInput, 'model' | 'modelSettings' | 'fallbackModels' | 'maxIterations' | 'context' | 'verify' | 'bundlePath' | 'projectRoot' | 'agentId'>>;

/** How an eval session treats calls and approvals the recording does not have (SessionInput.eval). */
export interface ReplayRules {
  onDivergence?: DivergenceRule;
  approvals?: UnrecordedApprovalRule;
}

/** Input of the `agentEval` workflow. */
export interface EvalInput {
  cases: EvalCase[];
  candidate: EvalCandidate;
  replay?: ReplayRules;
  /** Folder (absolute, on the files host) under which each case gets its scratch copy and its recording. */
  scratchRoot: string;
  /** The JSON report (absolute, on the files host), written when the eval ends. */
  reportPath: string;
  concurrency?: number;
  /** Continue as new after this many cases were scored in a run (default 200; tests set it low). */
  continueAfter?: number;
  /** Custom scorers (`defineScorer`) the worker runs on each case, by name. */
  scorers?: string[];
  /** Price per million input and output tokens by model (`*` for any other): the report prices each turn. */
  prices?: Record<string, ModelPrice>;
  /** Keep each case's scratch copy (and its recording) after scoring. */
  keepScratch?: boolean;
  /** The host whose workers hold the projects and the report (`SessionInput.filesHost`). */
  filesHost?: string;
  /** The namespace has Loopwright's search attributes: the eval sessions upsert them. */
  searchAttributes?: boolean;
  /** Largest project copied per case, in bytes (default 512 MiB). */
  maxCopyBytes?: number;
  /** The model-graded scorer: every turn's answer, on both sides, graded against this rubric. */
  grader?: GraderSettings;
  /** The suite's budget for the candidate (grading not counted): once reached, cases not yet started are skipped. */
  budget?: SuiteBudget;
  /** Set by the eval itself when it continues as new. */
  carried?: { next: number; counts: EvalCounts; run: number };
}

/**
 * A cap on what the candidate sessions of a suite spend, summed over the cases scored. Checked
 * before each case starts: once a cap is reached, the cases not yet started are skipped and
 * reported as such; cases already running finish (and may pass the cap by what they spend).
 */
export interface SuiteBudget {
  /** Candidate tokens (prompt and completion) across the suite. */
  tokens?: number;
  /** Candidate cost across the suite, priced by the eval's `prices` (which it needs). */
  cost?: number;
}

/** Why a case was not replayed although the eval ran to its end. */
export type SkipReason = 'budget';

/** Counters of an eval; carried from run to run. */
export interface EvalCounts {
  started: number;
  scored: number;
  /** Cases that could not be replayed (an unreadable recording, a project too large, a session that failed to start). */
  errors: number;
  /** Scored cases whose turn statuses differ from the recording's. */
  statusChanged: number;
  /** Scored cases whose tool-call trajectory differs from the recording's. */
  trajectoryChanged: number;
  baselineTokens: number;
  candidateTokens: number;
  /** The candidate's cost across the cases scored, where priced. */
  candidateCost?: number;
  /** Tokens the grader spent (apart from the candidate's). */
  graderTokens?: number;
  /** Cases skipped because the suite's budget was reached. */
  skipped?: number;
}

/** What the `evalState` query answers. */
export interface EvalState extends EvalCounts {
  total: number;
  running: number;
  phase: 'running' | 'cancelling' | 'writing' | 'done';
  run: number;
  reportPath: string;
}

/** The eval workflow's result. */
export interface EvalSummary extends EvalCounts {
  total: number;
  reportPath: string;
  /** Cases in the report: one per case scored (or failed). */
  reportCases: number;
  cancelled: boolean;
  runs: number;
  /** The suite's budget was reached: the cases not yet started were skipped (`skipped`). */
  budgetReached?: boolean;
}

/** What preparing a case gives the eval workflow: the candidate session's input and where its files are. */
export type PreparedCase =
  { ok: true; caseDir: string; workspace: string; sessionInput: SessionInput; copied: { files: number; bytes: number }; warnings: string[] } | { ok: false; caseDir: string; error: string };

/** A scored case, as the eval workflow counts it. */
export interface CaseTally {
  index: number;
  error: boolean;
  statusChanged: boolean;
  trajectoryChanged: boolean;
  baselineTokens: number;
  candidateTokens: number;
  candidateCost?: number;
  graderTokens?: number;
}

/** The figures of a session (or a turn) on one side of a comparison. */
export interface SideFigures {
  /** The last turn's status (a session), or the turn's. */
  status: string;
  turns: number;
  iterations: number;
  usage: TokenUsage;
  /** Priced with the eval's prices (or the session's own), when it has them. */
  cost?: number;
  latencyMs?: number;
  /** Document checks: turns verified and turns whose check failed. */
  checks?: { verified: number; failed: number };
  /** The JSON status a headless answer ended with (`complete`, `partial`, `blocked`), when it has one. */
  headless?: string;
}

/** One turn of a case: the baseline's and the candidate's figures and calls side by side. */
export interface TurnScore {
  turn: number;
  /** The user's message, cut to 120 characters. */
  message: string;
  baseline: TurnFigures & { latencyMs?: number; calls: number };
  /** Absent when the candidate never reached this turn. */
  candidate?: TurnFigures & { latencyMs?: number; calls: number };
  statusChanged: boolean;
  trajectory: { same: boolean; firstDifference?: TrajectoryDifference };
}

/** A custom scorer's verdict on a case. */
export interface ScorerOutcome {
  name: string;
  value?: number;
  passed?: boolean;
  note?: string;
  /** The scorer threw. */
  error?: string;
}

/** One case of the report. */
export interface EvalCaseReport {
  index: number;
  name: string;
  source: EvalSource;
  /** The candidate session's workflow id. */
  candidateWorkflowId: string;
  /** Why the case could not be replayed or scored. */
  error?: string;
  /** The case was not replayed: the suite's budget was reached before it started. */
  skipped?: SkipReason;
  baseline?: SideFigures;
  candidate?: SideFigures;
  turns: TurnScore[];
  statusChanged: boolean;
  /** The first turn whose calls differ (tool, arguments, a step skipped or added). */
  trajectory: { same: boolean; firstDifference?: TrajectoryDifference & { turn: number } };
  /** How the candidate's calls were answered, summed over its turns. */
  replay: {
    answered: number;
    ran: number;
    diverged: number;
    divergedCalls: (DivergedCall & { turn: number })[];
    approvalsAsRecorded: number;
    approvalsByRule: number;
    /** A person's recorded actions (interrupt, extend, budget, compact) done again at their point, and those that were not, with why. */
    actionsReplayed?: number;
    actionsNotReplayed?: (ActionNotReplayed & { turn: number })[];
  };
  scorers: ScorerOutcome[];
  /** The model-graded scorer's grades, per turn on both sides, when the eval has a rubric. */
  grades?: CaseGrades;
  /** The scratch copy the candidate ran in. */
  workspace?: { path: string; files: number; bytes: number };
  warnings: string[];
}

/** The report an eval writes (`reportPath`): its settings and one entry per case, in case order. */
export interface EvalReport {
  evalId: string;
  candidate: EvalCandidate;
  replay: ReplayRules;
  total: number;
  cases: EvalCaseReport[];
  /** The grader: its rubric's source (a file, or `text`) and model, when the eval has one. */
  grader?: { rubricSource?: string; model?: string };
  /** The suite's budget and what the candidate spent of it, when the eval has one. */
  budget?: SuiteBudget & { spentTokens: number; spentCost?: number; reached: boolean; skipped: number };
}
