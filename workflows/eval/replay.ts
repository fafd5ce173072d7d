/**
 * An eval session's replay of its recording, in workflow code: the recorded turn it is in (the
 * `loadEvalTurn` activity's answer), a turn extension that answers a read-only call from the
 * recording when its tool and arguments match a recorded call of the turn not used yet (no
 * activity runs), lets matching writes run for real (in the scratch copy the eval made) and
 * handles the rest by the session's divergence rule, and approvals decided as recorded or by rule
 * instead of waiting for a person. What a person did during the turn (interrupt, extend, budget)
 * is done again at the same point, after as many model replies, and what they did while the session
 * waited before it (budget, compact) before the turn starts; an action whose point the candidate never
 * reaches is reported as not replayed. Everything is decided from the recorded turn and the call, so
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
import type { ActionNotReplayed, DivergedCall, RecordedAction, ReplayCarry, ReplayCounts } from '../../common/eval/recording';
import type { BudgetChange } from '../../common/budget-types';
import type { EvalSettings } from '../../common/settings/session-settings';
import type { TurnExtension } from '../turn/extensions';
import type { ApprovalDecision, TurnApprovals } from '../turn/turn';

/** Diverged calls a turn's result lists at most (the count goes on). */
const MAX_DIVERGED_LISTED = 20;

/** What the session lets its replay do: a person's actions, done again at the recorded point. */
export interface ReplayControls {
  /** Cancel the running turn, as the `interrupt` signal does. */
  interrupt(): void;
  /** Raise the running turn's limit, as the `extend` update does. */
  extend(n: number | null | undefined): void;
  /** Raise the budgets, as the `budget` update does; false when the session has none. */
  raiseBudget(change: BudgetChange): boolean;
}

export class EvalReplay {
  private turn: EvalTurn | undefined;
  private usedCalls = new Set<number>();
  private usedApprovals = new Set<number>();
  /** Results decided for calls this extension runs, by call id. */
  private readonly answers = new Map<string, ToolResult>();
  private counts: ReplayCounts = emptyCounts();
  /** Model replies of the turn whose tool results are in (where a recorded action's point is counted). */
  private replies = 0;
  private usedActions = new Set<number>();

  constructor(
    private readonly settings: EvalSettings,
    /** The tools the session offers (for `access`). */
    private readonly tools: () => readonly SessionTool[],
    private readonly controls?: ReplayControls,
  ) {}

  /** A recorded turn begins (its calls and approvals all unused), or is resumed with what the run before carried. */
  startTurn(turn: EvalTurn | null, carried?: ReplayCarry): void {
    this.turn = turn ?? undefined;
    this.usedCalls = new Set(carried?.usedCalls ?? []);
    this.usedApprovals = new Set(carried?.usedApprovals ?? []);
    this.answers.clear();
    this.counts = carried ? { ...carried.counts, diverged: [...carried.counts.diverged] } : emptyCounts();
    this.replies = carried?.replies ?? 0;
    this.usedActions = new Set(carried?.usedActions ?? []);
  }

  /** What a turn handed over mid-way carries to the next run. */
  carry(): ReplayCarry {
    return {
      counts: copyCounts(this.counts),
      usedCalls: [...this.usedCalls],
      usedApprovals: [...this.usedApprovals],
      ...(this.replies > 0 ? { replies: this.replies } : {}),
      ...(this.usedActions.size > 0 ? { usedActions: [...this.usedActions] } : {}),
    };
  }

  /** The recorded actions taken while the session waited before this turn (budget, compact), for the session to do now (then `settle` each). */
  beforeTurn(): { index: number; action: RecordedAction }[] {
    const actions = this.turn?.actions ?? [];
    return actions.flatMap((action, index) => (action.at === 'before' && !this.usedActions.has(index) ? [{ index, action }] : []));
  }

  /** A `before` action was done again, or could not be (`problem`). */
  settle(index: number, problem?: string): void {
    const action = this.turn?.actions?.[index];
    if (!action || this.usedActions.has(index)) return;
    this.usedActions.add(index);
    if (problem === undefined) this.counts.actionsReplayed = (this.counts.actionsReplayed ?? 0) + 1;
    else this.notReplayed(action, problem);
  }

  /** The turn extension (listed last, so delegation keeps its own calls). */
  extension(): TurnExtension {
    return {
      name: 'eval-replay',
      onTurnStart: () => this.actAt(0),
      onToolResults: () => {
        this.replies += 1;
        this.actAt(this.replies);
      },
      runsCall: (call) => this.decide(call),
      runCall: (call) => {
        const result = this.answers.get(call.id) ?? { success: false, error: 'The eval lost the recorded answer of this call' };
        this.answers.delete(call.id);
        return Promise.resolve(result);
      },
      report: () => ({ replay: this.finalCounts() }),
    };
  }

  /** Do again the recorded actions that came after `replies` model replies of the turn. */
  private actAt(replies: number): void {
    const actions = this.turn?.actions ?? [];
    actions.forEach((action, index) => {
      if (action.at !== replies || this.usedActions.has(index)) return;
      this.usedActions.add(index);
      const problem = this.act(action);
      if (problem === undefined) {
        this.counts.actionsReplayed = (this.counts.actionsReplayed ?? 0) + 1;
        log.info('Eval: a recorded action done again', { kind: action.kind, at: replies });
      } else this.notReplayed(action, problem);
    });
  }

  private act(action: RecordedAction): string | undefined {
    const { controls } = this;
    if (!controls) return 'this session cannot replay actions';
    switch (action.kind) {
      case 'interrupt':
        controls.interrupt();
        return undefined;
      case 'extend':
        controls.extend(action.n);
        return undefined;
      case 'budget':
        return action.change && controls.raiseBudget(action.change) ? undefined : 'the candidate session has no budgets to raise';
      case 'compact':
        return 'a compaction cannot run while a turn runs';
    }
  }

  private notReplayed(action: RecordedAction, reason: string): void {
    (this.counts.actionsNotReplayed ??= []).push({ kind: action.kind, at: action.at, reason } satisfies ActionNotReplayed);
  }

  /** The turn's counts, with the recorded actions whose point the candidate's turn never reached. */
  private finalCounts(): ReplayCounts {
    const counts = copyCounts(this.counts);
    (this.turn?.actions ?? []).forEach((action, index) => {
      if (this.usedActions.has(index)) return;
      const reason =
        action.at === 'before'
          ? 'it came before the turn, which the session did not replay'
          : `the candidate's turn ended after ${this.replies} model repl${this.replies === 1 ? 'y' : 'ies'} that called tools`;
      (counts.actionsNotReplayed ??= []).push({ kind: action.kind, at: action.at, reason });
    });
    return counts;
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

function copyCounts(counts: ReplayCounts): ReplayCounts {
  return { ...counts, diverged: [...counts.diverged], ...(counts.actionsNotReplayed ? { actionsNotReplayed: [...counts.actionsNotReplayed] } : {}) };
}

function emptyCounts(): ReplayCounts {
  return { answered: 0, ran: 0, diverged: [], approvalsAsRecorded: 0, approvalsByRule: 0 };
}
