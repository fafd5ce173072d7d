/**
 * Reading the delay a model server asks for before the next attempt. OpenAI sends `retry-after-ms`
 * (its own, millisecond precision) and the standard `Retry-After` (seconds, or an HTTP date).
 */

/** The part of a `Headers` object we read. */
export interface HeaderReader {
  get(name: string): string | null;
}

/**
 * Delay in milliseconds the server asked for, or null when it asked for none usable (absent,
 * unparseable, zero or in the past: then the retry policy's own backoff applies). Pure: `nowMs` is
 * passed in so HTTP dates are testable.
 */
export function retryAfterMs(headers: HeaderReader | undefined | null, nowMs: number): number | null {
  if (!headers) return null;
  const ms = parseNumber(headers.get('retry-after-ms'));
  if (ms !== null) return positive(Math.ceil(ms));
  const value = headers.get('retry-after')?.trim();
  if (!value) return null;
  const seconds = parseNumber(value);
  if (seconds !== null) return positive(Math.ceil(seconds * 1000));
  const date = Date.parse(value);
  if (Number.isNaN(date)) return null;
  return positive(date - nowMs);
}

function parseNumber(value: string | null | undefined): number | null {
  if (value === null || value === undefined || !/^\s*\d+(\.\d+)?\s*$/.test(value)) return null;
  return Number(value);
}

function positive(ms: number): number | null {
  return Number.isFinite(ms) && ms > 0 ? ms : null;
}
