/**
 * Reading evals after the fact, for `loopwright serve`'s eval page and for programs: the evals on
 * the server, one eval's state or summary and its report (the JSON file the eval wrote, read as it
 * is: nothing is scored again), and one case of it with the recording's and the candidate's
 * transcripts side by side (common/eval/eval-view.ts). The report and any history file a case came
 * from are files on the machine whose workers took the eval's file activities: read from here, they
 * must be on this machine too, and a reader that cannot see them says so.
 */
import fs from 'node:fs';
import type { Client } from '@temporalio/client';
import { EVAL_WORKFLOW, type EvalReport, type EvalState, type EvalSummary } from '../common/eval/eval-types';
import { evalCaseView, type EvalCaseView } from '../common/eval/eval-view';
import type { Recording } from '../common/eval/recording';
import { brokenRules, type BrokenRule, type ThresholdRule } from '../common/eval/thresholds';
import { readRecording } from '../activities/eval/history-json';
import { evalStateQuery } from '../workflows/eval/eval-definitions';

/** Evals a list shows at most. */
export const MAX_EVALS_LISTED = 100;

/** One eval of the list. */
export interface EvalListing {
  id: string;
  /** The workflow's status: RUNNING, COMPLETED, FAILED, TERMINATED, CANCELLED, TIMED_OUT. */
  status: string;
  startTime: string;
  closeTime?: string;
}

/** An eval's report with each case's broken rules, as `loopwright eval --json` writes it. */
export type AnnotatedReport = Omit<EvalReport, 'cases'> & { failOn: string[]; failed: number; cases: (EvalReport['cases'][number] & { broken: BrokenRule[] })[] };

/** One eval: where it stands, and its report once written. */
export interface EvalOverview {
  id: string;
  status: string;
  startTime?: string;
  closeTime?: string;
  /** While it runs: its counters (the `evalState` query). */
  state?: EvalState;
  /** Once it completed: its summary. */
  summary?: EvalSummary;
  report?: AnnotatedReport;
  /** Why there is no report to show (still running, failed, the file not on this machine). */
  problem?: string;
}

/** No eval has this id (or the workflow under it is something else). */
export class EvalNotFoundError extends Error {
  override name = 'EvalNotFoundError';
  constructor(
    readonly evalId: string,
    message = `No eval ${evalId}`,
  ) {
    super(message);
  }
}

/** The eval has no report to read a case from (yet, or here). */
export class EvalReportUnavailableError extends Error {
  override name = 'EvalReportUnavailableError';
}

/** The evals on the server, newest first (at most `limit`). */
export async function listEvals(client: Client, limit = MAX_EVALS_LISTED): Promise<EvalListing[]> {
  const evals: EvalListing[] = [];
  const query = `WorkflowType = '${EVAL_WORKFLOW}' AND ExecutionStatus != 'ContinuedAsNew'`;
  for await (const execution of client.workflow.list({ query })) {
    evals.push({
      id: execution.workflowId,
      status: execution.status.name,
      startTime: execution.startTime.toISOString(),
      ...(execution.closeTime ? { closeTime: execution.closeTime.toISOString() } : {}),
    });
    if (evals.length >= limit) break;
  }
  return evals;
}

/** One eval: its state while it runs, its summary and report once it completed; `rules` mark each case's broken rules. */
export async function readEval(client: Client, id: string, rules: readonly ThresholdRule[] = []): Promise<EvalOverview> {
  const handle = client.workflow.getHandle(id);
  let description;
  try {
    description = await handle.describe();
  } catch (err) {
    if ((err as Error).name === 'WorkflowNotFoundError') throw new EvalNotFoundError(id);
    throw err;
  }
  if (description.type !== EVAL_WORKFLOW) throw new EvalNotFoundError(id, `No eval ${id}: that workflow is a ${description.type}`);
  const status = description.status.name;
  const base = { id, status, startTime: description.startTime.toISOString(), ...(description.closeTime ? { closeTime: description.closeTime.toISOString() } : {}) };
  if (status === 'RUNNING') {
    const state = await handle.query(evalStateQuery).catch(() => undefined);
    return { ...base, ...(state ? { state } : {}), problem: 'the eval is still running: its report is written when it ends' };
  }
  if (status !== 'COMPLETED') return { ...base, problem: `the eval ended ${status.toLowerCase()}: it wrote no report` };
  const summary = (await handle.result()) as EvalSummary;
  let report: EvalReport;
  try {
    report = JSON.parse(await fs.promises.readFile(summary.reportPath, 'utf8')) as EvalReport;
  } catch (err) {
    return { ...base, summary, problem: `the report ${summary.reportPath} cannot be read on this machine (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  }
  return { ...base, summary, report: annotated(report, rules) };
}

/** One case of a completed eval, with both transcripts; the recordings that cannot be read are named in `problems`. */
export async function readEvalCase(client: Client, id: string, index: number): Promise<EvalCaseView> {
  const overview = await readEval(client, id);
  if (!overview.report) throw new EvalReportUnavailableError(`Eval ${id} has no report to read: ${overview.problem ?? 'none was written'}`);
  const report = overview.report.cases.find((c) => c.index === index);
  if (!report) throw new EvalNotFoundError(id, `Eval ${id} has no case ${index} (its cases are 0 to ${overview.report.total - 1})`);
  const { broken: _broken, ...entry } = report;
  const codecs = client.options.loadedDataConverter.payloadCodecs;
  const problems: string[] = [];
  const read = async (what: string, source: Parameters<typeof readRecording>[0]): Promise<Recording | undefined> => {
    try {
      return await readRecording(source, () => client, codecs);
    } catch (err) {
      problems.push(`${what} cannot be read: ${(err as Error).message}`);
      return undefined;
    }
  };
  const [baseline, candidate] = await Promise.all([
    read(`the recording (${'file' in entry.source ? entry.source.file : entry.source.workflowId})`, entry.source),
    read(`the candidate session ${entry.candidateWorkflowId}`, { workflowId: entry.candidateWorkflowId }),
  ]);
  return evalCaseView(id, entry, baseline, candidate, problems);
}

function annotated(report: EvalReport, rules: readonly ThresholdRule[]): AnnotatedReport {
  const cases = report.cases.map((c) => ({ ...c, broken: brokenRules(c, rules) }));
  return { ...report, failOn: rules.map((r) => r.text), failed: cases.filter((c) => c.broken.length > 0).length, cases };
}
