/**
 * The server's `usage`, made safe to add up. Compatible servers sometimes send fractions, negative
 * numbers, strings, or nonsense such as 1e19; one such number in a session's totals would poison
 * budgets and the compaction's calibration for the rest of the session. Each field that is not a
 * sane whole number is replaced (fractions rounded; anything else by the project's estimate), and
 * every replacement is said in a warning.
 */
import type { TokenUsage } from '../../common/messages';

/** Largest token count believed: no context window or reply comes near it. */
export const MAX_BELIEVABLE_TOKENS = 100_000_000;

/** The estimates a bad field is replaced by. */
export interface UsageEstimates {
  /** Estimated prompt tokens of the request as sent. */
  promptTokens: () => number;
  /** Estimated tokens of the reply (text and tool-call arguments). */
  completionTokens: () => number;
}

/** Sanitised usage and what was mended. */
export interface SanitizedUsage {
  usage: TokenUsage | null;
  /** One plain sentence per mended field. */
  warnings: string[];
  /** Fields replaced (for the `loopwright_model_usage_fixed` counter). */
  fixed: number;
}

type FieldName = 'prompt_tokens' | 'completion_tokens' | 'total_tokens';

/** Sanitise the reply's `usage` (any JSON); null or absent stays null: the server reported none. */
export function sanitizeUsage(raw: unknown, estimates: UsageEstimates): SanitizedUsage {
  if (raw === null || raw === undefined) return { usage: null, warnings: [], fixed: 0 };
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    return { usage: null, warnings: [`usage was ${describe(raw)}, not an object; ignored`], fixed: 1 };
  }
  const fields = raw as Record<string, unknown>;
  const warnings: string[] = [];
  let fixed = 0;
  const field = (name: FieldName, estimate: () => number): number => {
    const checked = check(fields[name]);
    if (checked.ok) return checked.value;
    const value = checked.rounded ?? Math.max(0, Math.round(estimate()));
    warnings.push(`usage.${name} was ${describe(fields[name])}; recorded as ${value}${checked.rounded === undefined ? ' (estimated)' : ''}`);
    fixed += 1;
    return value;
  };
  const promptTokens = field('prompt_tokens', estimates.promptTokens);
  const completionTokens = field('completion_tokens', estimates.completionTokens);
  const sum = promptTokens + completionTokens;
  const totalRaw = fields.total_tokens;
  const total = check(totalRaw);
  let totalTokens = sum;
  if (total.ok && total.value === sum) {
    totalTokens = total.value;
  } else if (!total.ok && total.rounded === sum) {
    // A fraction that rounds to the sum: say so, keep the sum.
    warnings.push(`usage.total_tokens was ${describe(totalRaw)}; recorded as ${sum}`);
    fixed += 1;
  } else {
    const why = total.ok ? ` (not prompt_tokens + completion_tokens = ${sum})` : '';
    warnings.push(`usage.total_tokens was ${describe(totalRaw)}${why}; recorded as ${sum}`);
    fixed += 1;
  }
  return { usage: { promptTokens, completionTokens, totalTokens }, warnings, fixed };
}

/** `ok` with the value when it is a sane whole number; else `rounded` when rounding alone makes it one. */
function check(value: unknown): { ok: true; value: number } | { ok: false; rounded?: number } {
  const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
  if (typeof value === 'number' && Number.isInteger(number) && number >= 0 && number <= MAX_BELIEVABLE_TOKENS) return { ok: true, value: number };
  if (!Number.isFinite(number) || number < 0 || number > MAX_BELIEVABLE_TOKENS) return { ok: false };
  // A fraction, or a number sent as a string.
  return { ok: false, rounded: Math.round(number) };
}

/** The value as the warning shows it (strings quoted and cut). */
function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (typeof value === 'number') return String(value);
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 40 ? `${json.slice(0, 40)}...` : json;
}
