/** A session's token and cost budgets: what the user sets, and what the `state` query shows of them. */

// Declared in the settings table (common/settings/session-settings.ts), with their doc text.
export type { BudgetSettings } from './settings/session-settings';

/** Price of a model, in the user's currency per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  /** A prompt token read from the provider's cache (default: a tenth of `input`). */
  cacheRead?: number;
  /** A prompt token written to the provider's cache (default: 1.25 times `input`). */
  cacheWrite?: number;
}

/** How much of one budget is used. */
export interface BudgetUse {
  used: number;
  limit?: number;
}

/** The `state` query's view of the budgets. */
export interface BudgetState {
  turnTokens: BudgetUse;
  sessionTokens: BudgetUse;
  /** Cost so far (0 when no prices are set). */
  cost: BudgetUse;
  /** Budgets passed their warning share (e.g. `session tokens 82%`). */
  warnings?: string[];
}

/** Raise budgets by these amounts (the `budget` update). */
export interface BudgetChange {
  turnTokens?: number;
  sessionTokens?: number;
  sessionCost?: number;
}
