/**
 * An eval session's replay of its recording, in workflow code: the recorded turn it is in (the
 * `loadEvalTurn` activity's answer), a turn extension that answers a read-only call from the
 * recording when its tool and arguments match a recorded call of the turn not used yet (no
 * activity runs), lets matching writes run for real (in the scratch copy the eval made) and
 * handles the rest by the session's divergence rule, and approvals decided as recorded or by rule
 * instead of waiting for a person. Everything is decided from the recorded turn and the call, so
 * replay of the eval session's own history is deterministic.
 *
 * A turn handed over to a new run (continue-as-new) carries which recorded calls it used and its
 * counts (`carry`), so the resumed turn goes on where it stopped.
 */
import { log } from '@temporalio/workflow';
import type { ToolCall, ToolResult } from '../../common/messages';
import type { SessionTool } from '../../common/offered-tools';
import { toolSpec } from '../../common/tools';
import { argumentsKey, asRecorded, inScratch } from '../../common/eval/canonical-json';
import type { EvalTurn, ScriptCall } from '../../common/eval/eval-script';
import type { DivergedCall, ReplayCarry, ReplayCounts } from '../../common/eval/recording';
import type { EvalSettings } from '../../common/settings/session-settings';
import type { TurnExtension } from '../turn/extensions';
import type { ApprovalDecision, TurnApprovals } from '../turn/turn';

/** Diverged calls a turn's result lists at most (the count goes on). */
const MAX_DIVERGED_LISTED = 20;

export class EvalReplay {
  private turn: EvalTurn | undefined;
  private usedCalls = new Set<number>();
  private usedApprovals = new Set<number>();
  /** Results decided for calls this extension runs, by call id. */
  private readonly answers = new Map<string, ToolResult>();
  private counts: ReplayCounts = emptyCounts();

  constructor(
    private readonly settings: EvalSettings,
    /** The tools the session offers (for `access`). */
    private readonly tools: () => readonly SessionTool[],
  ) {}

  /** A recorded turn begins (its calls and approvals all unused), or is resumed with what the run before carried. */
  startTurn(turn: EvalTurn | null, carried?: ReplayCarry): void {
    this.turn = turn ?? undefined;
    this.usedCalls = new Set(carried?.usedCalls ?? []);
    this.usedApprovals = new Set(carried?.usedApprovals ?? []);
    this.answers.clear();
    this.counts = carried ? { ...carried.counts, diverged: [...carried.counts.diverged] } : emptyCounts();
  }

  /** What a turn handed over mid-way carries to the next run. */
  carry(): ReplayCarry {
    return { counts: { ...this.counts, diverged: [...this.counts.diverged] }, usedCalls: [...this.usedCalls], usedApprovals: [...this.usedApprovals] };
  }

  /** The turn extension (listed last, so delegation keeps its own calls). */
  extension(): TurnExtension {
    return {
      name: 'eval-replay',
      runsCall: (call) => this.decide(call),
      runCall: (call) => {
        const result = this.answers.get(call.id) ?? { success: false, error: 'The eval lost the recorded answer of this call' };
        this.answers.delete(call.id);
        return Promise.resolve(result);
      },
      report: () => ({ replay: { ...this.counts, diverged: [...this.counts.diverged] } }),
    };
  }

  /** The session's approvals, with the wait for a person replaced by the recorded decision (or the eval's rule). */
  approvals(base: TurnApprovals): TurnApprovals {
    return {
      needsApproval: (call) => base.needsApproval(call),
      ...(base.refused ? { refused: (call: ToolCall) => base.refused!(call) } : {}),
      requestApproval: (call) => Promise.resolve(this.decideApproval(call)),
    };
  }

  /** Whether this extension answers `call` (from the recording, or by the divergence rule); a matching write runs for real. */
  private decide(call: ToolCall): boolean {
    const name = call.function.name;
    const spec = toolSpec(name, this.tools());
    // An unknown tool gets the engine's own answer.
    if (!spec) return false;
    const key = argumentsKey(asRecorded(call.function.arguments, this.settings.paths));
    const recorded = this.turn?.calls ?? [];
    const index = this.unused(recorded, (c) => c.tool === name && c.key === key);
    if (index >= 0) {
      this.usedCalls.add(index);
      const match = recorded[index]!;
      if (spec.access === 'read' && match.result !== undefined) {
        this.answers.set(call.id, inScratch(match.result, this.settings.paths));
        this.counts.answered += 1;
        return true;
      }
      this.counts.ran += 1;
      return false;
    }
    const rule = this.settings.onDivergence ?? 'run';
    if (this.counts.diverged.length < MAX_DIVERGED_LISTED) {
      const text = call.function.arguments;
      this.counts.diverged.push({ tool: name, arguments: text.length > 200 ? `${text.slice(0, 200)}…` : text, action: rule } satisfies DivergedCall);
    }
    log.info('Eval: a call differs from the recording', { tool: name, rule });
    if (rule === 'run') return false;
    if (rule === 'fail') {
      this.answers.set(call.id, {
        success: false,
        diverged: true,
        error: `[Loopwright eval] ${name} with these arguments is not in the recording of this turn, and the eval answers such calls with an error`,
      });
      return true;
    }
    // A stub: the result of the first unused recorded call of the same tool, else a plain success.
    const same = this.unused(recorded, (c) => c.tool === name && c.result !== undefined);
    if (same >= 0) this.usedCalls.add(same);
    this.answers.set(
      call.id,
      same >= 0 ? inScratch(recorded[same]!.result!, this.settings.paths) : { success: true, stubbed: true, note: '[Loopwright eval] a stub: this call is not in the recording of this turn' },
    );
    return true;
  }

  private decideApproval(call: ToolCall): ApprovalDecision {
    const name = call.function.name;
    const key = argumentsKey(asRecorded(call.function.arguments, this.settings.paths));
    const recorded = this.turn?.approvals ?? [];
    const index = recorded.findIndex((a, i) => !this.usedApprovals.has(i) && a.tool === name && a.key === key);
    if (index >= 0) {
      this.usedApprovals.add(index);
      this.counts.approvalsAsRecorded += 1;
      const { approved, reason } = recorded[index]!;
      return { approved, ...(reason !== undefined ? { reason } : {}) };
    }
    this.counts.approvalsByRule += 1;
    const approved = (this.settings.approvals ?? 'approve') === 'approve';
    return { approved, ...(approved ? {} : { reason: 'no recorded decision matched this call, and the eval denies such calls' }) };
  }

  private unused(calls: readonly ScriptCall[], fits: (c: ScriptCall) => boolean): number {
    return calls.findIndex((c, i) => !this.usedCalls.has(i) && fits(c));
  }
}

function emptyCounts(): ReplayCounts {
  return { answered: 0, ran: 0, diverged: [], approvalsAsRecorded: 0, approvalsByRule: 0 };
}
