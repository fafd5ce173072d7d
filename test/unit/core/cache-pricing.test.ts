/**
 * Cached prompt tokens priced apart (common/model-cost.ts) in the session's cost budget: reads at a
 * tenth of the input price and writes at 1.25 times unless the price names its own, usage without
 * cache counts priced as before, a run recorded before the patch (priceCache false) priced as it
 * was, cache counts kept in usage sums, and the prices setting taking the cache prices.
 */
import { price } from '../../../cli/commands/option-values';
import { callCost } from '../../../common/model-cost';
import { SESSION_SETTINGS } from '../../../common/settings/session-settings';
import { Budgets } from '../../../workflows/context/budgets';
import { addUsage } from '../../../workflows/turn/usage';

const CACHED = { promptTokens: 1_000_000, completionTokens: 100_000, totalTokens: 1_100_000, cacheReadTokens: 800_000, cacheWriteTokens: 100_000 };

test('cache pricing: reads and writes at their prices, the rest of the prompt at the input price', () => {
  // 100k uncached x 3 + 800k x 0.3 + 100k x 3.75 + 100k x 15, per million.
  expect(callCost(CACHED, { input: 3, output: 15 })).toBeCloseTo(0.3 + 0.24 + 0.375 + 1.5, 10);
  expect(callCost(CACHED, { input: 3, output: 15, cacheRead: 0, cacheWrite: 3 })).toBeCloseTo(0.3 + 0 + 0.3 + 1.5, 10);
  expect(callCost({ promptTokens: 1_000_000, completionTokens: 0, totalTokens: 1_000_000 }, { input: 3, output: 15 })).toBe(3);
  expect(callCost(CACHED, { input: 3, output: 15 }, false)).toBe(3 + 1.5);
});

test('cache pricing: the budget prices cached tokens apart only where the run says so (a patch marker in the session)', () => {
  const priced = new Budgets(
    { prices: { '*': { input: 3, output: 15 } } },
    () => 0,
    undefined,
    () => true,
  );
  priced.record(CACHED, 'claude-test-1');
  expect(priced.cost).toBeCloseTo(2.415, 10);
  const asked: boolean[] = [];
  const before = new Budgets(
    { prices: { '*': { input: 3, output: 15 } } },
    () => 0,
    undefined,
    () => (asked.push(false), false),
  );
  before.record({ promptTokens: 1000, completionTokens: 0, totalTokens: 1000 }, 'm');
  expect(asked).toEqual([]);
  before.record(CACHED, 'claude-test-1');
  expect(asked).toEqual([false]);
  expect(before.cost).toBeCloseTo(0.003 + 4.5, 10);
});

test('cache pricing: usage sums keep the cache counts, and only when a call had some', () => {
  const plain = { promptTokens: 10, completionTokens: 2, totalTokens: 12 };
  expect(addUsage(plain, plain)).toEqual({ promptTokens: 20, completionTokens: 4, totalTokens: 24 });
  expect(addUsage(plain, CACHED)).toMatchObject({ cacheReadTokens: 800_000, cacheWriteTokens: 100_000 });
  expect(addUsage(CACHED, CACHED)).toMatchObject({ cacheReadTokens: 1_600_000, cacheWriteTokens: 200_000 });
});

test('cache pricing: the prices setting takes cacheRead and cacheWrite, and names a bad one', () => {
  const prices = SESSION_SETTINGS.budget.kind;
  expect(prices.check({ prices: { '*': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } } })).toBeUndefined();
  expect(JSON.stringify(prices.check({ prices: { '*': { input: 3, output: 15, cacheRead: -1 } } }))).toMatch(/cacheRead/);
});

test('cache pricing: --price takes the cache prices after input and output, and refuses a bad one', () => {
  expect(price('claude-sonnet-4-5=3,15,0.3,3.75', undefined)).toEqual({ 'claude-sonnet-4-5': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } });
  expect(price('*=3,15,0.3', undefined)).toEqual({ '*': { input: 3, output: 15, cacheRead: 0.3 } });
  expect(price('gpt-4o=2.5,10', undefined)).toEqual({ 'gpt-4o': { input: 2.5, output: 10 } });
  expect(() => price('m=3,15,-1', undefined)).toThrow(/cached prompt tokens/);
  expect(() => price('m=3,15,0.3,3.75,9', undefined)).toThrow(/Expected model=input,output/);
});
