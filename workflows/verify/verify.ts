/**
 * The verify phase of a session (gather → act → verify). When a workflow that names a checklist
 * (its `validation`, or a menu item's `checklist` + `document`) has run and its document was saved,
 * the model's final answer is not the end of the turn: the `verifyDocument` activity checks the
 * document item by item; failed items go back to the agent to fix, at most `maxAttempts` times, and
 * the turn ends with the report (verified, failed verification, or not verified).
 *
 * Everything here is decided from recorded results (tool results, the activity's answer), so it
 * replays exactly. The pending document travels to the next run when the session continues as new.
 */
import { isCancellation, log, metricMeter } from '@temporalio/workflow';
import type { TokenUsage, ToolCall, ToolResult } from '../../common/messages';
import type { ModelSettings } from '../../common/model-call';
import type { RuntimeContext } from '../../common/runtime-context';
import { toolSpec } from '../../common/tools';
import { argsOf } from '../../common/tools/tool-spec';
import { fixRequest } from '../../common/verify-report';
import {
  type CommandCheck,
  DEFAULT_VERIFY_ATTEMPTS,
  MAX_REPORTED_ITEMS,
  type PendingVerify,
  type VerificationReport,
  type VerifyCarry,
  type VerifyResult,
  type VerifySettings,
  type VerifyTarget,
} from '../../common/verify-types';
import type { AnswerVerdict } from '../turn/extensions';
import type { SessionActivityStubs } from '../stubs/activity-proxies';
import { rootMessage } from '../turn/tool-calls';
import { withSpan } from '../tracing/trace-hook';

/** The tool whose results the verifier reads to learn which document is pending. */
const EXECUTE_WORKFLOW = 'execute_workflow';

/**
 * Whether a successful call of `name` changed a saved document: a built-in tool that writes
 * (`save_output` whole or appending, `edit_file`), whose result's `path` is the file written. Read
 * from the definitions, so a new writing tool counts too; sessions recorded before `edit_file`
 * existed hold only `save_output` writes, so they replay as they ran.
 */
function savesDocument(name: string): boolean {
  return toolSpec(name)?.access === 'write';
}

/** What the verifier needs from its session. */
export interface VerifierDeps {
  activities: SessionActivityStubs;
  settings: VerifySettings | undefined;
  context: () => RuntimeContext;
  checks: readonly CommandCheck[];
  /** The agent's menu, in order (a number picks an item). */
  commands: readonly { cmd: string }[];
  model?: string;
  modelSettings?: ModelSettings;
  /** The session's status line and Web UI details changed. */
  onChange(): void;
}

/** The turn's phase, as the session's state shows it. */
export type Phase = 'gather' | 'act' | 'verify';

export class SessionVerifier {
  readonly maxAttempts: number;
  private pending: PendingVerify | undefined;
  private report: VerificationReport | undefined;
  phase: Phase = 'gather';

  constructor(
    private readonly deps: VerifierDeps,
    carried: VerifyCarry | undefined,
  ) {
    this.maxAttempts = deps.settings?.maxAttempts ?? DEFAULT_VERIFY_ATTEMPTS;
    this.pending = carried?.pending;
    this.report = carried?.report;
  }

  /** A new turn begins (not one resumed in a new run). */
  startTurn(): void {
    this.report = undefined;
    this.phase = 'gather';
  }

  /** The report the turn ends with, if it verified (or tried to). */
  turnReport(): VerificationReport | undefined {
    return this.report;
  }

  /** What the next run needs. */
  carry(): VerifyCarry | undefined {
    if (!this.pending && !this.report) return undefined;
    return { ...(this.pending ? { pending: this.pending } : {}), ...(this.report ? { report: this.report } : {}) };
  }

  /** For the session's state: the phase and the document awaiting verification. */
  view(): { phase: Phase; pending?: { name?: string; checklist?: string; document?: string; attempts: number; maxAttempts: number } } {
    const p = this.pending;
    return {
      phase: this.phase,
      ...(p
        ? {
            pending: {
              ...(p.target.name ? { name: p.target.name } : {}),
              ...(p.target.checklist ? { checklist: p.target.checklist } : {}),
              ...(p.saved ? { document: p.saved } : {}),
              attempts: p.attempts,
              maxAttempts: this.maxAttempts,
            },
          }
        : {}),
    };
  }

  /** Read the results of one assistant message's tool calls (in call order). */
  noteToolResults(calls: readonly ToolCall[], results: readonly (ToolResult | undefined)[], writes: (name: string) => boolean): void {
    calls.forEach((call, i) => {
      const result = results[i];
      if (!result || result.success !== true) return;
      const name = call.function.name;
      if (writes(name) && this.phase === 'gather') this.phase = 'act';
      if (name === EXECUTE_WORKFLOW) this.workflowStarted(call, result);
      else if (savesDocument(name) && this.pending && typeof result.path === 'string') {
        if (matchesExpected(result.path, this.pending.expected)) this.pending.saved = result.path;
      }
    });
  }

  /**
   * The model answered without tools. When the pending document was saved since it was last
   * checked, verify it: `{ continueWith }` is the message that sends the failed items back (the
   * turn goes on), `{ end }` ends the turn `failed_verification` once the attempts are used up;
   * undefined lets the turn complete (verified, or nothing to verify). The report is `turnReport()`.
   */
  async atAnswer(turn: number, recordUsage: (usage: TokenUsage) => void): Promise<AnswerVerdict | undefined> {
    const pending = this.pending;
    if (!pending) return failedEnd(this.report);
    if (!pending.saved) {
      // Checked before and not saved again: the agent chose not to fix, so the last report stands.
      if (pending.last) {
        this.finishCycle(pending.last.status === 'verified' ? pending.last : { ...pending.last, status: 'failed_verification' });
      }
      return failedEnd(this.report);
    }
    const target: VerifyTarget = { ...pending.target, document: pending.saved };
    pending.attempts += 1;
    pending.saved = undefined;
    const report = await this.verify(target, pending.attempts, turn, recordUsage);
    pending.last = report;
    if (report.status === 'failed_verification' && pending.attempts < this.maxAttempts) {
      this.report = report;
      this.phase = 'act';
      this.deps.onChange();
      return { continueWith: fixRequest(report) };
    }
    this.finishCycle(report);
    return failedEnd(this.report);
  }

  /** The menu command `message` runs, when it is one that checks a document (`*validate-prd`, `validate-prd`, or its number). */
  commandFor(message: string): CommandCheck | undefined {
    const commands = this.deps.commands;
    if (!this.deps.checks.some((c) => c.kind === 'validate')) return undefined;
    const text = message.trim().toLowerCase();
    if (text === '' || text.length > 200) return undefined;
    let cmd: string | undefined;
    if (/^\d{1,3}$/.test(text)) cmd = commands[Number(text) - 1]?.cmd;
    else cmd = commands.find((c) => c.cmd.toLowerCase() === text || c.cmd.toLowerCase().replace(/^\*/, '') === text.replace(/^\*/, ''))?.cmd;
    return cmd === undefined ? undefined : this.deps.checks.find((c) => c.cmd === cmd && c.kind === 'validate');
  }

  /** Run a menu item's check on demand; the report is the turn's reply. */
  async runCommand(check: CommandCheck, turn: number, recordUsage: (usage: TokenUsage) => void): Promise<VerificationReport> {
    const target: VerifyTarget = {
      source: 'command',
      name: check.cmd,
      ...(check.workflow ? { workflow: check.workflow } : {}),
      ...(check.checklist ? { checklist: check.checklist } : {}),
      ...(check.document ? { document: check.document } : {}),
    };
    const report = await this.verify(target, 1, turn, recordUsage, 1);
    this.report = report;
    countOutcome(report);
    return report;
  }

  private workflowStarted(call: ToolCall, result: ToolResult): void {
    const config = (result.config ?? {}) as Record<string, unknown>;
    const workflowPath = stringOf(argsOf(call).workflow_path);
    const command = workflowPath ? this.deps.checks.find((c) => c.workflow !== undefined && samePath(c.workflow, workflowPath)) : undefined;
    const checklist = stringOf(config.validation) ?? stringOf(config.checklist) ?? command?.checklist;
    if (!checklist) return;
    const expected = (command?.document ?? stringOf(config.default_output_file))?.trim();
    const name = stringOf(result.workflow_name);
    this.pending = {
      target: { source: 'workflow', checklist, ...(workflowPath ? { workflow: workflowPath } : {}), ...(name ? { name } : {}) },
      ...(expected ? { expected } : {}),
      attempts: 0,
    };
    log.info('Verification pending', { workflow: name, checklist });
    this.deps.onChange();
  }

  private finishCycle(report: VerificationReport): void {
    this.report = report;
    countOutcome(report);
    // A document that failed keeps waiting: saved again in a later turn, it gets fresh attempts.
    this.pending = report.status === 'failed_verification' && this.pending ? { ...this.pending, attempts: 0, saved: undefined, last: undefined } : undefined;
    this.deps.onChange();
  }

  private async verify(target: VerifyTarget, attempt: number, turn: number, recordUsage: (usage: TokenUsage) => void, maxAttempts = this.maxAttempts): Promise<VerificationReport> {
    const previous = this.phase;
    this.phase = 'verify';
    this.deps.onChange();
    const base = {
      attempts: attempt,
      maxAttempts,
      source: target.source,
      ...(target.name ? { name: target.name } : {}),
      ...(target.checklist ? { checklist: target.checklist } : {}),
      ...(target.document ? { document: target.document } : {}),
    };
    const attributes = { 'loopwright.turn': turn, 'loopwright.verify.attempt': attempt, 'loopwright.verify.source': target.source, ...(target.name ? { 'loopwright.verify.name': target.name } : {}) };
    try {
      const summary = `verify ${target.name ?? target.checklist ?? 'document'} · attempt ${attempt} of ${maxAttempts}`;
      const result = await withSpan(
        'loopwright.phase.verify',
        attributes,
        () =>
          this.deps.activities.verifyDocument.executeWithOptions({ summary }, [
            { target, context: this.deps.context(), attempt, ...(this.deps.model ? { model: this.deps.model } : {}), ...(this.deps.modelSettings ? { settings: this.deps.modelSettings } : {}) },
          ]),
        (r: VerifyResult) => ({ attributes: { 'loopwright.verify.passed': r.passed, 'loopwright.verify.failed': r.failed, ...(r.problem ? { 'loopwright.verify.problem': r.problem } : {}) } }),
      );
      if (result.usage) recordUsage(result.usage);
      const report = toReport(result, base);
      metricMeter.createCounter('loopwright_verify_calls', 'calls', 'Verification calls by result').add(1, { result: report.status });
      log.info('Verification finished', { status: report.status, passed: report.passed, failed: report.failed, attempt, problem: result.problem });
      return report;
    } catch (err) {
      if (isCancellation(err)) throw err;
      const reason = `the verification call failed: ${rootMessage(err)}`;
      log.warn('Verification failed to run', { error: reason });
      return { ...base, status: 'not_verified', passed: 0, failed: 0, items: [], reason };
    } finally {
      this.phase = previous === 'verify' ? 'act' : previous;
    }
  }
}

function toReport(result: VerifyResult, base: Omit<VerificationReport, 'status' | 'passed' | 'failed' | 'items'>): VerificationReport {
  const paths = { ...(result.checklist ? { checklist: result.checklist } : {}), ...(result.document ? { document: result.document } : {}) };
  if (result.problem !== undefined || result.items.length === 0) {
    return { ...base, ...paths, status: 'not_verified', passed: 0, failed: 0, items: [], reason: result.problem ?? 'the checklist has no items' };
  }
  return {
    ...base,
    ...paths,
    status: result.failed > 0 ? 'failed_verification' : 'verified',
    passed: result.passed,
    failed: result.failed,
    items: result.items.slice(0, MAX_REPORTED_ITEMS),
  };
}

function countOutcome(report: VerificationReport): void {
  metricMeter.createCounter('loopwright_verifications', 'verifications', 'Verified documents by outcome').add(1, { status: report.status, source: report.source });
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** Whether two workflow paths as written name the same file: equal, or equal after their leading `{variable}`. */
function samePath(a: string, b: string): boolean {
  if (a === b) return true;
  const tail = (p: string) => p.replace(/^\{[^}]+\}/, '').replace(/\/+/g, '/');
  const ta = tail(a);
  const tb = tail(b);
  return ta.length > 1 && (ta === tb || a.endsWith(tb) || b.endsWith(ta));
}

/**
 * Whether a saved file is the workflow's document: any save when the workflow names none; else the
 * path it names, where each `{{placeholder}}` stands for part of one file or folder name.
 */
export function matchesExpected(saved: string, expected: string | undefined): boolean {
  if (expected === undefined || expected === '') return true;
  const parts = expected.split(/\{\{[^{}]*\}\}/);
  if (parts.length === 1) return saved === expected || saved.endsWith(`/${expected.replace(/^\.?\//, '')}`);
  if (!saved.startsWith(parts[0]!) || !saved.endsWith(parts.at(-1)!)) return false;
  let at = parts[0]!.length;
  const end = saved.length - parts.at(-1)!.length;
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i]!;
    const found = i === parts.length - 1 ? end : saved.indexOf(part, at + 1);
    if (found < 0 || found > end) return false;
    // A placeholder fills part of one name, never crosses a folder.
    if (found <= at || saved.slice(at, found).includes('/')) return false;
    at = found + part.length;
  }
  return true;
}

/** The end of a turn whose document failed verification for good; undefined for any other report. */
function failedEnd(report: VerificationReport | undefined): AnswerVerdict | undefined {
  if (report?.status !== 'failed_verification') return undefined;
  const error = `The document failed verification: ${report.failed} of ${report.passed + report.failed} checklist items failed after ${report.attempts} attempts`;
  return { end: { status: 'failed_verification', error } };
}
