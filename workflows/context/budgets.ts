/**
 * Token and cost budgets, enforced in the workflow from recorded usage: a warning to the model and
 * the user once a budget passes its warning share, and the turn ends `budget_exceeded` before a
 * model call once one is used up. Budgets are raised with the `budget` update.
 */
import { DEFAULT_BUDGET_WARN_AT } from '../../common/defaults';
import type { TokenUsage } from '../../common/messages';
import { callCost, usesCache } from '../../common/model-cost';
import type { BudgetChange, BudgetSettings, BudgetState, ContinuedSession } from '../../common/session-types';

/** What the budgets carry into the session's next run. */
export type CarriedBudget = NonNullable<ContinuedSession['budget']>;

/** A budget that is used up, with the words for the user. */
export interface BudgetStop {
  which: 'turn tokens' | 'session tokens' | 'session cost';
  message: string;
}

/** The budgets of one session. */
export class Budgets {
  private turnUsed = 0;
  private turnExtra = 0;
  private sessionTokensExtra: number;
  private sessionCostExtra: number;
  cost: number;
  private readonly warnAt: number;
  /** Budgets warned about (session ones for the session, turn ones for the running turn). */
  private warned: Set<string>;
  /** Warnings for the user, shown by `state`. */
  warnings: string[] = [];

  /**
   * `sessionUsed`: session tokens used, as the session's usage counts them. `priceCache`: whether
   * cached prompt tokens are priced apart (asked only of a call that reports some; the session
   * answers with a patch marker, so histories from before keep their costs).
   */
  constructor(
    private readonly settings: BudgetSettings,
    private readonly sessionUsed: () => number,
    carried?: CarriedBudget,
    private readonly priceCache: () => boolean = () => true,
  ) {
    this.sessionTokensExtra = carried?.sessionTokensExtra ?? 0;
    this.sessionCostExtra = carried?.sessionCostExtra ?? 0;
    this.cost = carried?.cost ?? 0;
    this.warnAt = settings.warnAt ?? DEFAULT_BUDGET_WARN_AT;
    this.warned = new Set(carried?.warned ?? []);
  }

  /** True when any budget or price is set (else nothing is tracked or shown). */
  get active(): boolean {
    const s = this.settings;
    return s.turnTokens !== undefined || s.sessionTokens !== undefined || s.sessionCost !== undefined || s.prices !== undefined;
  }

  /** A turn starts (or resumes in a new run with what it used so far). */
  startTurn(used = 0, extra = 0, warned: string[] = []): void {
    this.turnUsed = used;
    this.turnExtra = extra;
    for (const key of [...this.warned]) if (key.startsWith('turn')) this.warned.delete(key);
    for (const key of warned) this.warned.add(key);
  }

  /** Count one call's usage (the session's own total is counted by the session). */
  record(usage: TokenUsage, model: string | undefined): void {
    this.turnUsed += usage.totalTokens;
    const price = this.settings.prices ? (this.settings.prices[model ?? ''] ?? this.settings.prices['*']) : undefined;
    if (price) this.cost += callCost(usage, price, usesCache(usage) && this.priceCache());
  }

  /** Limits now, with what was raised. */
  private limits(): { turn?: number; session?: number; cost?: number } {
    const s = this.settings;
    return {
      ...(s.turnTokens !== undefined ? { turn: s.turnTokens + this.turnExtra } : {}),
      ...(s.sessionTokens !== undefined ? { session: s.sessionTokens + this.sessionTokensExtra } : {}),
      ...(s.sessionCost !== undefined ? { cost: s.sessionCost + this.sessionCostExtra } : {}),
    };
  }

  /** The budget that is used up, if one is. */
  exhausted(): BudgetStop | undefined {
    const l = this.limits();
    if (l.turn !== undefined && this.turnUsed >= l.turn) {
      return {
        which: 'turn tokens',
        message: `This turn used ${this.turnUsed} tokens, its budget of ${l.turn}; raise it (loopwright budget <id> --turn-tokens N, or /budget turn=N in chat) and say "continue"`,
      };
    }
    if (l.session !== undefined && this.sessionUsed() >= l.session) {
      return {
        which: 'session tokens',
        message: `The session used ${this.sessionUsed()} tokens, its budget of ${l.session}; raise it (loopwright budget <id> --session-tokens N, or /budget session=N in chat)`,
      };
    }
    if (l.cost !== undefined && this.cost >= l.cost) {
      return { which: 'session cost', message: `The session cost ${round(this.cost)}, its budget of ${round(l.cost)}; raise it (loopwright budget <id> --cost X, or /budget cost=X in chat)` };
    }
    return undefined;
  }

  /** Budgets that just passed their warning share, as notices for the model (each once). */
  newWarnings(): string[] {
    const l = this.limits();
    const out: string[] = [];
    const check = (key: string, used: number, limit: number | undefined, label: string): void => {
      if (limit === undefined || limit <= 0 || this.warned.has(key) || used < this.warnAt * limit || used >= limit) return;
      this.warned.add(key);
      const text = `${label}: ${Math.round((100 * used) / limit)}% used (${round(used)} of ${round(limit)})`;
      this.warnings = [...this.warnings.filter((w) => !w.startsWith(label)), text];
      out.push(text);
    };
    check('turn tokens', this.turnUsed, l.turn, 'turn token budget');
    check('session tokens', this.sessionUsed(), l.session, 'session token budget');
    check('session cost', this.cost, l.cost, 'session cost budget');
    return out;
  }

  /** Raise budgets (the `budget` update). */
  raise(change: BudgetChange): void {
    this.turnExtra += change.turnTokens ?? 0;
    this.sessionTokensExtra += change.sessionTokens ?? 0;
    this.sessionCostExtra += change.sessionCost ?? 0;
    // A raised budget may warn again once it nears its new limit.
    if (change.turnTokens) this.warned.delete('turn tokens');
    if (change.sessionTokens) this.warned.delete('session tokens');
    if (change.sessionCost) this.warned.delete('session cost');
    this.warnings = [];
  }

  /** The running turn's state, for a turn that goes on in the next run. */
  turnCarry(): { turnTokensExtra?: number; budgetWarned?: string[] } {
    const warned = [...this.warned].filter((k) => k.startsWith('turn'));
    return { ...(this.turnExtra ? { turnTokensExtra: this.turnExtra } : {}), ...(warned.length ? { budgetWarned: warned } : {}) };
  }

  carry(): CarriedBudget {
    const warned = [...this.warned].filter((k) => !k.startsWith('turn'));
    return { sessionTokensExtra: this.sessionTokensExtra, sessionCostExtra: this.sessionCostExtra, cost: this.cost, ...(warned.length ? { warned } : {}) };
  }

  state(): BudgetState {
    const l = this.limits();
    return {
      turnTokens: { used: this.turnUsed, ...(l.turn !== undefined ? { limit: l.turn } : {}) },
      sessionTokens: { used: this.sessionUsed(), ...(l.session !== undefined ? { limit: l.session } : {}) },
      cost: { used: round(this.cost), ...(l.cost !== undefined ? { limit: l.cost } : {}) },
      ...(this.warnings.length ? { warnings: this.warnings } : {}),
    };
  }
}

function round(n: number): number {
  return Math.round(n * 10_000) / 10_000;
}
