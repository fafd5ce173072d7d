/**
 * Reading the verifier's reply: one JSON object `{"items": [{"n", "passed", "note"}]}`, checked with
 * zod. Pure. The JSON may be the whole reply, the one fenced block of the reply (```json or ```), or
 * the one object that prose surrounds (from the first `{` to the last `}`); nothing looser. Every
 * item 1..N should be answered once: a missing one counts as failed, an unknown number is ignored,
 * and an item answered twice fails when either answer says so; each of these is a warning.
 */
import { z } from 'zod';
import { MAX_ITEM_NOTE_CHARS } from '../../common/verify-types';

/** The verdict on one item. */
export interface ItemVerdict {
  passed: boolean;
  note?: string;
}

/** What the reply says of items 1..N, in order. */
export type VerifierReply = { ok: true; verdicts: ItemVerdict[]; warnings: string[] } | { ok: false; reason: string };

/** Note of an item the reply does not answer. */
export const NO_ANSWER_NOTE = 'the verifier gave no answer for this item';

const replySchema = z.object({
  items: z.array(
    z.object({
      n: z.number().int(),
      passed: z.boolean(),
      note: z.string().nullish(),
    }),
  ),
});

/** The verdicts on items 1..`count` that `content` gives, or why it cannot be read. */
export function parseVerifierReply(content: string, count: number): VerifierReply {
  const json = extractJson(content);
  if (json === undefined) return { ok: false, reason: 'the reply holds no JSON object' };
  const parsed = replySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? issue.path.join('.') : 'the reply';
    return { ok: false, reason: `the reply's JSON does not have the asked shape (${where}: ${issue.message})` };
  }
  const answers = new Map<number, ItemVerdict>();
  const unknown: number[] = [];
  const repeated = new Set<number>();
  for (const entry of parsed.data.items) {
    if (entry.n < 1 || entry.n > count) {
      unknown.push(entry.n);
      continue;
    }
    const note = cutNote(entry.note);
    const verdict: ItemVerdict = { passed: entry.passed, ...(note !== undefined ? { note } : {}) };
    const earlier = answers.get(entry.n);
    if (earlier) {
      repeated.add(entry.n);
      // Two answers for one item: a failure in either one stands.
      if (earlier.passed && !verdict.passed) answers.set(entry.n, verdict);
      continue;
    }
    answers.set(entry.n, verdict);
  }
  const verdicts: ItemVerdict[] = [];
  const missing: number[] = [];
  for (let n = 1; n <= count; n++) {
    const verdict = answers.get(n);
    if (verdict) verdicts.push(verdict);
    else {
      missing.push(n);
      verdicts.push({ passed: false, note: NO_ANSWER_NOTE });
    }
  }
  const warnings: string[] = [];
  if (missing.length > 0) warnings.push(`The verifier gave no answer for ${plural(missing.length, 'item')} (${list(missing)}); they count as failed`);
  if (unknown.length > 0) warnings.push(`The verifier answered for ${plural(unknown.length, 'item number')} the checklist does not have (${list(unknown)}); ignored`);
  if (repeated.size > 0) warnings.push(`The verifier answered ${plural(repeated.size, 'item')} more than once (${list([...repeated])}); a failed answer stands`);
  return { ok: true, verdicts, warnings };
}

/** The JSON value of the reply, read as described in the module comment; undefined when there is none. */
export function extractJson(content: string): unknown {
  const text = content.trim();
  const whole = tryParse(text);
  if (whole !== undefined) return whole;
  const fences = [...text.matchAll(/```([A-Za-z]*)[ \t]*\r?\n([\s\S]*?)\r?\n?```/g)];
  if (fences.length === 1) {
    const [, language, body] = fences[0]!;
    if (language === '' || language!.toLowerCase() === 'json') return tryParse(body!.trim());
    return undefined;
  }
  if (fences.length > 1) return undefined;
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  if (first < 0 || last <= first) return undefined;
  return tryParse(text.slice(first, last + 1));
}

/** The parsed JSON object of `text`, or undefined when it is not exactly one JSON object. */
function tryParse(text: string): unknown {
  if (!text.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A note trimmed and cut to MAX_ITEM_NOTE_CHARS; undefined when empty. */
export function cutNote(note: string | null | undefined): string | undefined {
  const text = (note ?? '').trim();
  if (text === '') return undefined;
  return text.length <= MAX_ITEM_NOTE_CHARS ? text : `${text.slice(0, MAX_ITEM_NOTE_CHARS - 1)}…`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** Numbers as a short list: the first ten, then how many more. */
function list(numbers: readonly number[]): string {
  const shown = numbers.slice(0, 10).join(', ');
  return numbers.length > 10 ? `${shown} and ${numbers.length - 10} more` : shown;
}
