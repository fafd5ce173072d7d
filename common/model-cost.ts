/**
 * The cost of one model call from its usage and the model's price: prompt and completion tokens at
 * their prices, and, when the provider said how many prompt tokens it read from or wrote to its
 * prompt cache, those at the cache prices (a price's own, else the default shares of the input
 * price). Pure: the workflow's budgets count with it.
 */
import type { ModelPrice } from './budget-types';
import { DEFAULT_CACHE_READ_PRICE_FACTOR, DEFAULT_CACHE_WRITE_PRICE_FACTOR } from './defaults';
import type { TokenUsage } from './messages';

/** The cost of a call that used `usage` at `price` (per million tokens); `priceCache` false prices every prompt token as input. */
export function callCost(usage: TokenUsage, price: ModelPrice, priceCache = true): number {
  const read = usage.cacheReadTokens ?? 0;
  const written = usage.cacheWriteTokens ?? 0;
  if (!priceCache || (read === 0 && written === 0)) return (usage.promptTokens * price.input + usage.completionTokens * price.output) / 1_000_000;
  const uncached = Math.max(0, usage.promptTokens - read - written);
  const readPrice = price.cacheRead ?? price.input * DEFAULT_CACHE_READ_PRICE_FACTOR;
  const writePrice = price.cacheWrite ?? price.input * DEFAULT_CACHE_WRITE_PRICE_FACTOR;
  return (uncached * price.input + read * readPrice + written * writePrice + usage.completionTokens * price.output) / 1_000_000;
}

/** True when a call's usage says anything of the prompt cache. */
export function usesCache(usage: TokenUsage): boolean {
  return (usage.cacheReadTokens ?? 0) > 0 || (usage.cacheWriteTokens ?? 0) > 0;
}
