/**
 * `loopwright eval <recordings...>`: recorded sessions (workflow ids, history files, folders of
 * them) replayed against a candidate (`--model`, the model flags, `--bundle`, `--project-root`) by
 * the durable eval workflow; progress on stderr, then a table of the baseline beside the candidate.
 * `--json [file]` writes (or prints) the report, `--junit <file>` writes JUnit XML, and each
 * `--fail-on <rule>` the report breaks makes the command exit 1, so a suite can gate a change in CI.
 * `--rubric <file>` (or `--rubric-text`) has a model (`--grader-model`, default the candidate's)
 * grade every answer on both sides; `--suite-token-budget` and `--suite-cost-budget` cap what the
 * candidate spends across the suite (recordings skipped once reached make the command exit 1).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { EvalReport, EvalState } from '../../common/eval/eval-types';
import { brokenRules, type BrokenRule, GRADE_RULES, parseRule, ThresholdError, type ThresholdRule } from '../../common/eval/thresholds';
import { type GraderSettings, MAX_RUBRIC_CHARS } from '../../common/eval/grading';
import { junitXml } from '../../common/eval/junit';
import { DIVERGENCE_RULES, type DivergenceRule, UNRECORDED_APPROVALS, type UnrecordedApprovalRule } from '../../common/eval/eval-script';
import { EvalOptionsError, EvalSourceError, type EvalHandle, startEval } from '../../client/eval-client';
import { EXIT } from '../exit-codes';
import { setRejoinHint } from '../exit-on-signal';
import { withWorker } from '../in-process-worker';
import { followWithProgress } from '../progress';
import { type CommandOutput, UsageError } from '../output';
import { openTemporal } from '../temporal-session';
import { webUiLink, workerNotice } from './command-support';
import { modelSessionSettings } from './session-settings';
import { filesHostSetting } from './files-host-option';
import { evalReportLines } from './eval-report-text';

/** Options of `loopwright eval`, as commander parsed them (the model flags besides). */
export interface EvalOptions {
  /** `--json`: print the report; `--json <file>`: write it there. */
  json?: boolean | string;
  junit?: string;
  failOn?: string[];
  model?: string;
  bundle?: string;
  projectRoot?: string;
  agent?: string;
  maxIterations?: number;
  concurrency?: number;
  onDivergence?: string;
  approveUnrecorded?: string;
  scorerModule?: string[];
  scorer?: string[];
  id?: string;
  keepScratch?: boolean;
  scratch?: string;
  maxCopyBytes?: number;
  filesHost?: string;
  /** `--continue-after <n>` (hidden): continue the eval workflow as new after n cases per run. */
  continueAfter?: number;
  rubric?: string;
  rubricText?: string;
  graderModel?: string;
  suiteTokenBudget?: number;
  suiteCostBudget?: number;
}

export async function evalCommand(sources: string[], options: EvalOptions, out: CommandOutput): Promise<number> {
  const printJson = options.json === true;
  const rules = parsedRules(options.failOn ?? []);
  const onDivergence = oneOfOption('--on-divergence', options.onDivergence, DIVERGENCE_RULES) as DivergenceRule | undefined;
  const approvals = oneOfOption('--approve-unrecorded', options.approveUnrecorded, UNRECORDED_APPROVALS) as UnrecordedApprovalRule | undefined;
  const scorers = await scorerNames(options);
  const model = modelSessionSettings(options, process.env, { terminal: false });
  const grader = graderSettings(options);
  const gradeRules = rules.filter((r) => GRADE_RULES.includes(r.text));
  if (gradeRules.length > 0 && !grader) throw new UsageError(`--fail-on ${gradeRules.map((r) => r.text).join(', ')}: needs --rubric (or --rubric-text) to grade the answers`);
  if (options.suiteCostBudget !== undefined && !model.budget?.prices) throw new UsageError('--suite-cost-budget: give the price of the candidate model with --price (e.g. --price "*=0.15/0.60")');
  const budget = {
    ...(options.suiteTokenBudget !== undefined ? { tokens: options.suiteTokenBudget } : {}),
    ...(options.suiteCostBudget !== undefined ? { cost: options.suiteCostBudget } : {}),
  };
  const candidate = {
    ...(options.model ? { model: options.model } : {}),
    ...(options.bundle ? { bundlePath: path.resolve(options.bundle) } : {}),
    ...(options.projectRoot ? { projectRoot: path.resolve(options.projectRoot) } : {}),
    ...(options.agent ? { agentId: options.agent } : {}),
    ...(options.maxIterations ? { maxIterations: options.maxIterations } : {}),
    ...(model.modelSettings ? { modelSettings: model.modelSettings } : {}),
    ...(model.fallbackModels ? { fallbackModels: model.fallbackModels } : {}),
    ...(model.context ? { context: model.context } : {}),
    ...(model.verify ? { verify: model.verify } : {}),
  };
  const temporal = await openTemporal(out);
  try {
    let handle: EvalHandle;
    try {
      handle = await startEval(temporal.loopwright, {
        sources,
        candidate,
        replay: { ...(onDivergence ? { onDivergence } : {}), ...(approvals ? { approvals } : {}) },
        ...(typeof options.json === 'string' ? { reportPath: options.json } : {}),
        ...(options.scratch ? { scratchRoot: options.scratch } : {}),
        ...(options.concurrency ? { concurrency: options.concurrency } : {}),
        ...(options.continueAfter ? { continueAfter: options.continueAfter } : {}),
        ...(options.id ? { workflowId: options.id } : {}),
        ...(scorers.length > 0 ? { scorers } : {}),
        ...(model.budget?.prices ? { prices: model.budget.prices } : {}),
        ...(options.keepScratch ? { keepScratch: true } : {}),
        ...(options.maxCopyBytes ? { maxCopyBytes: options.maxCopyBytes } : {}),
        ...(grader ? { grader } : {}),
        ...(Object.keys(budget).length > 0 ? { budget } : {}),
        ...filesHostSetting(options.filesHost),
      });
    } catch (err) {
      if (err instanceof EvalSourceError || err instanceof EvalOptionsError) throw new UsageError(err.message);
      throw err;
    }
    setRejoinHint(`loopwright eval ${sources.join(' ')} --id ${handle.workflowId}`);
    if (!printJson) {
      const link = temporal.uiUrl ? ` — ${webUiLink(temporal, handle.workflowId)}` : '';
      out.error(`Eval ${handle.workflowId} ${handle.reattached ? 'was already there: following it' : 'started'}${link}`);
    }
    const summary = await withWorker(temporal, { watch: handle.workflow, onStart: workerNotice(out, printJson) }, () => followWithProgress(handle, progressLine, out, !printJson));
    const report = JSON.parse(fs.readFileSync(summary.reportPath, 'utf8')) as EvalReport;
    const broken = new Map<number, BrokenRule[]>(report.cases.map((c) => [c.index, brokenRules(c, rules)]));
    const failed = [...broken.values()].filter((b) => b.length > 0).length;
    const skipped = report.cases.filter((c) => c.skipped !== undefined).length;
    const annotated = { ...report, failOn: rules.map((r) => r.text), failed, skipped, cases: report.cases.map((c) => ({ ...c, broken: broken.get(c.index) ?? [] })) };
    if (typeof options.json === 'string') fs.writeFileSync(path.resolve(options.json), `${JSON.stringify(annotated, null, 2)}\n`);
    if (options.junit) fs.writeFileSync(path.resolve(options.junit), junitXml(report, broken));
    if (printJson) out.log(JSON.stringify(annotated));
    else {
      for (const line of evalReportLines(report, broken)) out.log(line);
      const written = [typeof options.json === 'string' ? `report ${path.resolve(options.json)}` : `report ${summary.reportPath}`, options.junit ? `JUnit ${path.resolve(options.junit)}` : ''].filter(
        Boolean,
      );
      out.log(written.join(' · '));
    }
    if (skipped > 0) out.error(`The suite budget was reached: ${skipped} recording(s) not replayed (skipped); exit status ${EXIT.FAILED}`);
    return failed > 0 || skipped > 0 || summary.cancelled ? EXIT.FAILED : EXIT.OK;
  } finally {
    await temporal.close();
  }
}

function parsedRules(texts: readonly string[]): ThresholdRule[] {
  try {
    return texts
      .flatMap((t) => t.split(','))
      .filter((t) => t.trim() !== '')
      .map(parseRule);
  } catch (err) {
    if (err instanceof ThresholdError) throw new UsageError(`--fail-on: ${err.message}`);
    throw err;
  }
}

/** The grader's settings from `--rubric <file>` or `--rubric-text`, and `--grader-model`; a bad rubric is a usage error naming it. */
function graderSettings(options: EvalOptions): GraderSettings | undefined {
  if (options.rubric !== undefined && options.rubricText !== undefined) throw new UsageError('give either --rubric <file> or --rubric-text <text>, not both');
  if (options.rubric === undefined && options.rubricText === undefined) {
    if (options.graderModel !== undefined) throw new UsageError('--grader-model: needs --rubric (or --rubric-text), the rubric the answers are graded against');
    return undefined;
  }
  let rubric: string;
  let flag: string;
  if (options.rubric !== undefined) {
    flag = `--rubric ${options.rubric}`;
    try {
      rubric = fs.readFileSync(path.resolve(options.rubric), 'utf8');
    } catch (err) {
      throw new UsageError(`${flag}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  } else {
    flag = '--rubric-text';
    rubric = options.rubricText!;
  }
  if (rubric.trim() === '') throw new UsageError(`${flag}: the rubric is empty`);
  if (rubric.length > MAX_RUBRIC_CHARS) throw new UsageError(`${flag}: the rubric has ${rubric.length} characters; at most ${MAX_RUBRIC_CHARS} (it is sent with every grading call)`);
  if (options.graderModel !== undefined && options.graderModel.trim() === '') throw new UsageError('--grader-model: name a model');
  return {
    rubric,
    rubricSource: options.rubric !== undefined ? path.resolve(options.rubric) : 'text',
    ...(options.graderModel !== undefined ? { model: options.graderModel.trim() } : {}),
  };
}

function oneOfOption(flag: string, value: string | undefined, allowed: readonly string[]): string | undefined {
  if (value === undefined) return undefined;
  if (!allowed.includes(value)) throw new UsageError(`${flag} ${value}: expected ${allowed.join(', ')}`);
  return value;
}

/**
 * The scorers the eval runs: `--scorer` names, else every scorer of the `--scorer-module`s. The
 * modules are loaded here (a bad one is a usage error) and named to the worker this command may
 * start (LOOPWRIGHT_SCORER_MODULES); a long-lived worker needs them too (`loopwright worker --scorer-module`).
 */
async function scorerNames(options: EvalOptions): Promise<string[]> {
  const modules = (options.scorerModule ?? []).map((m) => (m.startsWith('.') || path.isAbsolute(m) ? path.resolve(m) : m));
  if (modules.length === 0) return options.scorer ?? [];
  const { loadScorerModules, SCORER_MODULES_VARIABLE, scorerModulesFromEnv } = await import('../../worker/scorer-modules');
  let loaded;
  try {
    loaded = await loadScorerModules(modules);
  } catch (err) {
    throw new UsageError(`--scorer-module: ${(err as Error).message}`);
  }
  process.env[SCORER_MODULES_VARIABLE] = [...scorerModulesFromEnv(), ...modules].join(',');
  const names = options.scorer ?? loaded.map((s) => s.name);
  const unknown = names.filter((n) => !loaded.some((s) => s.name === n));
  if (unknown.length > 0) throw new UsageError(`--scorer ${unknown.join(', ')}: not in the scorer modules (they define ${loaded.map((s) => s.name).join(', ')})`);
  return names;
}

/** `eval 7/20 · 4 running · 3 scored · 1 changed`. */
export function progressLine(state: EvalState): string {
  const parts = [`eval ${state.started}/${state.total}`, `${state.running} running`, `${state.scored} scored`];
  const changed = Math.max(state.statusChanged, state.trajectoryChanged);
  if (changed) parts.push(`${changed} changed`);
  if (state.errors) parts.push(`${state.errors} errors`);
  if (state.skipped) parts.push(`${state.skipped} skipped (budget)`);
  if (state.phase !== 'running') parts.push(state.phase);
  return parts.join(' · ');
}
