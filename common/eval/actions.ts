/**
 * How a report names a person's recorded action (interrupt, extend, budget, compact) that an eval
 * did not replay: its turn, its point in the turn, and why.
 */
import type { ActionNotReplayed } from './recording';

/** `turn 2: the interrupt after 3 model replies (the candidate's turn ended after 2 that called tools)`. */
export function actionText(a: ActionNotReplayed & { turn: number }): string {
  const where = a.at === 'before' ? 'before the turn' : `after ${a.at} model repl${a.at === 1 ? 'y' : 'ies'}`;
  return `turn ${a.turn}: the ${a.kind} ${where} (${a.reason})`;
}
