/**
 * The eval workflow: recorded sessions replayed against a candidate, one ordinary `agentSession`
 * per case as a child workflow with a fixed id (`<evalId>-<index>`), at most `concurrency` at once.
 * Each case is prepared by an activity on the files host (its recording read and written beside a
 * scratch copy of the project, the candidate session's input made), replayed (the session sends
 * itself the recorded messages: workflows/eval/replay.ts), then scored by an activity that appends
 * its report to a journal once; the report file is written from the journal at the end. Like the
 * batch workflow (workflows/batch/batch.ts): a session already started is followed, never started
 * again, after a crash or when the eval is run again under its id; cases already in the journal
 * are not replayed again; after `continueAfter` cases a run drains and continues as new. With a
 * rubric, each case's answers are graded by a model (an activity of their own, between the replay
 * and the scoring; a grading that fails is named in the report, the case is still scored). With a
 * suite budget, the candidate's spending (summed in the counters, carried from run to run) is
 * checked before each case starts; once it is reached, the cases not yet started are skipped and
 * the report says so.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowFailure,
  condition,
  continueAsNew,
  executeChild,
  isCancellation,
  ParentClosePolicy,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { BatchActivities, SessionOutcome } from '../../activities/batch-activities';
import type { EvalActivities } from '../../activities/eval/eval-activities';
import { filesQueue } from '../../common/files-host';
import { BAD_INPUT } from '../../common/failure-types';
import {
  type CaseTally,
  DEFAULT_EVAL_CONCURRENCY,
  DEFAULT_EVAL_CONTINUE_AFTER,
  DEFAULT_MAX_COPY_BYTES,
  type EvalCase,
  type EvalCounts,
  type EvalInput,
  type EvalReport,
  type EvalState,
  type EvalSummary,
  MAX_EVAL_CASES,
  type PreparedCase,
} from '../../common/eval/eval-types';
import type { TurnResult } from '../../common/session-types';
import { type CaseGrades, GRADING_FAILED } from '../../common/eval/grading';
import { filesProxy } from '../stubs/files-route';
import { agentSession } from '../session/session';
import { evalStateQuery } from './eval-definitions';

type EvalFileActivities = Pick<EvalActivities, 'prepareEvalCase' | 'scoreEvalCase' | 'scoredEvalCases' | 'scoredEvalTallies' | 'assembleEvalReport' | 'removeEvalScratch'>;
type EvalGradeActivities = Pick<EvalActivities, 'gradeEvalCase'>;

/**
 * Copying a project and reading two histories take a while on a large one: the activities heartbeat
 * every second, so a worker that dies mid-way is noticed within the heartbeat timeout and the case
 * retried elsewhere.
 */
const FILE_OPTIONS = {
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
} as const;

/**
 * Grading makes model calls (two per turn): a 429 or a 5xx is retried a few times, a refused key
 * or an unknown model fails at once (classified like every model call); grades already had are
 * kept by the activity, so a retry asks only for the rest.
 */
const GRADE_OPTIONS = {
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
} as const;

function fileActivities<A extends object>(filesHost: string | undefined, options: typeof FILE_OPTIONS | typeof GRADE_OPTIONS): A {
  if (filesHost === undefined) return proxyActivities<A>(options) as A;
  return filesProxy<A>(options, { queue: filesQueue(workflowInfo().taskQueue, filesHost), onWaiting: () => undefined }) as A;
}
const follow = proxyActivities<Pick<BatchActivities, 'awaitSessionOutcome'>>({
  startToCloseTimeout: '365 days',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/** Run an eval. See `EvalInput`; the `evalState` query says where it stands. */
export async function agentEval(input: EvalInput): Promise<EvalSummary> {
  const concurrency = input.concurrency ?? DEFAULT_EVAL_CONCURRENCY;
  const continueAfter = input.continueAfter ?? DEFAULT_EVAL_CONTINUE_AFTER;
  if (!Number.isInteger(concurrency) || concurrency < 1 || !Number.isInteger(continueAfter) || continueAfter < 1) {
    throw ApplicationFailure.nonRetryable('Invalid eval input: concurrency and continueAfter must be positive whole numbers', BAD_INPUT);
  }
  if (!Array.isArray(input.cases) || input.cases.length === 0 || input.cases.length > MAX_EVAL_CASES) {
    throw ApplicationFailure.nonRetryable(`Invalid eval input: give 1 to ${MAX_EVAL_CASES} cases`, BAD_INPUT);
  }
  const budgetProblem = checkBudget(input);
  if (budgetProblem) throw ApplicationFailure.nonRetryable(`Invalid eval input: ${budgetProblem}`, BAD_INPUT);
  if (input.grader !== undefined && (typeof input.grader.rubric !== 'string' || input.grader.rubric.trim() === '')) {
    throw ApplicationFailure.nonRetryable('Invalid eval input: grader.rubric must be a rubric text', BAD_INPUT);
  }
  const e = new EvalRun(input);
  setHandler(evalStateQuery, () => e.state());
  try {
    // Run again under its id (after a failure or termination): cases already scored are not replayed
    // (and, against a budget, what they spent counts).
    const scored = new Map<number, CaseTally | undefined>();
    if (!input.carried && input.budget) for (const t of await e.files.scoredEvalTallies({ evalId: e.evalId, journalPath: e.journalPath })) scored.set(t.index, t);
    else if (!input.carried) for (const i of await e.files.scoredEvalCases({ evalId: e.evalId, journalPath: e.journalPath })) scored.set(i, undefined);
    for (;;) {
      if (e.finishedThisRun >= continueAfter || (workflowInfo().continueAsNewSuggested && e.finishedThisRun > 0)) {
        await e.drain();
        return await continueAsNew<typeof agentEval>({ ...input, carried: { next: e.next, counts: e.counts, run: e.run + 1 } });
      }
      e.skip(scored);
      if (e.next >= input.cases.length) break;
      await condition(() => e.running.size < concurrency);
      if (e.finishedThisRun >= continueAfter) continue;
      if (e.overBudget()) {
        e.skipForBudget(scored);
        break;
      }
      e.startNext();
    }
    await e.drain();
  } catch (err) {
    if (!isCancellation(err)) throw err;
    e.cancelled = true;
    e.phase = 'cancelling';
    await CancellationScope.nonCancellable(() => e.drain());
  }
  e.phase = 'writing';
  const { cases } = await CancellationScope.nonCancellable(() =>
    e.files.assembleEvalReport({
      evalId: e.evalId,
      journalPath: e.journalPath,
      reportPath: input.reportPath,
      header: {
        candidate: input.candidate,
        replay: input.replay ?? {},
        total: input.cases.length,
        ...(input.grader ? { grader: { ...(input.grader.rubricSource ? { rubricSource: input.grader.rubricSource } : {}), ...(input.grader.model ? { model: input.grader.model } : {}) } } : {}),
        ...(input.budget ? { budget: e.budgetReport() } : {}),
      },
      ...(e.skipped.length > 0 ? { skipped: e.skipped } : {}),
    }),
  );
  e.phase = 'done';
  return {
    ...e.counts,
    total: input.cases.length,
    reportPath: input.reportPath,
    reportCases: cases,
    cancelled: e.cancelled,
    runs: e.run,
    ...(e.budgetReached ? { budgetReached: true } : {}),
  };
}

/** What is wrong with the suite budget, if anything. */
function checkBudget(input: EvalInput): string | undefined {
  const { budget } = input;
  if (budget === undefined) return undefined;
  for (const key of ['tokens', 'cost'] as const) {
    const value = budget[key];
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0)) return `budget.${key} must be a positive number, got ${String(value)}`;
  }
  if (budget.cost !== undefined && input.prices === undefined) return 'budget.cost needs prices (the price of the candidate model, or "*")';
  return undefined;
}

/** One run of an eval: its counters, the cases running, and how a case is prepared, replayed and scored. */
class EvalRun {
  readonly evalId = workflowInfo().workflowId;
  readonly files: EvalFileActivities;
  readonly grading: EvalGradeActivities;
  /** Cases skipped because the budget was reached (those of this run; earlier runs never skip, they stop). */
  readonly skipped: (EvalCase & { index: number })[] = [];
  budgetReached = false;
  readonly journalPath: string;
  readonly counts: EvalCounts;
  readonly run: number;
  readonly running = new Set<number>();
  next: number;
  finishedThisRun = 0;
  phase: EvalState['phase'] = 'running';
  cancelled = false;

  constructor(private readonly input: EvalInput) {
    this.files = fileActivities<EvalFileActivities>(input.filesHost, FILE_OPTIONS);
    this.grading = fileActivities<EvalGradeActivities>(input.filesHost, GRADE_OPTIONS);
    this.journalPath = `${input.reportPath}.journal`;
    this.counts = input.carried?.counts ?? { started: 0, scored: 0, errors: 0, statusChanged: 0, trajectoryChanged: 0, baselineTokens: 0, candidateTokens: 0 };
    this.run = input.carried?.run ?? 1;
    this.next = input.carried?.next ?? 0;
  }

  state(): EvalState {
    return { ...this.counts, total: this.input.cases.length, running: this.running.size, phase: this.phase, run: this.run, reportPath: this.input.reportPath };
  }

  /** Pass over the cases an earlier run of this eval already scored (they count as scored, with what they spent when known). */
  skip(scored: ReadonlyMap<number, CaseTally | undefined>): void {
    while (this.next < this.input.cases.length && scored.has(this.next)) {
      const tally = scored.get(this.next);
      this.next += 1;
      this.counts.started += 1;
      if (tally) this.count(tally);
      else this.counts.scored += 1;
    }
  }

  startNext(): void {
    const index = this.next;
    this.next += 1;
    this.running.add(index);
    this.counts.started += 1;
    void this.runCase(index);
  }

  /** Whether the candidate's spending has reached a cap of the suite's budget. */
  overBudget(): boolean {
    const { budget } = this.input;
    if (!budget) return false;
    return (budget.tokens !== undefined && this.counts.candidateTokens >= budget.tokens) || (budget.cost !== undefined && (this.counts.candidateCost ?? 0) >= budget.cost);
  }

  /** The budget is reached: every case not yet started (nor scored by an earlier run of the eval) is skipped. */
  skipForBudget(scored: ReadonlyMap<number, CaseTally | undefined>): void {
    this.budgetReached = true;
    for (; this.next < this.input.cases.length; this.next++) {
      if (scored.has(this.next)) {
        const tally = scored.get(this.next);
        this.counts.started += 1;
        if (tally) this.count(tally);
        else this.counts.scored += 1;
        continue;
      }
      this.skipped.push({ index: this.next, ...this.input.cases[this.next]! });
      this.counts.skipped = (this.counts.skipped ?? 0) + 1;
    }
  }

  /** The budget, what was spent of it, and whether it was reached, for the report. */
  budgetReport(): NonNullable<EvalReport['budget']> {
    return {
      ...this.input.budget,
      spentTokens: this.counts.candidateTokens,
      ...(this.counts.candidateCost !== undefined ? { spentCost: this.counts.candidateCost } : {}),
      reached: this.budgetReached,
      skipped: this.counts.skipped ?? 0,
    };
  }

  drain(): Promise<void> {
    return condition(() => this.running.size === 0);
  }

  /** One case: prepare, replay, score (once), clean up; scoring and clean-up run even when the eval is cancelled. */
  private async runCase(index: number): Promise<void> {
    const { input, files } = this;
    const evalCase = input.cases[index]!;
    const candidateWorkflowId = `${this.evalId}-${index}`;
    let prepared: PreparedCase | undefined;
    let sessionFailure: string | undefined;
    let grades: CaseGrades | undefined;
    try {
      prepared = await files.prepareEvalCase({
        evalId: this.evalId,
        index,
        evalCase,
        candidate: input.candidate,
        ...(input.replay ? { replay: input.replay } : {}),
        scratchRoot: input.scratchRoot,
        maxCopyBytes: input.maxCopyBytes ?? DEFAULT_MAX_COPY_BYTES,
        ...(input.filesHost ? { filesHost: input.filesHost } : {}),
        ...(input.searchAttributes ? { searchAttributes: true } : {}),
      });
      if (prepared.ok) sessionFailure = failureOf(await sessionOutcome(candidateWorkflowId, prepared));
      if (prepared.ok && input.grader) grades = await this.grade(index, candidateWorkflowId, prepared);
    } catch (err) {
      if (!isCancellation(err)) throw err;
      prepared = { ok: false, caseDir: prepared?.caseDir ?? '', error: 'the eval was cancelled while this case ran' };
    }
    const ready = prepared;
    const tally = await CancellationScope.nonCancellable(async () => {
      const scored = await files.scoreEvalCase({
        evalId: this.evalId,
        index,
        evalCase,
        candidateWorkflowId,
        prepared: ready,
        ...(sessionFailure ? { sessionFailure } : {}),
        journalPath: this.journalPath,
        ...(input.scorers?.length ? { scorers: input.scorers } : {}),
        ...(input.prices ? { prices: input.prices } : {}),
        ...(grades ? { grades } : {}),
      });
      if (!input.keepScratch && ready.caseDir !== '') await files.removeEvalScratch({ caseDir: ready.caseDir });
      return scored;
    });
    this.finish(tally);
  }

  /** The case's grades; a grading that failed (after its retries) is named in them instead of failing the eval. */
  private async grade(index: number, candidateWorkflowId: string, prepared: Extract<PreparedCase, { ok: true }>): Promise<CaseGrades> {
    const grader = this.input.grader!;
    const model = prepared.sessionInput.model;
    try {
      return await this.grading.gradeEvalCase({
        evalId: this.evalId,
        index,
        caseDir: prepared.caseDir,
        candidateWorkflowId,
        grader,
        ...(model ? { model } : {}),
        ...(prepared.sessionInput.modelSettings ? { settings: prepared.sessionInput.modelSettings } : {}),
      });
    } catch (err) {
      if (!(err instanceof ActivityFailure) || isCancellation(err.cause)) throw err;
      const cause = err.cause instanceof ApplicationFailure ? err.cause : undefined;
      return {
        model: grader.model ?? model ?? 'the worker default',
        turns: [],
        calls: 0,
        failures: 0,
        usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
        error: { type: cause?.type ?? GRADING_FAILED, message: err.cause?.message ?? err.message },
      };
    }
  }

  private finish(tally: CaseTally): void {
    this.running.delete(tally.index);
    this.finishedThisRun += 1;
    this.count(tally);
  }

  /** Count a scored case. */
  private count(tally: CaseTally): void {
    const { counts } = this;
    counts.scored += 1;
    if (tally.error) counts.errors += 1;
    if (tally.statusChanged) counts.statusChanged += 1;
    if (tally.trajectoryChanged) counts.trajectoryChanged += 1;
    counts.baselineTokens += tally.baselineTokens;
    counts.candidateTokens += tally.candidateTokens;
    if (tally.candidateCost !== undefined) counts.candidateCost = Math.round(((counts.candidateCost ?? 0) + tally.candidateCost) * 1e6) / 1e6;
    if (tally.graderTokens !== undefined) counts.graderTokens = (counts.graderTokens ?? 0) + tally.graderTokens;
  }
}

/** The candidate session, started as a child workflow (or, when an earlier run of the eval started it, followed to its end). */
async function sessionOutcome(workflowId: string, prepared: Extract<PreparedCase, { ok: true }>): Promise<SessionOutcome> {
  try {
    return {
      result: await executeChild(agentSession, {
        workflowId,
        args: [prepared.sessionInput],
        // An eval that is terminated, or fails, asks its running sessions to stop.
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        // A case's session runs once: an eval run again under the same id finds it and waits for it.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        staticSummary: `eval · ${prepared.sessionInput.agentId} · ${workflowId}`,
        // A session's workflow tasks get the eval's own timeout (the server's 10 s unless the eval was started with another).
        workflowTaskTimeout: workflowInfo().taskTimeoutMs,
      }),
    };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return CancellationScope.nonCancellable(() => follow.awaitSessionOutcome(workflowId));
    const cause = err instanceof ChildWorkflowFailure ? err.cause : err;
    if (isCancellation(cause)) throw err;
    const turn = cause instanceof ApplicationFailure ? (cause.details?.[0] as TurnResult | undefined) : undefined;
    return { failure: { message: cause instanceof Error ? cause.message : String(cause), cancelled: false, ...(turn?.status ? { turn } : {}) } };
  }
}

/** Why the candidate session failed outside its turns (a failed turn is a score, not a failure of the case). */
function failureOf(outcome: SessionOutcome): string | undefined {
  if (outcome.result) return undefined;
  return outcome.failure?.turn ? undefined : (outcome.failure?.message ?? 'the session failed');
}
