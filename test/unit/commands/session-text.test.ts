/**
 * The words of compactions, the context line, budgets and the turn statuses that are not plain
 * failures, as run, send, status, compact, budget and chat print them (pure functions).
 */
import { CHAT_HELP, newBudgetWarnings, parseBudgetArgs, turnEndLines } from '../../../cli/commands/chat-text';
import {
  budgetLines,
  budgetSummary,
  contextLine,
  formatCompaction,
  formatContinuations,
  formatCost,
  stateDetailLines,
  turnExitCode,
  turnFailureType,
  turnNotes,
  turnStatusMessage,
} from '../../../cli/commands/session-text';
import { EXIT } from '../../../cli/exit-codes';
import { BUDGET_EXCEEDED, MAX_ITERATIONS_EXCEEDED, REPLY_REFUSED, REPLY_TRUNCATED, TURN_FAILED } from '../../../common/failure-types';
import type { BudgetState, CompactionRecord, ContextState, TurnStatus } from '../../../common/session-types';

const RECORD: CompactionRecord = { turn: 4, reason: 'threshold', beforeTokens: 96120, afterTokens: 31004, pruned: 14, summarized: 40, summaryCallTokens: 900, durationMs: 1200 };

describe('compactions', () => {
  test('a compaction: tokens before and after, results pruned, messages summarised', () => {
    expect(formatCompaction(RECORD)).toBe('context compacted: 96,120 → 31,004 tokens, 14 tool results pruned, 40 messages summarised');
  });

  test('parts that did nothing are left out; one of a kind is singular', () => {
    expect(formatCompaction({ ...RECORD, pruned: 1, summarized: 0 })).toBe('context compacted: 96,120 → 31,004 tokens, 1 tool result pruned');
    expect(formatCompaction({ ...RECORD, pruned: 0, summarized: 1 })).toBe('context compacted: 96,120 → 31,004 tokens, 1 message summarised');
  });

  test('a compaction forced by the server refusing the prompt says so', () => {
    expect(formatCompaction({ ...RECORD, reason: 'context_length' })).toMatch(/summarised \(the server refused the prompt as too long\)$/);
    expect(formatCompaction({ ...RECORD, reason: 'requested' })).not.toContain('refused');
  });

  test('a compaction made early because the prompt cache had expired says so', () => {
    expect(formatCompaction({ ...RECORD, reason: 'cache_cold', cachedTokensLost: 0 })).toBe(
      'context compacted: 96,120 → 31,004 tokens, 14 tool results pruned, 40 messages summarised, 0 cached tokens lost (early, while the prompt cache had expired)',
    );
  });

  test('the cached prompt tokens a compaction cost, when the provider reported its cache', () => {
    expect(formatCompaction({ ...RECORD, cachedTokensLost: 12_500 })).toBe('context compacted: 96,120 → 31,004 tokens, 14 tool results pruned, 40 messages summarised, 12,500 cached tokens lost');
  });

  test('continuations', () => {
    expect(formatContinuations(1)).toBe('the reply reached the output limit and was continued once');
    expect(formatContinuations(3)).toBe('the reply reached the output limit and was continued 3 times');
  });
});

describe('the context line', () => {
  const context: ContextState = { window: 32768, windowSource: 'server: llama.cpp /props n_ctx', promptTokens: 31004, viewMessages: 12, compactions: 3, lastCompaction: RECORD };

  test('prompt size, window and where it came from, compactions and the last one', () => {
    expect(contextLine(context)).toBe('31,004 / 32,768 tokens (window from server: llama.cpp /props n_ctx), 3 compactions, last: turn 4, 96,120 → 31,004 tokens (threshold)');
  });

  test("the last compaction's cost in cached tokens", () => {
    expect(contextLine({ ...context, lastCompaction: { ...RECORD, cachedTokensLost: 1 } })).toMatch(/, last: turn 4, 96,120 → 31,004 tokens \(threshold; 1 cached token lost\)$/);
  });

  test('each source of the window is worded; no compaction yet', () => {
    const { lastCompaction: _last, ...fresh } = context;
    expect(contextLine({ ...fresh, compactions: 0, windowSource: 'session' })).toBe('31,004 / 32,768 tokens (window set for the session), 0 compactions');
    expect(contextLine({ ...fresh, compactions: 1, windowSource: 'default' })).toBe('31,004 / 32,768 tokens (default window), 1 compaction');
    expect(contextLine({ ...fresh, windowSource: 'server error' })).toContain('(window learnt from a server error)');
  });
});

describe('budgets', () => {
  const budget: BudgetState = {
    turnTokens: { used: 1234, limit: 10000 },
    sessionTokens: { used: 45000 },
    cost: { used: 0.04123, limit: 5 },
    warnings: ['session tokens 82%'],
  };

  test('used / limit with the share, "no limit" when none, cost with four decimals, then the warnings', () => {
    expect(budgetLines(budget)).toEqual(['turn tokens:    1,234 / 10,000 (12%)', 'session tokens: 45,000 (no limit)', 'cost:           0.0412 / 5 (0%)', 'warning:        session tokens 82%']);
  });

  test('the list line names only the budgets with a limit (and the cost once there is one)', () => {
    expect(budgetSummary(budget)).toBe('turn tokens 1,234 / 10,000 (12%), cost 0.0412 / 5 (0%)');
    expect(budgetSummary({ turnTokens: { used: 5 }, sessionTokens: { used: 5 }, cost: { used: 0 } })).toBe('');
  });

  test('a budget passed shows over 100%', () => {
    expect(budgetLines({ ...budget, turnTokens: { used: 10500, limit: 10000 }, warnings: [] })[0]).toBe('turn tokens:    10,500 / 10,000 (105%)');
  });

  test('costs', () => {
    expect(formatCost(0)).toBe('0');
    expect(formatCost(1.5)).toBe('1.5');
    expect(formatCost(0.000123456)).toBe('0.0001');
    expect(formatCost(123.456)).toBe('123.46');
  });

  test('status: a context line and budget lines under one label, only when the state has them', () => {
    const context: ContextState = { window: 8192, windowSource: 'session', promptTokens: 900, viewMessages: 4, compactions: 0 };
    expect(stateDetailLines({})).toEqual([]);
    expect(stateDetailLines({ context })).toEqual(['context:    900 / 8,192 tokens (window set for the session), 0 compactions']);
    expect(stateDetailLines({ budget: { ...budget, warnings: undefined } })).toEqual([
      'budget:     turn tokens:    1,234 / 10,000 (12%)',
      '            session tokens: 45,000 (no limit)',
      '            cost:           0.0412 / 5 (0%)',
    ]);
  });
});

describe('turn statuses', () => {
  test.each([
    ['truncated', /^The reply was cut off at the output limit; raise --max-output-tokens or say "continue"$/],
    ['content_filtered', /^The model server's content filter stopped the reply; /],
    ['refused', /^The model refused to answer; /],
    ['budget_exceeded', /^A token or cost budget was reached; the reply is the partial result\. Raise the budget with loopwright budget s-1 --turn-tokens N/],
  ] as const)('%s: a plain sentence saying what to do', (status, expected) => {
    expect(turnStatusMessage({ status }, { workflowId: 's-1' })).toMatch(expected);
  });

  test('the error and the continuations go in parentheses; chat is told its own command', () => {
    expect(turnStatusMessage({ status: 'truncated', error: 'finish_reason length at 8192 tokens', continuations: 2 })).toBe(
      'The reply was cut off at the output limit (finish_reason length at 8192 tokens; continued 2 times); raise --max-output-tokens or say "continue"',
    );
    expect(turnStatusMessage({ status: 'budget_exceeded' }, { chat: true })).toContain('/budget turn=N session=N cost=X');
  });

  test('other statuses have no sentence of their own', () => {
    for (const status of ['completed', 'failed', 'max_iterations', 'interrupted', 'stuck', 'waiting_for_user'] as TurnStatus[]) expect(turnStatusMessage({ status })).toBeUndefined();
  });

  test("the new statuses exit 1 even when the result says success; the failure types match a one-shot session's", () => {
    for (const status of ['truncated', 'content_filtered', 'refused', 'budget_exceeded'] as TurnStatus[]) expect(turnExitCode({ success: true, status })).toBe(EXIT.FAILED);
    expect(turnExitCode({ success: true, status: 'completed' })).toBe(EXIT.OK);
    expect(turnExitCode({ success: true, status: 'waiting_for_user' })).toBe(EXIT.OK);
    expect(turnExitCode({ success: false, status: 'failed' })).toBe(EXIT.FAILED);
    expect(turnFailureType('truncated')).toBe(REPLY_TRUNCATED);
    expect(turnFailureType('budget_exceeded')).toBe(BUDGET_EXCEEDED);
    expect(turnFailureType('refused')).toBe(REPLY_REFUSED);
    expect(turnFailureType('content_filtered')).toBe(REPLY_REFUSED);
    expect(turnFailureType('max_iterations')).toBe(MAX_ITERATIONS_EXCEEDED);
    expect(turnFailureType('failed')).toBe(TURN_FAILED);
  });

  test('the notes below a reply: compactions, continuations, mended model replies', () => {
    expect(turnNotes({})).toEqual([]);
    expect(turnNotes({ compactions: [RECORD], continuations: 1, modelWarnings: ['usage was missing'] })).toEqual([
      'context compacted: 96,120 → 31,004 tokens, 14 tool results pruned, 40 messages summarised',
      'the reply reached the output limit and was continued once',
      'model server: usage was missing',
    ]);
  });
});

describe('chat', () => {
  test('the help lists /compact and /budget with its arguments', () => {
    expect(CHAT_HELP).toMatch(/\n {2}\/compact +\S/);
    expect(CHAT_HELP).toContain('/budget [turn=N] [session=N] [cost=X]');
  });

  test('/budget arguments: amounts by budget; none shows; a bad one is said', () => {
    expect(parseBudgetArgs([])).toEqual({});
    expect(parseBudgetArgs(['turn=5000', 'session=100000', 'cost=2.5'])).toEqual({ turnTokens: 5000, sessionTokens: 100000, sessionCost: 2.5 });
    expect(parseBudgetArgs(['turns=5'])).toMatch(/^turns=5: usage: \/budget/);
    expect(parseBudgetArgs(['turn=1.5'])).toBe('turn=1.5: expected a positive whole number of tokens');
    expect(parseBudgetArgs(['cost=0'])).toBe('cost=0: expected a cost > 0');
  });

  test('the lines after a reply: compaction and continuation lines, then the status in plain words', () => {
    expect(turnEndLines({ status: 'completed', compactions: [RECORD], continuations: 2 })).toEqual([
      '  (context compacted: 96,120 → 31,004 tokens, 14 tool results pruned, 40 messages summarised)',
      '  (the reply reached the output limit and was continued 2 times)',
    ]);
    expect(turnEndLines({ status: 'truncated' })).toEqual(['  The reply was cut off at the output limit; raise --max-output-tokens or say "continue"']);
    expect(turnEndLines({ status: 'stuck', error: 'read_file failed 3 times' })).toEqual(['  (turn stuck: read_file failed 3 times)']);
    expect(turnEndLines({ status: 'waiting_for_user' })).toEqual([]);
  });

  test('budget warnings are shown once per budget, whatever the share has grown to', () => {
    const shown = new Set<string>();
    expect(newBudgetWarnings(['session tokens 82%'], shown)).toEqual(['  ! budget: session tokens 82%']);
    expect(newBudgetWarnings(['session tokens 91%', 'turn tokens 80%'], shown)).toEqual(['  ! budget: turn tokens 80%']);
    expect(newBudgetWarnings(undefined, shown)).toEqual([]);
  });
});
