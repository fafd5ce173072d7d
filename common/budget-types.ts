/** A session's token and cost budgets: what the user sets, and what the `state` query shows of them. */

/** Price of a model, in the user's currency per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
}

/** Budgets of a session; any left out is unlimited. */
export interface BudgetSettings {
  /** Prompt plus completion tokens one turn may use. */
  turnTokens?: number;
  /** Prompt plus completion tokens the whole session may use. */
  sessionTokens?: number;
  /** Cost the session may reach, priced by `prices`. */
  sessionCost?: number;
  /** Price per model name (`*` for any other); the cost budget needs the models used to be priced. */
  prices?: Record<string, ModelPrice>;
  /** Share of a budget at which the model and the user are warned (default 0.8). */
  warnAt?: number;
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
