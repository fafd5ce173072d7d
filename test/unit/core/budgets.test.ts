/**
 * Budgets (workflows/context/budgets.ts) without a server: the turn and session token budgets and
 * the cost budget priced per model (or by `*`), the exact words a used-up budget stops with (turn
 * first, then session, then cost), a warning at `warnAt` given once and again only after a raise,
 * what `raise` moves, and what travels to the next run: `carry` for the session, `turnCarry` into
 * `startTurn` for a turn that goes on, so a continued turn neither forgets its raise nor warns twice.
 */
import { Budgets } from '../../../workflows/context/budgets';
import type { BudgetSettings } from '../../../common/session-types';
import { usage } from '../../support/workflow-fakes';

/** Budgets whose session total is what the test sets in `session.used`. */
function budgets(settings: BudgetSettings, carried?: ConstructorParameters<typeof Budgets>[2]) {
  const session = { used: 0 };
  const b = new Budgets(settings, () => session.used, carried);
  b.startTurn();
  return { b, session };
}

describe('Budgets', () => {
  test('budgets: nothing is tracked without a budget or a price; any one of them turns it on', () => {
    expect(budgets({}).b.active).toBe(false);
    expect(budgets({ warnAt: 0.5 }).b.active).toBe(false);
    expect(budgets({ turnTokens: 10 }).b.active).toBe(true);
    expect(budgets({ sessionTokens: 10 }).b.active).toBe(true);
    expect(budgets({ sessionCost: 1 }).b.active).toBe(true);
    expect(budgets({ prices: { '*': { input: 1, output: 1 } } }).b.active).toBe(true);
  });

  test("budgets: a turn budget counts the turn's calls and stops with words that say how to raise it", () => {
    const { b } = budgets({ turnTokens: 1000 });
    b.record(usage(400, 100), 'm');
    expect(b.exhausted()).toBeUndefined();
    b.record(usage(450, 50), 'm');
    expect(b.exhausted()).toEqual({
      which: 'turn tokens',
      message: 'This turn used 1000 tokens, its budget of 1000; raise it (loopwright budget <id> --turn-tokens N, or /budget turn=N in chat) and say "continue"',
    });
    // A new turn starts from nothing.
    b.startTurn();
    expect(b.exhausted()).toBeUndefined();
    expect(b.state().turnTokens).toEqual({ used: 0, limit: 1000 });
  });

  test("budgets: the session budget reads the session's own total; the turn budget is checked first", () => {
    const { b, session } = budgets({ turnTokens: 100, sessionTokens: 5000 });
    session.used = 5200;
    expect(b.exhausted()).toEqual({
      which: 'session tokens',
      message: 'The session used 5200 tokens, its budget of 5000; raise it (loopwright budget <id> --session-tokens N, or /budget session=N in chat)',
    });
    b.record(usage(100, 0), 'm');
    expect(b.exhausted()?.which).toBe('turn tokens');
  });

  test('budgets: cost is priced per million tokens by the model named, else by "*", else not at all', () => {
    const { b } = budgets({ prices: { big: { input: 10, output: 30 }, '*': { input: 1, output: 2 } } });
    b.record(usage(1_000_000, 100_000), 'big'); // 10 + 3
    expect(b.cost).toBeCloseTo(13, 10);
    b.record(usage(500_000, 250_000), 'other'); // 0.5 + 0.5
    expect(b.cost).toBeCloseTo(14, 10);
    b.record(usage(1_000_000, 0), undefined); // '' is not priced: '*'
    expect(b.cost).toBeCloseTo(15, 10);
    const unpriced = budgets({ prices: { big: { input: 10, output: 30 } } }).b;
    unpriced.record(usage(1_000_000, 1_000_000), 'small');
    expect(unpriced.cost).toBe(0);
  });

  test('budgets: a cost budget stops once reached, the figures rounded to four places', () => {
    const { b } = budgets({ sessionCost: 0.5, prices: { '*': { input: 1, output: 1 } } });
    b.record(usage(333_333, 166_667), 'm'); // 0.5 exactly
    expect(b.exhausted()).toEqual({
      which: 'session cost',
      message: 'The session cost 0.5, its budget of 0.5; raise it (loopwright budget <id> --cost X, or /budget cost=X in chat)',
    });
    const { b: small } = budgets({ sessionCost: 0.0001, prices: { '*': { input: 1, output: 1 } } });
    small.record(usage(123, 0), 'm');
    expect(small.exhausted()?.message).toMatch(/^The session cost 0\.0001, its budget of 0\.0001;/);
    expect(small.state().cost).toEqual({ used: 0.0001, limit: 0.0001 });
  });

  test('budgets: a budget warns once when it passes warnAt (default 0.8), never once used up', () => {
    const { b } = budgets({ turnTokens: 1000 });
    b.record(usage(700, 0), 'm');
    expect(b.newWarnings()).toEqual([]);
    b.record(usage(100, 0), 'm');
    expect(b.newWarnings()).toEqual(['turn token budget: 80% used (800 of 1000)']);
    b.record(usage(50, 0), 'm');
    expect(b.newWarnings()).toEqual([]);
    expect(b.state().warnings).toEqual(['turn token budget: 80% used (800 of 1000)']);
    // Passed the limit before a warning was given: the stop says it, not a warning.
    const { b: jump } = budgets({ turnTokens: 1000 });
    jump.record(usage(1200, 0), 'm');
    expect(jump.newWarnings()).toEqual([]);
    expect(jump.exhausted()?.which).toBe('turn tokens');
  });

  test("budgets: warnAt is the session's; session and cost budgets warn under their own labels", () => {
    const { b, session } = budgets({ sessionTokens: 10_000, sessionCost: 2, warnAt: 0.5, prices: { '*': { input: 1, output: 1 } } });
    session.used = 5_500;
    b.record(usage(600_000, 500_000), 'm'); // 1.1 of 2
    expect(b.newWarnings()).toEqual(['session token budget: 55% used (5500 of 10000)', 'session cost budget: 55% used (1.1 of 2)']);
    expect(b.newWarnings()).toEqual([]);
  });

  test('budgets: raise adds to the limits, clears the stop and the warnings, and lets a budget warn again', () => {
    const { b, session } = budgets({ turnTokens: 1000, sessionTokens: 2000 });
    b.record(usage(900, 0), 'm');
    expect(b.newWarnings()).toHaveLength(1);
    b.record(usage(200, 0), 'm');
    expect(b.exhausted()?.which).toBe('turn tokens');
    b.raise({ turnTokens: 500 });
    expect(b.exhausted()).toBeUndefined();
    expect(b.state()).toEqual({ turnTokens: { used: 1100, limit: 1500 }, sessionTokens: { used: 0, limit: 2000 }, cost: { used: 0 } });
    b.record(usage(150, 0), 'm');
    expect(b.newWarnings()).toEqual(['turn token budget: 83% used (1250 of 1500)']);
    session.used = 2500;
    b.raise({ sessionTokens: 1000 });
    expect(b.state().sessionTokens).toEqual({ used: 2500, limit: 3000 });
    expect(b.state().warnings).toBeUndefined();
  });

  test("budgets: turnCarry into startTurn in the next run keeps the turn's raise and its warning given", () => {
    const { b } = budgets({ turnTokens: 1000, sessionTokens: 100_000 });
    b.record(usage(850, 0), 'm');
    expect(b.newWarnings()).toHaveLength(1);
    b.raise({ turnTokens: 200, sessionTokens: 50 });
    b.record(usage(100, 0), 'm'); // 950 of 1200: under 80% of the raised limit
    expect(b.newWarnings()).toEqual([]);
    b.record(usage(20, 0), 'm'); // 970 of 1200
    expect(b.newWarnings()).toEqual(['turn token budget: 81% used (970 of 1200)']);
    const turn = b.turnCarry();
    expect(turn).toEqual({ turnTokensExtra: 200, budgetWarned: ['turn tokens'] });
    const carried = b.carry();
    expect(carried).toEqual({ sessionTokensExtra: 50, sessionCostExtra: 0, cost: 0 });

    const next = new Budgets({ turnTokens: 1000, sessionTokens: 100_000 }, () => 970, carried);
    next.startTurn(970, turn.turnTokensExtra, turn.budgetWarned);
    expect(next.state()).toEqual({ turnTokens: { used: 970, limit: 1200 }, sessionTokens: { used: 970, limit: 100_050 }, cost: { used: 0 } });
    next.record(usage(10, 0), 'm');
    expect(next.newWarnings()).toEqual([]);
    next.record(usage(220, 0), 'm');
    expect(next.exhausted()?.message).toMatch(/^This turn used 1200 tokens, its budget of 1200;/);
  });

  test("budgets: a new turn forgets the last turn's warning and raise but not the session's", () => {
    const { b, session } = budgets({ turnTokens: 1000, sessionTokens: 1000 });
    session.used = 850;
    b.record(usage(850, 0), 'm');
    expect(b.newWarnings()).toEqual(['turn token budget: 85% used (850 of 1000)', 'session token budget: 85% used (850 of 1000)']);
    b.raise({ turnTokens: 100 });
    expect(b.carry().warned).toEqual(['session tokens']);
    b.startTurn();
    expect(b.turnCarry()).toEqual({});
    b.record(usage(900, 0), 'm');
    expect(b.newWarnings()).toEqual(['turn token budget: 90% used (900 of 1000)']);
    // The session's warning carries to the next run, which does not give it again.
    const next = new Budgets({ turnTokens: 1000, sessionTokens: 1000 }, () => 900, b.carry());
    next.startTurn();
    expect(next.newWarnings()).toEqual([]);
  });
});
