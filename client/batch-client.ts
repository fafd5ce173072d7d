/**
 * Batches from a program: `LoopwrightClient.startBatch` checks the input file (a bad line is a
 * BatchInputError naming it, before anything starts), builds the sessions' input as `start` does,
 * and starts the `agentBatch` workflow, or reattaches to the batch already running (or finished)
 * under the same id. `BatchHandle` reads its state, waits for its summary, or cancels it.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Client, WorkflowExecutionAlreadyStartedError, type WorkflowHandle } from '@temporalio/client';
import { BATCH_WORKFLOW, type BatchInput, type BatchSessionSettings, type BatchState, type BatchSummary } from '../common/batch-types';
import { scanBatchFile } from '../activities/batch-activities';
import { batchStateQuery } from '../workflows/batch/batch-definitions';
import { sessionInput } from './session-input';
import { workflowResult } from './workflow-result';

export { BatchInputError } from '../common/batch-types';
export type { BatchResultLine, BatchState, BatchSummary } from '../common/batch-types';

/** Options of a new batch: the sessions' settings (as `start` takes them) and the batch's own. */
export interface StartBatchOptions extends Omit<BatchSessionSettings, 'bundlePath'> {
  bundlePath: string;
  /** The JSONL input: one item a line, a JSON string or `{"message": "...", "id"?: "..."}`. */
  inputPath: string;
  /** The JSONL result file (default: the input's name with `.results.jsonl`). */
  outputPath?: string;
  /** Sessions at once (default 4). */
  concurrency?: number;
  /** Workflow id of the batch (default `loopwright-batch-<agent>-<time>`); its sessions are `<id>-<index>`. */
  workflowId?: string;
  /** Continue as new after this many items finished in a run (default 500). */
  continueAfter?: number;
  /** Run every item headless (`batch --headless`). */
  headless?: boolean;
}

/** What startBatch needs of a LoopwrightClient. */
export interface BatchClientHost {
  readonly client: Client;
  readonly taskQueue: string;
  hasSearchAttributes(): Promise<boolean>;
}

/** The default result file of an input file: `items.jsonl` gives `items.results.jsonl`. */
export function defaultOutputPath(inputPath: string): string {
  const absolute = path.resolve(inputPath);
  return path.join(path.dirname(absolute), `${path.basename(absolute).replace(/\.jsonl?$/i, '')}.results.jsonl`);
}

/** Start a batch, or reattach to the one running (or finished) under `options.workflowId`. */
export async function startBatch(host: BatchClientHost, options: StartBatchOptions): Promise<BatchHandle> {
  const { inputPath, outputPath, concurrency, workflowId, continueAfter, headless, pageLines, pageBytes, ...settings } = options as StartBatchOptions & Pick<BatchInput, 'pageLines' | 'pageBytes'>;
  if (workflowId) {
    const existing = await describeBatch(host.client, workflowId);
    if (existing) return existing;
  }
  const absoluteInput = path.resolve(inputPath);
  const { items } = await scanBatchFile(absoluteInput);
  const absoluteOutput = path.resolve(outputPath ?? defaultOutputPath(absoluteInput));
  if (!fs.existsSync(path.dirname(absoluteOutput))) throw new Error(`The folder of the result file ${absoluteOutput} does not exist`);
  const input: BatchInput = {
    inputPath: absoluteInput,
    outputPath: absoluteOutput,
    total: items,
    session: await sessionInput(settings, () => host.hasSearchAttributes()),
    ...(concurrency !== undefined ? { concurrency } : {}),
    ...(continueAfter !== undefined ? { continueAfter } : {}),
    ...(headless ? { headless: true } : {}),
    ...(pageLines !== undefined ? { pageLines } : {}),
    ...(pageBytes !== undefined ? { pageBytes } : {}),
  };
  // A made id is the batch's alone: two batches started in the same millisecond are two batches, not one reattached.
  const id = workflowId ?? `loopwright-batch-${settings.agentId.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${Date.now().toString(36)}-${randomUUID().slice(0, 8)}`;
  try {
    const handle = await host.client.workflow.start(BATCH_WORKFLOW, {
      taskQueue: host.taskQueue,
      workflowId: id,
      args: [input],
      // Started twice at once: both get the one batch. A batch that failed, was cancelled or terminated may be run again
      // (its items' sessions, found by their ids, are not started twice); a completed one is only reattached to.
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      staticSummary: `batch · ${settings.agentId} · ${items} item(s) from ${path.basename(absoluteInput)}`,
    });
    return new BatchHandle(handle, false);
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return new BatchHandle(host.client.workflow.getHandle(id), true);
    throw err;
  }
}

/** A handle on the batch `workflowId` when one runs or completed under that id (not one that failed or was cancelled). */
async function describeBatch(client: Client, workflowId: string): Promise<BatchHandle | undefined> {
  const handle = client.workflow.getHandle(workflowId);
  try {
    const { status, type } = await handle.describe();
    if (type !== BATCH_WORKFLOW) throw new Error(`Workflow ${workflowId} is a ${type}, not a batch`);
    return status.name === 'RUNNING' || status.name === 'COMPLETED' ? new BatchHandle(handle, true) : undefined;
  } catch (err) {
    if ((err as Error).name === 'WorkflowNotFoundError') return undefined;
    throw err;
  }
}

/** One batch. Every call goes to its latest run (a batch continues as new as it goes). */
export class BatchHandle {
  constructor(
    readonly workflow: WorkflowHandle,
    /** True when `startBatch` found the batch already there (running or finished) instead of starting it. */
    readonly reattached = false,
  ) {}

  get workflowId(): string {
    return this.workflow.workflowId;
  }

  /** Items, started, ok, failed, cancelled, running, by turn status, tokens. */
  state(): Promise<BatchState> {
    return this.workflow.query(batchStateQuery);
  }

  /**
   * Wait for the batch's summary (a cancelled batch has one too: `cancelledBatch`, `cancelled`,
   * `notStarted`), through a server's brief outage (client/workflow-result.ts).
   */
  result(): Promise<BatchSummary> {
    return workflowResult<BatchSummary>(this.workflow);
  }

  /** Cancel the batch: no item starts any more, the running sessions are cancelled, the result file is written. */
  cancel(): Promise<void> {
    return this.workflow.cancel().then(() => undefined);
  }
}
