/**
 * The eval workflow: recorded sessions replayed against a candidate, one ordinary `agentSession`
 * per case as a child workflow with a fixed id (`<evalId>-<index>`), at most `concurrency` at once.
 * Each case is prepared by an activity on the files host (its recording read and written beside a
 * scratch copy of the project, the candidate session's input made), replayed (the session sends
 * itself the recorded messages: workflows/eval/replay.ts), then scored by an activity that appends
 * its report to a journal once; the report file is written from the journal at the end. Like the
 * batch workflow (workflows/batch/batch.ts): a session already started is followed, never started
 * again, after a crash or when the eval is run again under its id; cases already in the journal
 * are not replayed again; after `continueAfter` cases a run drains and continues as new.
 */
import {
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
  type EvalCounts,
  type EvalInput,
  type EvalState,
  type EvalSummary,
  MAX_EVAL_CASES,
  type PreparedCase,
} from '../../common/eval/eval-types';
import type { TurnResult } from '../../common/session-types';
import { filesProxy } from '../stubs/files-route';
import { agentSession } from '../session/session';
import { evalStateQuery } from './eval-definitions';

type EvalFileActivities = Pick<EvalActivities, 'prepareEvalCase' | 'scoreEvalCase' | 'scoredEvalCases' | 'assembleEvalReport' | 'removeEvalScratch'>;

/**
 * Copying a project and reading two histories take a while on a large one: the activities heartbeat,
 * so a worker that dies mid-way is noticed within the heartbeat timeout and the case retried elsewhere.
 */
const FILE_OPTIONS = {
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
} as const;

function fileActivities(filesHost: string | undefined): EvalFileActivities {
  if (filesHost === undefined) return proxyActivities<EvalFileActivities>(FILE_OPTIONS);
  return filesProxy<EvalFileActivities>(FILE_OPTIONS, { queue: filesQueue(workflowInfo().taskQueue, filesHost), onWaiting: () => undefined });
}
const follow = proxyActivities<Pick<BatchActivities, 'awaitSessionOutcome'>>({
  startToCloseTimeout: '365 days',
  heartbeatTimeout: '30 seconds',
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
  const e = new EvalRun(input);
  setHandler(evalStateQuery, () => e.state());
  try {
    // Run again under its id (after a failure or termination): cases already scored are not replayed.
    const scored = new Set(input.carried ? [] : await e.files.scoredEvalCases({ evalId: e.evalId, journalPath: e.journalPath }));
    for (;;) {
      if (e.finishedThisRun >= continueAfter || (workflowInfo().continueAsNewSuggested && e.finishedThisRun > 0)) {
        await e.drain();
        return await continueAsNew<typeof agentEval>({ ...input, carried: { next: e.next, counts: e.counts, run: e.run + 1 } });
      }
      e.skip(scored);
      if (e.next >= input.cases.length) break;
      await condition(() => e.running.size < concurrency);
      if (e.finishedThisRun >= continueAfter) continue;
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
      header: { candidate: input.candidate, replay: input.replay ?? {}, total: input.cases.length },
    }),
  );
  e.phase = 'done';
  return { ...e.counts, total: input.cases.length, reportPath: input.reportPath, reportCases: cases, cancelled: e.cancelled, runs: e.run };
}

/** One run of an eval: its counters, the cases running, and how a case is prepared, replayed and scored. */
class EvalRun {
  readonly evalId = workflowInfo().workflowId;
  readonly files: EvalFileActivities;
  readonly journalPath: string;
  readonly counts: EvalCounts;
  readonly run: number;
  readonly running = new Set<number>();
  next: number;
  finishedThisRun = 0;
  phase: EvalState['phase'] = 'running';
  cancelled = false;

  constructor(private readonly input: EvalInput) {
    this.files = fileActivities(input.filesHost);
    this.journalPath = `${input.reportPath}.journal`;
    this.counts = input.carried?.counts ?? { started: 0, scored: 0, errors: 0, statusChanged: 0, trajectoryChanged: 0, baselineTokens: 0, candidateTokens: 0 };
    this.run = input.carried?.run ?? 1;
    this.next = input.carried?.next ?? 0;
  }

  state(): EvalState {
    return { ...this.counts, total: this.input.cases.length, running: this.running.size, phase: this.phase, run: this.run, reportPath: this.input.reportPath };
  }

  /** Pass over the cases an earlier run of this eval already scored (they count as scored). */
  skip(scored: ReadonlySet<number>): void {
    while (this.next < this.input.cases.length && scored.has(this.next)) {
      this.next += 1;
      this.counts.started += 1;
      this.counts.scored += 1;
    }
  }

  startNext(): void {
    const index = this.next;
    this.next += 1;
    this.running.add(index);
    this.counts.started += 1;
    void this.runCase(index);
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
      });
      if (!input.keepScratch && ready.caseDir !== '') await files.removeEvalScratch({ caseDir: ready.caseDir });
      return scored;
    });
    this.finish(tally);
  }

  private finish(tally: CaseTally): void {
    const { counts } = this;
    this.running.delete(tally.index);
    this.finishedThisRun += 1;
    counts.scored += 1;
    if (tally.error) counts.errors += 1;
    if (tally.statusChanged) counts.statusChanged += 1;
    if (tally.trajectoryChanged) counts.trajectoryChanged += 1;
    counts.baselineTokens += tally.baselineTokens;
    counts.candidateTokens += tally.candidateTokens;
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
