/**
 * The eval workflow's activities, on the files host: prepare a case (read its recording from the
 * server or a history file, write it beside a scratch copy of the project, and make the candidate
 * session's input), answer an eval session's next recorded turn, score a case (read the
 * candidate's history, compare, run the custom scorers, append the case to the journal once), grade
 * a case's answers on both sides against a rubric with a model (grader.ts), write the report from the
 * journal, and remove a case's scratch folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { asRecorded, argumentsKey } from '../../common/eval/canonical-json';
import { type EvalTurn, type LoadEvalTurnInput, EVAL_TURN_RESULTS_BYTES, type ScriptCall } from '../../common/eval/eval-script';
import type { CaseTally, EvalCandidate, EvalCase, EvalCaseReport, EvalReport, PreparedCase, ReplayRules } from '../../common/eval/eval-types';
import { RecordingError } from '../../common/eval/extract-recording';
import type { Recording } from '../../common/eval/recording';
import { scoreCase } from '../../common/eval/score-case';
import type { ModelPrice } from '../../common/budget-types';
import type { SessionInput } from '../../common/session-types';
import { readRecording as readRecordingFrom } from './history-json';
import { makeScratchWorkspace, projectFolderOf, ScratchCopyError } from './scratch-copy';
import { runScorers, type Scorer } from './scorers';
import type { Grader, GradeCall } from './grader';
import { type CaseGrades, GRADE_NO_ANSWER, type GradeOutcome, type GraderSettings, meanScore, type TurnGrades } from '../../common/eval/grading';
import type { ModelSettings } from '../../common/model-call';
import type { TokenUsage } from '../../common/messages';

/** Input of `prepareEvalCase`. */
export interface PrepareCaseInput {
  evalId: string;
  index: number;
  evalCase: EvalCase;
  candidate: EvalCandidate;
  replay?: ReplayRules;
  scratchRoot: string;
  maxCopyBytes: number;
  filesHost?: string;
  searchAttributes?: boolean;
}

/** Input of `scoreEvalCase`. */
export interface ScoreCaseInput {
  evalId: string;
  index: number;
  evalCase: EvalCase;
  candidateWorkflowId: string;
  prepared: PreparedCase;
  /** The candidate session failed outside a turn (or could not start). */
  sessionFailure?: string;
  journalPath: string;
  scorers?: string[];
  prices?: Record<string, ModelPrice>;
  /** The case's grades (`gradeEvalCase`), when the eval has a rubric. */
  grades?: CaseGrades;
}

/** Input of `gradeEvalCase`. */
export interface GradeCaseInput {
  evalId: string;
  index: number;
  /** The case's scratch folder (its recording is there; grades already had are kept there). */
  caseDir: string;
  candidateWorkflowId: string;
  grader: GraderSettings;
  /** The candidate session's model and settings: the grader's unless `grader.model` names another. */
  model?: string;
  settings?: ModelSettings;
}

/** Input of `assembleEvalReport`. */
export interface AssembleReportInput {
  evalId: string;
  journalPath: string;
  reportPath: string;
  header: Omit<EvalReport, 'evalId' | 'cases'>;
  /** Cases skipped because the suite's budget was reached: reported as such, unless the journal has them. */
  skipped?: (EvalCase & { index: number })[];
}

/** The eval activities, keyed by the names the workflows schedule. */
export interface EvalActivities {
  prepareEvalCase(input: PrepareCaseInput): Promise<PreparedCase>;
  loadEvalTurn(input: LoadEvalTurnInput): Promise<EvalTurn | null>;
  scoreEvalCase(input: ScoreCaseInput): Promise<CaseTally>;
  gradeEvalCase(input: GradeCaseInput): Promise<CaseGrades>;
  scoredEvalCases(input: { evalId: string; journalPath: string }): Promise<number[]>;
  /** The tallies of the cases already scored (an eval with a budget counts what they spent). */
  scoredEvalTallies(input: { evalId: string; journalPath: string }): Promise<CaseTally[]>;
  assembleEvalReport(input: AssembleReportInput): Promise<{ cases: number }>;
  removeEvalScratch(input: { caseDir: string }): Promise<void>;
}

/** Where a case's scratch folder goes: `<scratchRoot>/<index>`. */
export function caseDirOf(scratchRoot: string, index: number): string {
  return path.join(scratchRoot, String(index).padStart(5, '0'));
}

/**
 * The eval activities of a worker; `client` reads recordings and candidates from the server,
 * `scorers` are its custom scorers, `grader` grades answers against a rubric (on the worker's model settings).
 */
export function createEvalActivities(options: { client?: Client; scorers?: readonly Scorer[]; grader?: Grader } = {}): EvalActivities {
  const scorers = options.scorers ?? [];
  const needClient = (): Client => {
    if (!options.client) throw ApplicationFailure.nonRetryable('This worker has no client to read session histories with', 'LoopwrightWorkerMisconfigured');
    return options.client;
  };
  const codecs = () => options.client?.options.loadedDataConverter.payloadCodecs ?? [];
  /** A session's recording, from the server or from a file, its payloads decoded with this worker's codecs. */
  const readRecording = (source: EvalCase['source']): Promise<Recording> => readRecordingFrom(source, needClient, codecs());
  return {
    prepareEvalCase: (input) =>
      whileBeating(async () => {
        const caseDir = caseDirOf(input.scratchRoot, input.index);
        const marker = path.join(caseDir, 'prepared.json');
        // Prepared before (a retried attempt, or the eval run again): the same case, untouched.
        if (fs.existsSync(marker)) return JSON.parse(fs.readFileSync(marker, 'utf8')) as PreparedCase;
        fs.rmSync(caseDir, { recursive: true, force: true });
        fs.mkdirSync(caseDir, { recursive: true });
        let prepared: PreparedCase;
        try {
          prepared = await prepare(input, caseDir, await readRecording(input.evalCase.source));
        } catch (err) {
          if (!isCaseProblem(err)) throw err;
          prepared = { ok: false, caseDir, error: (err as Error).message };
        }
        writeAtomically(marker, JSON.stringify(prepared));
        return prepared;
      }),
    async loadEvalTurn({ script, turn }) {
      const recording = cachedRecording(script);
      return evalTurnOf(recording, turn);
    },
    scoreEvalCase: (input) =>
      whileBeating(async () => {
        const done = readJournal(input.journalPath, input.evalId).get(input.index);
        if (done) return tallyOf(done);
        const report = await scoreOne(input);
        // A leading newline ends a line a killed worker may have left half-written; such a line is skipped.
        fs.appendFileSync(input.journalPath, `\n${JSON.stringify({ evalId: input.evalId, ...report })}\n`);
        return tallyOf(report);
      }),
    gradeEvalCase: (input) =>
      whileBeating(async () => {
        if (!options.grader) throw ApplicationFailure.nonRetryable('This worker has no grader (create its eval activities with one)', 'LoopwrightWorkerMisconfigured');
        const baseline = JSON.parse(fs.readFileSync(path.join(input.caseDir, 'recording.json'), 'utf8')) as Recording;
        const candidate = await readRecording({ workflowId: input.candidateWorkflowId });
        return gradeCase(options.grader, input, baseline, candidate);
      }),
    async scoredEvalCases({ evalId, journalPath }) {
      return [...readJournal(journalPath, evalId).keys()].sort((a, b) => a - b);
    },
    async scoredEvalTallies({ evalId, journalPath }) {
      return [...readJournal(journalPath, evalId).values()].sort((a, b) => a.index - b.index).map(tallyOf);
    },
    async assembleEvalReport({ evalId, journalPath, reportPath, header, skipped }) {
      const journal = readJournal(journalPath, evalId);
      for (const s of skipped ?? []) if (!journal.has(s.index)) journal.set(s.index, skippedCase(evalId, s));
      const cases = [...journal.values()].sort((a, b) => a.index - b.index);
      const report: EvalReport = { evalId, ...header, cases };
      fs.mkdirSync(path.dirname(reportPath), { recursive: true });
      writeAtomically(reportPath, `${JSON.stringify(report, null, 2)}\n`);
      // The report holds every case now; an eval that completed is only ever reattached to, never run again.
      fs.rmSync(journalPath, { force: true });
      return { cases: cases.length };
    },
    async removeEvalScratch({ caseDir }) {
      fs.rmSync(caseDir, { recursive: true, force: true });
    },
  };

  async function scoreOne(input: ScoreCaseInput): Promise<EvalCaseReport> {
    const { prepared, evalCase } = input;
    const base: EvalCaseReport = {
      index: input.index,
      name: evalCase.name,
      source: evalCase.source,
      candidateWorkflowId: input.candidateWorkflowId,
      turns: [],
      statusChanged: false,
      trajectory: { same: true },
      replay: { answered: 0, ran: 0, diverged: 0, divergedCalls: [], approvalsAsRecorded: 0, approvalsByRule: 0 },
      scorers: [],
      warnings: [],
    };
    if (!prepared.ok) return { ...base, error: prepared.error };
    const baseline = JSON.parse(fs.readFileSync(path.join(prepared.caseDir, 'recording.json'), 'utf8')) as Recording;
    let candidate: Recording;
    try {
      candidate = await readRecording({ workflowId: input.candidateWorkflowId });
    } catch (err) {
      if (!isCaseProblem(err) && (err as Error).name !== 'WorkflowNotFoundError') throw err;
      return { ...base, error: `the candidate session ${input.candidateWorkflowId} cannot be read: ${(err as Error).message}` };
    }
    // The candidate named files in its scratch copy; compare as if it had named them where the recording did.
    const paths = prepared.sessionInput.eval?.paths;
    for (const turn of candidate.turns) for (const call of turn.calls) call.key = argumentsKey(asRecorded(call.arguments, paths));
    const scores = scoreCase(baseline, candidate, input.prices);
    const workspace = { path: prepared.workspace, files: prepared.copied.files, bytes: prepared.copied.bytes };
    const scored = await runScorers(scorers, input.scorers ?? [], { name: evalCase.name, baseline, candidate, scores, workspace: prepared.workspace });
    return {
      ...base,
      ...scores,
      ...(input.sessionFailure ? { error: `the candidate session failed: ${input.sessionFailure}` } : {}),
      scorers: scored,
      ...(input.grades ? { grades: input.grades } : {}),
      workspace,
      warnings: [...prepared.warnings, ...scores.warnings],
    };
  }
}

/**
 * Grade each recorded turn's answer, then the candidate's answer to the same message. Grades had
 * are kept in `<caseDir>/grades.json` as they come, so a retried attempt (a worker lost mid-way)
 * asks only for the rest.
 */
async function gradeCase(grader: Grader, input: GradeCaseInput, baseline: Recording, candidate: Recording): Promise<CaseGrades> {
  const kept = path.join(input.caseDir, 'grades.json');
  const done = (fs.existsSync(kept) ? JSON.parse(fs.readFileSync(kept, 'utf8')) : {}) as Record<string, GradeCall>;
  const usage: TokenUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  let calls = 0;
  let model = input.grader.model ?? input.model;
  const gradeOf = async (key: string, message: string, side: Recording['turns'][number] | undefined, missing: string): Promise<GradeOutcome> => {
    if (!side) return { failure: { type: GRADE_NO_ANSWER, message: missing } };
    const answer = side.result?.response;
    if (!answer) return { failure: { type: GRADE_NO_ANSWER, message: `the turn ended ${side.result?.status ?? 'without a result'} with no answer` } };
    let call = done[key];
    if (!call) {
      call = await grader({ rubric: input.grader.rubric, ...(model ? { model } : {}), ...(input.settings ? { settings: input.settings } : {}), message, answer });
      done[key] = call;
      writeAtomically(kept, JSON.stringify(done));
    }
    model = call.model;
    calls += call.calls;
    usage.promptTokens += call.usage.promptTokens;
    usage.completionTokens += call.usage.completionTokens;
    usage.totalTokens += call.usage.totalTokens;
    return call.outcome;
  };
  const turns: TurnGrades[] = [];
  for (const [i, recorded] of baseline.turns.entries()) {
    turns.push({
      turn: i + 1,
      baseline: await gradeOf(`${i + 1}:baseline`, recorded.message, recorded, 'the recording has no such turn'),
      candidate: await gradeOf(`${i + 1}:candidate`, recorded.message, candidate.turns[i], 'the candidate never reached this turn'),
    });
  }
  const baselineMean = meanScore(turns.map((t) => t.baseline));
  const candidateMean = meanScore(turns.map((t) => t.candidate));
  return {
    model: model ?? 'the worker default',
    turns,
    ...(baselineMean !== undefined ? { baselineMean } : {}),
    ...(candidateMean !== undefined ? { candidateMean } : {}),
    calls,
    failures: turns.reduce((n, t) => n + ('failure' in t.baseline ? 1 : 0) + ('failure' in t.candidate ? 1 : 0), 0),
    usage,
  };
}

/** The candidate session's input: the recording's settings, the candidate's changes, paths in the scratch copy, the replay. */
async function prepare(input: PrepareCaseInput, caseDir: string, recording: Recording): Promise<PreparedCase> {
  const recorded = recording.input;
  if (recorded.delegatedBy) throw new RecordingError(`the session was started by ${recorded.delegatedBy.workflowId} (delegation): replay its parent instead`);
  if (recording.turns.length === 0) throw new RecordingError('the recording has no turns');
  const recordingPath = path.join(caseDir, 'recording.json');
  fs.writeFileSync(recordingPath, JSON.stringify(recording));
  const { candidate } = input;
  const source = {
    bundlePath: candidate.bundlePath ?? recorded.bundlePath,
    ...((candidate.projectRoot ?? recorded.projectRoot) ? { projectRoot: candidate.projectRoot ?? recorded.projectRoot } : {}),
    ...(recorded.outputRoots ? { outputRoots: recorded.outputRoots } : {}),
  };
  const scratch = await makeScratchWorkspace(source, caseDir, input.maxCopyBytes);
  // Arguments are compared as the recording wrote them: the copy stands for the recorded project (and bundle).
  const recordedRoot = projectFolderOf(recorded);
  const paths: Record<string, string> = { [scratch.workspace]: recordedRoot };
  const bundleCopy = Object.keys(scratch.mapped).find((p) => p !== scratch.workspace);
  if (bundleCopy) paths[bundleCopy] = recorded.bundlePath;
  const {
    firstMessage: _first,
    oneShot: _oneShot,
    continued: _continued,
    branchFrom: _branch,
    searchAttributes: _search,
    filesHost: _host,
    eval: _eval,
    bundlePath: _bundle,
    projectRoot: _root,
    outputRoots: _outputs,
    ...settings
  } = recorded as SessionInput;
  const { bundlePath: _cb, projectRoot: _cp, modelSettings, ...changes } = candidate;
  const sessionInput: SessionInput = {
    ...settings,
    ...changes,
    ...(modelSettings || settings.modelSettings ? { modelSettings: { ...settings.modelSettings, ...modelSettings } } : {}),
    ...scratch.paths,
    eval: { script: recordingPath, onDivergence: input.replay?.onDivergence ?? 'run', approvals: input.replay?.approvals ?? 'approve', paths },
    ...(input.filesHost ? { filesHost: input.filesHost } : {}),
    ...(input.searchAttributes ? { searchAttributes: true } : {}),
  };
  const warnings = [...recording.warnings];
  if (recorded.oneShot) warnings.push('the recording is a one-shot session: the candidate runs its turn in a session that ends after it');
  return { ok: true, caseDir, workspace: scratch.workspace, sessionInput, copied: { files: scratch.files, bytes: scratch.bytes }, warnings };
}

/** Problems with a case that no retry can fix: reported in the case, the eval goes on. */
function isCaseProblem(err: unknown): boolean {
  if (err instanceof RecordingError || err instanceof ScratchCopyError || err instanceof SyntaxError) return true;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') return true;
  const name = (err as Error).name;
  return name === 'WorkflowNotFoundError' || name === 'ValueError';
}

/** Recordings read by `loadEvalTurn`, by path (a session reads its own once per turn). */
const recordings = new Map<string, { mtimeMs: number; recording: Recording }>();
const RECORDINGS_KEPT = 64;

function cachedRecording(script: string): Recording {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(script);
  } catch {
    throw ApplicationFailure.nonRetryable(`The eval session's recording ${script} is gone (its scratch folder was removed?)`, 'LoopwrightEvalScriptMissing');
  }
  const kept = recordings.get(script);
  if (kept && kept.mtimeMs === stat.mtimeMs) return kept.recording;
  const recording = JSON.parse(fs.readFileSync(script, 'utf8')) as Recording;
  recordings.set(script, { mtimeMs: stat.mtimeMs, recording });
  if (recordings.size > RECORDINGS_KEPT) recordings.delete(recordings.keys().next().value!);
  return recording;
}

/** Turn `turn` (1-based) of a recording as an eval session replays it; null past the last. */
export function evalTurnOf(recording: Recording, turn: number): EvalTurn | null {
  const recorded = recording.turns[turn - 1];
  if (!recorded) return null;
  const calls: ScriptCall[] = recorded.calls.map((c) => ({ tool: c.tool, key: c.key, ...(c.result !== undefined ? { result: c.result } : {}) }));
  // Within the payload bound: the largest results are left out first (those calls run for real).
  let omitted = 0;
  const sizes = calls.map((c, i) => ({ i, bytes: c.result === undefined ? 0 : JSON.stringify(c.result).length })).sort((a, b) => b.bytes - a.bytes);
  let total = sizes.reduce((n, s) => n + s.bytes, 0);
  for (const s of sizes) {
    if (total <= EVAL_TURN_RESULTS_BYTES || s.bytes === 0) break;
    delete calls[s.i]!.result;
    total -= s.bytes;
    omitted += 1;
  }
  return {
    turn,
    total: recording.turns.length,
    message: recorded.message,
    calls,
    approvals: recorded.approvals.map((a) => ({ tool: a.tool, key: a.key, approved: a.approved, ...(a.reason !== undefined ? { reason: a.reason } : {}) })),
    ...(recorded.actions?.length ? { actions: recorded.actions } : {}),
    ...(omitted > 0 ? { omittedResults: omitted } : {}),
  };
}

/** The report entry of a case skipped because the suite's budget was reached. */
function skippedCase(evalId: string, c: EvalCase & { index: number }): EvalCaseReport {
  return {
    index: c.index,
    name: c.name,
    source: c.source,
    candidateWorkflowId: `${evalId}-${c.index}`,
    skipped: 'budget',
    turns: [],
    statusChanged: false,
    trajectory: { same: true },
    replay: { answered: 0, ran: 0, diverged: 0, divergedCalls: [], approvalsAsRecorded: 0, approvalsByRule: 0 },
    scorers: [],
    warnings: ["not replayed: the suite's budget was reached before it started"],
  };
}

/** The journal's cases of this eval, by index (the first line of each counts; a half-written line is skipped). */
function readJournal(journalPath: string, evalId: string): Map<number, EvalCaseReport> {
  const cases = new Map<number, EvalCaseReport>();
  if (!fs.existsSync(journalPath)) return cases;
  for (const line of fs.readFileSync(journalPath, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    let entry: EvalCaseReport & { evalId?: string };
    try {
      entry = JSON.parse(line) as EvalCaseReport & { evalId?: string };
    } catch {
      continue;
    }
    if (entry.evalId !== evalId || cases.has(entry.index)) continue;
    const { evalId: _id, ...report } = entry;
    cases.set(report.index, report);
  }
  return cases;
}

function tallyOf(report: EvalCaseReport): CaseTally {
  return {
    index: report.index,
    error: report.error !== undefined,
    statusChanged: report.statusChanged,
    trajectoryChanged: !report.trajectory.same,
    baselineTokens: report.baseline?.usage.totalTokens ?? 0,
    candidateTokens: report.candidate?.usage.totalTokens ?? 0,
    ...(report.candidate?.cost !== undefined ? { candidateCost: report.candidate.cost } : {}),
    ...(report.grades ? { graderTokens: report.grades.usage.totalTokens } : {}),
  };
}

/** How often a long eval activity (a copy, reading histories, custom scorers) tells the server it is alive. */
const BEAT_MS = 1_000;

/** Run `fn`, heartbeating meanwhile (outside an activity, as in unit tests, just run it). */
async function whileBeating<T>(fn: () => Promise<T>): Promise<T> {
  let context: Context | undefined;
  try {
    context = Context.current();
  } catch {
    context = undefined;
  }
  const timer = context ? setInterval(() => context.heartbeat(), BEAT_MS) : undefined;
  try {
    return await fn();
  } finally {
    if (timer) clearInterval(timer);
  }
}

function writeAtomically(file: string, text: string): void {
  const temporary = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(temporary, text);
  fs.renameSync(temporary, file);
}
