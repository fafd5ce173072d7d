/**
 * `loopwright batch <bundle> <agent> --input items.jsonl`: one one-shot session per line, as child
 * workflows of a batch workflow; progress on stderr (one line updated in place on a terminal, a line
 * every few seconds otherwise), then the summary. `--id` reattaches to a batch already running.
 */
import { BatchInputError } from '../../common/batch-types';
import type { BatchState, BatchSummary } from '../../common/batch-types';
import type { BatchHandle } from '../../client/batch-client';
import { EXIT } from '../exit-codes';
import { setRejoinHint } from '../exit-on-signal';
import { withWorker } from '../in-process-worker';
import { followWithProgress } from '../progress';
import { type CommandOutput, UsageError } from '../output';
import { openTemporal } from '../temporal-session';
import { type JsonOption, webUiLink, workerNotice } from './command-support';
import { checkBundleLocally, sandboxSettings } from './session-commands';
import { modelSessionSettings } from './session-settings';
import { toolSessionSettings } from './tool-settings';

/** Options of `loopwright batch`; the setting flags' values besides (see the settings table). */
export interface BatchOptions extends JsonOption {
  input: string;
  /** The result file. */
  output?: string;
  /** `--output-root <dir>`: folders save_output may write to (the sandbox's --output of `run`). */
  outputRoot?: string[];
  concurrency?: number;
  id?: string;
  maxIterations?: number;
  model?: string;
  check?: boolean;
  /** `--continue-after <n>` (hidden): continue as new after n items per run. */
  continueAfter?: number;
  /** `--headless`: every item runs headless; its result line carries the JSON status. */
  headless?: boolean;
}

export async function batchCommand(bundlePath: string, agentId: string, options: BatchOptions, out: CommandOutput): Promise<number> {
  const json = options.json === true;
  const sandbox = sandboxSettings({ ...options, output: options.outputRoot });
  if (options.check !== false) {
    const problem = await checkBundleLocally(bundlePath, agentId, sandbox);
    if (problem) {
      if (json) out.log(JSON.stringify({ batchId: null, error: problem.message, type: problem.type }));
      else out.error(`Error: ${problem.message}`);
      return EXIT.FAILED;
    }
  }
  const temporal = await openTemporal(out);
  try {
    let batch: BatchHandle;
    try {
      batch = await temporal.loopwright.startBatch({
        bundlePath,
        agentId,
        inputPath: options.input,
        ...(options.output ? { outputPath: options.output } : {}),
        ...(options.concurrency ? { concurrency: options.concurrency } : {}),
        ...(options.id ? { workflowId: options.id } : {}),
        ...(options.continueAfter ? { continueAfter: options.continueAfter } : {}),
        ...(options.headless ? { headless: true } : {}),
        maxIterations: options.maxIterations,
        model: options.model,
        ...sandbox,
        ...modelSessionSettings(options, process.env, { terminal: false }),
        ...toolSessionSettings(options),
      });
    } catch (err) {
      if (err instanceof BatchInputError) throw new UsageError(`--input ${options.input}: ${err.message}; nothing was started`);
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`--input ${options.input}: no such file`);
      throw err;
    }
    setRejoinHint(`loopwright batch ${bundlePath} ${agentId} --input ${options.input} --id ${batch.workflowId}`);
    if (!json) {
      const link = temporal.uiUrl ? ` — ${webUiLink(temporal, batch.workflowId)}` : '';
      out.error(`Batch ${batch.workflowId} ${batch.reattached ? 'was already there: following it' : 'started'}${link}`);
    }
    const summary = await withWorker(temporal, { watch: batch.workflow, onStart: workerNotice(out, json) }, () => followWithProgress(batch, progressLine, out, !json));
    printSummary(batch.workflowId, summary, out, json);
    return summary.failed > 0 || summary.cancelled > 0 || summary.cancelledBatch ? EXIT.FAILED : EXIT.OK;
  } finally {
    await temporal.close();
  }
}

/** `batch 17/40 · 4 running · 12 ok · 1 failed · 3,120 tokens`. */
export function progressLine(state: BatchState): string {
  const parts = [`batch ${state.started}/${state.total}`, `${state.running} running`, `${state.ok} ok`, `${state.failed} failed`];
  if (state.cancelled) parts.push(`${state.cancelled} cancelled`);
  parts.push(`${state.usage.totalTokens.toLocaleString('en-US')} tokens`);
  if (state.phase !== 'running') parts.push(state.phase);
  return parts.join(' · ');
}

function printSummary(batchId: string, summary: BatchSummary, out: CommandOutput, json: boolean): void {
  if (json) {
    out.log(JSON.stringify({ batchId, ...summary }));
    return;
  }
  const statuses = Object.entries(summary.byStatus)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, n]) => `${status} ${n}`)
    .join(', ');
  out.log(
    `Batch ${batchId}${summary.cancelledBatch ? ' (cancelled)' : ''}: ${summary.total} item(s) — ${summary.ok} ok, ${summary.failed} failed, ${summary.cancelled} cancelled` +
      `${summary.notStarted ? `, ${summary.notStarted} not started` : ''}${statuses ? ` (${statuses})` : ''} · ${summary.usage.totalTokens.toLocaleString('en-US')} tokens`,
  );
  out.log(`Results: ${summary.outputPath} (${summary.resultLines} line(s))`);
}
