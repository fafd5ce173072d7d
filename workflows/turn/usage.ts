import type { TokenUsage } from '../../common/messages';

/** No tokens yet. */
export const ZERO_USAGE: TokenUsage = Object.freeze({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });

/** Largest count a usage field holds; the worker already sanitises, this guards recorded odd values. */
const MAX_COUNT = 1e12;

/** A whole, non-negative, bounded count: no number from a model server may break the session's sums or search attributes. */
function count(n: unknown): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.min(Math.round(n), MAX_COUNT) : 0;
}

/** Sum of two usage records; the prompt-cache counts only when either has them. */
export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  const sum: TokenUsage = {
    promptTokens: count(a.promptTokens + count(b.promptTokens)),
    completionTokens: count(a.completionTokens + count(b.completionTokens)),
    totalTokens: count(a.totalTokens + count(b.totalTokens)),
  };
  if (a.cacheReadTokens !== undefined || b.cacheReadTokens !== undefined) sum.cacheReadTokens = count(count(a.cacheReadTokens) + count(b.cacheReadTokens));
  if (a.cacheWriteTokens !== undefined || b.cacheWriteTokens !== undefined) sum.cacheWriteTokens = count(count(a.cacheWriteTokens) + count(b.cacheWriteTokens));
  return sum;
}
