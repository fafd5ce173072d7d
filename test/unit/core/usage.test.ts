/**
 * Usage sums (workflows/turn/usage.ts): counts add up, and no number a model server reports (a
 * fraction, a negative, NaN, 1e308) breaks the session's sums: each is made a whole count from 0 to
 * 1e12 before it is added.
 */
import { addUsage, ZERO_USAGE } from '../../../workflows/turn/usage';

describe('addUsage', () => {
  test('usage: counts add field by field; zero is frozen', () => {
    expect(addUsage({ promptTokens: 100, completionTokens: 20, totalTokens: 120 }, { promptTokens: 5, completionTokens: 1, totalTokens: 6 })).toEqual({
      promptTokens: 105,
      completionTokens: 21,
      totalTokens: 126,
    });
    expect(addUsage(ZERO_USAGE, { promptTokens: 7, completionTokens: 0, totalTokens: 7 })).toEqual({ promptTokens: 7, completionTokens: 0, totalTokens: 7 });
    expect(Object.isFrozen(ZERO_USAGE)).toBe(true);
  });

  test.each([
    [10.5, 11],
    [-5, 0],
    [Number.NaN, 0],
    [Number.POSITIVE_INFINITY, 0],
    [1e19, 1e12],
    [1e308, 1e12],
  ])('usage: a reported count of %p adds as %p', (odd, counted) => {
    const sum = addUsage(ZERO_USAGE, { promptTokens: odd, completionTokens: 3, totalTokens: odd });
    expect(sum).toEqual({ promptTokens: counted, completionTokens: 3, totalTokens: counted });
  });

  test('usage: a sum never passes 1e12', () => {
    const big = { promptTokens: 9e11, completionTokens: 0, totalTokens: 9e11 };
    expect(addUsage(big, big).promptTokens).toBe(1e12);
    // A recorded running total that is not a whole count still sums to one, never NaN.
    expect(addUsage({ promptTokens: -50, completionTokens: 0.4, totalTokens: Number.NaN }, { promptTokens: 10, completionTokens: 0, totalTokens: 10 })).toEqual({
      promptTokens: 0,
      completionTokens: 0,
      totalTokens: 0,
    });
  });
});
