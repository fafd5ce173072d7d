/**
 * The batch workflow: one one-shot `agentSession` per item of a JSONL file, as child workflows with
 * deterministic ids (`<batchId>-<itemIndex>`), at most `concurrency` at once. Items are read from the
 * file a page at a time by an activity; each finished item's result line goes to a journal through
 * an activity, and the result file is assembled from the journal at the end (one line per item).
 * After `continueAfter` items finished in a run (or when the server suggests it) the batch stops
 * starting sessions, lets the running ones finish, and continues as new with its cursor and counters,
 * so no run's history holds more than that many items. Cancelling the batch cancels the running
 * sessions; the summary counts them.
 */
import { HEADLESS_STATUS_MISSING_TEXT, headlessMessage, parseHeadlessStatus } from '../../common/headless';
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
import { filesQueue } from '../../common/files-host';
import { filesProxy } from '../stubs/files-route';
import {
  type BatchCounts,
  type BatchCursor,
  type BatchInput,
  type BatchItem,
  type BatchResultLine,
  type BatchState,
  type BatchSummary,
  DEFAULT_BATCH_CONCURRENCY,
  DEFAULT_BATCH_CONTINUE_AFTER,
  DEFAULT_BATCH_PAGE_BYTES,
  DEFAULT_BATCH_PAGE_LINES,
} from '../../common/batch-types';
import { BAD_INPUT } from '../../common/failure-types';
import type { SessionResult, TurnResult } from '../../common/session-types';
import { batchStateQuery } from './batch-definitions';
import { agentSession } from '../session/session';
import { addUsage, ZERO_USAGE } from '../turn/usage';

/** Result lines written by one activity call at most. */
const APPEND_LINES = 200;

type BatchFileActivities = Pick<BatchActivities, 'readBatchPage' | 'appendBatchResults' | 'assembleBatchResults'>;
/**
 * The file activities heartbeat every second: a call whose completion the server lost (a history host
 * gone at that moment) is retried after 15 s rather than after its start-to-close timeout.
 */
const FILE_OPTIONS = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
} as const;

/** The input file and the results live where the batch's sessions' files do: on the files host's workers, when it names one. */
function fileActivities(filesHost: string | undefined) {
  if (filesHost === undefined) return proxyActivities<BatchFileActivities>(FILE_OPTIONS);
  return filesProxy<BatchFileActivities>(FILE_OPTIONS, { queue: filesQueue(workflowInfo().taskQueue, filesHost), onWaiting: () => undefined });
}
const follow = proxyActivities<Pick<BatchActivities, 'awaitSessionOutcome'>>({
  startToCloseTimeout: '365 days',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/** Run a batch. See `BatchInput`; the `batchState` query says where it stands. */
export async function agentBatch(input: BatchInput): Promise<BatchSummary> {
  const concurrency = input.concurrency ?? DEFAULT_BATCH_CONCURRENCY;
  const continueAfter = input.continueAfter ?? DEFAULT_BATCH_CONTINUE_AFTER;
  if (!Number.isInteger(concurrency) || concurrency < 1 || !Number.isInteger(continueAfter) || continueAfter < 1) {
    throw ApplicationFailure.nonRetryable('Invalid batch input: concurrency and continueAfter must be positive whole numbers', BAD_INPUT);
  }
  const b = batchRun(input);
  const { counts, running, files } = b;
  setHandler(batchStateQuery, (): BatchState => ({ ...counts, total: input.total, running: running.size, phase: b.phase, run: b.run, outputPath: input.outputPath }));
  try {
    let page: BatchItem[] = [];
    let endOfFile = false;
    for (;;) {
      if (b.finishedThisRun >= continueAfter || (workflowInfo().continueAsNewSuggested && b.finishedThisRun > 0)) {
        await b.drain();
        return await continueAsNew<typeof agentBatch>({ ...input, carried: { cursor: b.cursor, counts, run: b.run + 1 } });
      }
      if (page.length === 0 && !endOfFile) {
        const read = await files.readBatchPage({
          path: input.inputPath,
          cursor: b.cursor,
          maxLines: input.pageLines ?? DEFAULT_BATCH_PAGE_LINES,
          maxBytes: input.pageBytes ?? DEFAULT_BATCH_PAGE_BYTES,
        });
        page = read.items;
        endOfFile = read.done;
      }
      if (page.length === 0) break;
      await condition(() => running.size < concurrency);
      if (b.finishedThisRun >= continueAfter) continue;
      const item = page.shift()!;
      b.cursor = item.next;
      running.add(item.index);
      counts.started += 1;
      void b.runItem(item);
    }
    await b.drain();
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // Cancelled: the running sessions were asked to stop (they were started in this scope); wait for them and write what they said.
    b.cancelling = true;
    b.phase = 'cancelling';
    await CancellationScope.nonCancellable(b.drain);
  }
  b.phase = 'writing';
  const { lines } = await CancellationScope.nonCancellable(() => files.assembleBatchResults({ journalPath: b.journalPath, outputPath: input.outputPath, batchId: b.batchId }));
  b.phase = 'done';
  return { ...counts, total: input.total, notStarted: Math.max(0, input.total - counts.started), cancelledBatch: b.cancelling, outputPath: input.outputPath, resultLines: lines, runs: b.run };
}

/** One run of a batch: its counters, the items running, and how an item runs and its result line is written. */
interface BatchRun {
  readonly batchId: string;
  readonly files: BatchFileActivities;
  readonly journalPath: string;
  readonly run: number;
  readonly counts: BatchCounts;
  readonly running: Set<number>;
  cursor: BatchCursor;
  phase: BatchState['phase'];
  cancelling: boolean;
  finishedThisRun: number;
  /** Run an item's session to its end and write its result line. */
  runItem(item: BatchItem): Promise<void>;
  /** Wait for the running items and for their lines to be written. */
  drain(): Promise<void>;
}

function batchRun(input: BatchInput): BatchRun {
  const batchId = workflowInfo().workflowId;
  const files = fileActivities(input.session.filesHost);
  const journalPath = `${input.outputPath}.journal`;
  const counts: BatchCounts = input.carried?.counts ?? { started: 0, ok: 0, failed: 0, cancelled: 0, byStatus: {}, usage: ZERO_USAGE };
  const b: BatchRun = {
    batchId,
    files,
    journalPath,
    run: input.carried?.run ?? 1,
    counts,
    running: new Set<number>(),
    cursor: input.carried?.cursor ?? { line: 1, byte: 0, index: 0 },
    phase: 'running',
    cancelling: false,
    finishedThisRun: 0,
    runItem: async (item) => {
      const outcome = await itemOutcome(input, batchId, item);
      const base = { index: item.index, ...(item.id !== undefined ? { id: item.id } : {}), workflowId: `${batchId}-${item.index}` };
      const fields = resultFields(outcome, b.cancelling);
      finish({ ...base, ...(input.headless ? withHeadlessStatus(fields) : fields) });
    },
    drain: async () => {
      await condition(() => b.running.size === 0);
      await lines.written();
    },
  };
  const lines = resultWriter(files, journalPath, batchId);
  const finish = (line: BatchResultLine): void => {
    b.running.delete(line.index);
    b.finishedThisRun += 1;
    if (line.status === 'cancelled') counts.cancelled += 1;
    else if (line.success) counts.ok += 1;
    else counts.failed += 1;
    counts.byStatus[line.status] = (counts.byStatus[line.status] ?? 0) + 1;
    counts.usage = addUsage(counts.usage, line.usage);
    lines.add(line);
  };
  return b;
}

/** The result lines of a run, appended to the journal by one writer at a time. */
function resultWriter(files: BatchFileActivities, journalPath: string, batchId: string): { add(line: BatchResultLine): void; written(): Promise<void> } {
  const unwritten: BatchResultLine[] = [];
  /** Write the result lines not yet written; one writer at a time, so lines written while one writes go in the next call. */
  let writing: Promise<void> | undefined;
  const write = (): Promise<void> =>
    (writing ??= (async () => {
      try {
        while (unwritten.length > 0) {
          const lines = unwritten.slice(0, APPEND_LINES);
          await files.appendBatchResults({ journalPath, batchId, lines });
          unwritten.splice(0, lines.length);
        }
      } finally {
        writing = undefined;
      }
    })());
  return {
    add: (line) => {
      unwritten.push(line);
      // A failed write is retried by the next finished item or the final flush.
      write().catch(() => undefined);
    },
    written: async () => {
      while (unwritten.length > 0 || writing) {
        try {
          await (writing ?? write());
        } catch (err) {
          // A write scheduled from the cancelled scope fails at once: write again from this one.
          if (!isCancellation(err)) throw err;
        }
      }
    },
  };
}

/** An item's session, started as a child workflow (or, when a batch run before started it, followed to its end). */
async function itemOutcome(input: BatchInput, batchId: string, item: BatchItem): Promise<SessionOutcome> {
  const workflowId = `${batchId}-${item.index}`;
  try {
    return {
      result: await executeChild(agentSession, {
        workflowId,
        args: [
          input.headless ? { ...input.session, firstMessage: headlessMessage(item.message), oneShot: true, loopBreakers: false } : { ...input.session, firstMessage: item.message, oneShot: true },
        ],
        // A batch that is terminated, or fails, asks its running sessions to stop.
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        // An item's session runs once: a batch run again under the same id finds it and waits for it.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      }),
    };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return CancellationScope.nonCancellable(() => follow.awaitSessionOutcome(workflowId));
    const cause = err instanceof ChildWorkflowFailure ? err.cause : err;
    const turn = cause instanceof ApplicationFailure ? (cause.details?.[0] as TurnResult | undefined) : undefined;
    return { failure: { message: cause instanceof Error ? cause.message : String(cause), cancelled: isCancellation(cause), ...(turn?.status ? { turn } : {}) } };
  }
}

/**
 * A headless item's fields: the JSON status its answer ended with; `blocked`, or an answer without
 * one, makes the item a failure (as `run --headless` exits 1 for them).
 */
function withHeadlessStatus(fields: Omit<BatchResultLine, 'index' | 'id' | 'workflowId'>): Omit<BatchResultLine, 'index' | 'id' | 'workflowId'> {
  if (!fields.success) return fields;
  const status = parseHeadlessStatus(fields.response ?? undefined);
  if (status === undefined) return { ...fields, success: false, error: HEADLESS_STATUS_MISSING_TEXT };
  if (status.status === 'blocked') return { ...fields, success: false, headless: status, error: `blocked${typeof status.reason === 'string' ? `: ${status.reason}` : ''}` };
  return { ...fields, headless: status };
}

/** The result line's fields for a session's outcome. */
function resultFields(outcome: SessionOutcome, cancelling: boolean): Omit<BatchResultLine, 'index' | 'id' | 'workflowId'> {
  if (outcome.result) return fromTurn(outcome.result, cancelling);
  const failure = outcome.failure!;
  const turn = failure.turn;
  if (failure.cancelled || (cancelling && turn?.status === 'interrupted')) {
    return { status: 'cancelled', success: false, response: turn?.response ?? null, error: 'the batch was cancelled', usage: turn?.usage ?? ZERO_USAGE };
  }
  if (turn) return { status: turn.status, success: false, response: turn.response, error: turn.error ?? failure.message, usage: turn.usage };
  return { status: 'failed', success: false, response: null, error: failure.message, usage: ZERO_USAGE };
}

function fromTurn(result: SessionResult, cancelling: boolean): Omit<BatchResultLine, 'index' | 'id' | 'workflowId'> {
  const turn = result.lastTurn;
  if (!turn) return { status: 'failed', success: false, response: null, error: 'the session ended without a turn', usage: result.usage };
  if (cancelling && turn.status === 'interrupted') return { status: 'cancelled', success: false, response: turn.response, error: 'the batch was cancelled', usage: turn.usage };
  return { status: turn.status, success: turn.success, response: turn.response, ...(turn.error ? { error: turn.error } : {}), usage: turn.usage };
}
