/**
 * Evals from a program: `startEval` turns recordings (session ids, history files, folders of them)
 * into the eval workflow's cases and starts `agentEval`, or reattaches to the eval running (or
 * finished) under the same id; `EvalHandle` reads its state, waits for its summary and reads its
 * report. The eval's files (each case's scratch copy, the report) live on this machine, whose
 * workers take the eval's file activities when it names a files host.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Client, WorkflowExecutionAlreadyStartedError, type WorkflowHandle } from '@temporalio/client';
import {
  EVAL_WORKFLOW,
  type EvalCandidate,
  type EvalCase,
  type EvalInput,
  type EvalReport,
  type EvalState,
  type EvalSummary,
  MAX_EVAL_CASES,
  type ReplayRules,
  type SuiteBudget,
} from '../common/eval/eval-types';
import type { GraderSettings } from '../common/eval/grading';
import type { ModelPrice } from '../common/budget-types';
import { evalStateQuery } from '../workflows/eval/eval-definitions';

export type { EvalCaseReport, EvalReport, EvalState, EvalSummary } from '../common/eval/eval-types';

/** Options of a new eval. */
export interface StartEvalOptions {
  /** The recordings: session workflow ids, history files (`loopwright export`, or a Temporal JSON history) and folders of them. */
  sources: readonly string[];
  /** What the candidate changes (model, settings, bundle, project); the rest is each recording's. */
  candidate?: EvalCandidate;
  replay?: ReplayRules;
  /** The JSON report (default: `<scratchRoot>/report.json`). */
  reportPath?: string;
  /** Where each case's scratch copy goes (default: a folder of the system's temp folder named after the eval). */
  scratchRoot?: string;
  concurrency?: number;
  continueAfter?: number;
  /** Workflow id of the eval (default `loopwright-eval-<time>`); its sessions are `<id>-<index>`. */
  workflowId?: string;
  scorers?: string[];
  prices?: Record<string, ModelPrice>;
  keepScratch?: boolean;
  filesHost?: string;
  maxCopyBytes?: number;
  /** The model-graded scorer: a rubric, and the grading model (default: the candidate's). */
  grader?: GraderSettings;
  /** A cap on the candidate's tokens and/or cost across the suite (a cost cap needs `prices`). */
  budget?: SuiteBudget;
}

/** What startEval needs of a LoopwrightClient. */
export interface EvalClientHost {
  readonly client: Client;
  readonly taskQueue: string;
  hasSearchAttributes(): Promise<boolean>;
}

/** A source that names nothing here and is not a workflow id either. */
export class EvalSourceError extends Error {
  override name = 'EvalSourceError';
}

/** Options of an eval that do not go together (a cost budget without prices); names the option. */
export class EvalOptionsError extends Error {
  override name = 'EvalOptionsError';
}

/**
 * The cases `sources` name, in order: a folder gives its `*.json` files (sorted by name), a file is
 * itself, anything else is a session's workflow id.
 */
export function resolveEvalSources(sources: readonly string[], cwd = process.cwd()): EvalCase[] {
  const cases: EvalCase[] = [];
  for (const source of sources) {
    const full = path.resolve(cwd, source);
    const stat = fs.statSync(full, { throwIfNoEntry: false });
    if (stat?.isDirectory()) {
      const files = fs
        .readdirSync(full)
        .filter((f) => f.endsWith('.json'))
        .sort();
      if (files.length === 0) throw new EvalSourceError(`${source}: the folder holds no .json history files`);
      for (const f of files) cases.push({ name: f.replace(/\.json$/, ''), source: { file: path.join(full, f) } });
    } else if (stat?.isFile()) {
      cases.push({ name: path.basename(full).replace(/\.json$/, ''), source: { file: full } });
    } else if (/[/\\]|\.json$/.test(source)) {
      throw new EvalSourceError(`${source}: no such file or folder`);
    } else {
      cases.push({ name: source, source: { workflowId: source } });
    }
  }
  if (cases.length === 0) throw new EvalSourceError('name at least one recording: a session id, a history file or a folder of them');
  if (cases.length > MAX_EVAL_CASES) throw new EvalSourceError(`${cases.length} recordings: an eval takes at most ${MAX_EVAL_CASES}`);
  return cases;
}

/** Start an eval, or reattach to the one running (or finished) under `options.workflowId`. */
export async function startEval(host: EvalClientHost, options: StartEvalOptions): Promise<EvalHandle> {
  if (options.workflowId) {
    const existing = await describeEval(host.client, options.workflowId);
    if (existing) return existing;
  }
  const cases = resolveEvalSources(options.sources);
  if (options.budget?.cost !== undefined && options.prices === undefined) throw new EvalOptionsError('budget.cost needs prices: the price of the candidate model (or "*") to count its cost by');
  const id = options.workflowId ?? `loopwright-eval-${Date.now().toString(36)}`;
  const scratchRoot = path.resolve(options.scratchRoot ?? path.join(os.tmpdir(), 'loopwright-eval', id));
  const reportPath = path.resolve(options.reportPath ?? path.join(scratchRoot, 'report.json'));
  fs.mkdirSync(scratchRoot, { recursive: true });
  fs.mkdirSync(path.dirname(reportPath), { recursive: true });
  const input: EvalInput = {
    cases,
    candidate: options.candidate ?? {},
    ...(options.replay ? { replay: options.replay } : {}),
    scratchRoot,
    reportPath,
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    ...(options.continueAfter !== undefined ? { continueAfter: options.continueAfter } : {}),
    ...(options.scorers?.length ? { scorers: options.scorers } : {}),
    ...(options.prices ? { prices: options.prices } : {}),
    ...(options.keepScratch ? { keepScratch: true } : {}),
    ...(options.filesHost ? { filesHost: options.filesHost } : {}),
    ...(options.maxCopyBytes !== undefined ? { maxCopyBytes: options.maxCopyBytes } : {}),
    ...(options.grader ? { grader: options.grader } : {}),
    ...(options.budget ? { budget: options.budget } : {}),
    ...((await host.hasSearchAttributes()) ? { searchAttributes: true } : {}),
  };
  try {
    const handle = await host.client.workflow.start(EVAL_WORKFLOW, {
      taskQueue: host.taskQueue,
      workflowId: id,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      staticSummary: `eval · ${cases.length} recording(s)${options.candidate?.model ? ` · model ${options.candidate.model}` : ''}`,
    });
    return new EvalHandle(handle, false);
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return new EvalHandle(host.client.workflow.getHandle(id), true);
    throw err;
  }
}

/** A handle on the eval `workflowId` when one runs or completed under that id. */
async function describeEval(client: Client, workflowId: string): Promise<EvalHandle | undefined> {
  const handle = client.workflow.getHandle(workflowId);
  try {
    const { status, type } = await handle.describe();
    if (type !== EVAL_WORKFLOW) throw new Error(`Workflow ${workflowId} is a ${type}, not an eval`);
    return status.name === 'RUNNING' || status.name === 'COMPLETED' ? new EvalHandle(handle, true) : undefined;
  } catch (err) {
    if ((err as Error).name === 'WorkflowNotFoundError') return undefined;
    throw err;
  }
}

/** One eval. Every call goes to its latest run. */
export class EvalHandle {
  constructor(
    readonly workflow: WorkflowHandle,
    /** True when `startEval` found the eval already there instead of starting it. */
    readonly reattached = false,
  ) {}

  get workflowId(): string {
    return this.workflow.workflowId;
  }

  state(): Promise<EvalState> {
    return this.workflow.query(evalStateQuery);
  }

  result(): Promise<EvalSummary> {
    return this.workflow.result() as Promise<EvalSummary>;
  }

  /** The report the eval wrote (a file on the machine whose workers took its file activities). */
  async report(): Promise<EvalReport> {
    const summary = await this.result();
    return JSON.parse(await fs.promises.readFile(summary.reportPath, 'utf8')) as EvalReport;
  }

  cancel(): Promise<void> {
    return this.workflow.cancel().then(() => undefined);
  }
}
