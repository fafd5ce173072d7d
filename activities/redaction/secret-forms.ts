/**
 * Finding a configured secret (the API key) in every form a model server may echo it in. Servers
 * quote what they were sent: the key itself, the key inside base64 or base64url (alone, or inside a
 * longer encoded text such as `Authorization: Bearer <key>`, at any byte offset), in hex, and any of
 * these behind character escapes (percent-encoding, JSON, HTML; see escape-view.ts). Each form is a
 * fixed string searched for in every view of the text, so finding them is linear and no regular
 * expression sees the server's text.
 */
import { originalSpan, textViews } from './escape-view';

/** Shortest secret replaced in its plain form; shorter strings would mangle ordinary words. */
export const MIN_SECRET_LENGTH = 4;

/** Shortest secret, in bytes, also looked for encoded: its encoded forms are then at least 10 characters. */
export const MIN_ENCODED_SECRET_BYTES = 8;

/** One form of a secret, as it appears in a view (one character per byte). */
interface SecretForm {
  text: string;
  /** Hex may be written in either case: matched against the view in lower case. */
  lowerCase: boolean;
}

/** Forms of recent secrets: a worker has one or two, so the cache stays tiny. */
const formsCache = new Map<string, SecretForm[]>();

/**
 * Every form of `secret` to look for: its UTF-8 bytes (with `+` for space, as HTML forms encode
 * it); and for secrets of MIN_ENCODED_SECRET_BYTES or more, the part of its base64 that depends on
 * the secret alone at each of the three byte alignments, in both alphabets, and its hex.
 */
export function secretForms(secret: string): readonly SecretForm[] {
  let forms = formsCache.get(secret);
  if (forms) return forms;
  const bytes = Buffer.from(secret, 'utf8');
  const texts = new Set<string>([bytes.toString('latin1'), bytes.toString('latin1').replaceAll(' ', '+')]);
  forms = [];
  if (bytes.length >= MIN_ENCODED_SECRET_BYTES) {
    for (const alignment of [0, 1, 2]) {
      const middle = stableBase64(bytes, alignment);
      texts.add(middle);
      texts.add(middle.replaceAll('+', '-').replaceAll('/', '_'));
    }
    forms.push({ text: bytes.toString('hex'), lowerCase: true });
  }
  forms.push(...[...texts].map((text) => ({ text, lowerCase: false })));
  if (formsCache.size > 32) formsCache.clear();
  formsCache.set(secret, forms);
  return forms;
}

/**
 * The base64 characters that encode nothing but `bytes` when `alignment` bytes (0, 1 or 2) come
 * before them in the encoded text, whatever those and the following bytes are. Character i covers
 * bits [6i, 6i + 6); the secret's bits are [8a, 8(a + n)).
 */
export function stableBase64(bytes: Buffer, alignment: number): string {
  const encoded = Buffer.concat([Buffer.alloc(alignment), bytes, Buffer.alloc(3)]).toString('base64');
  const first = Math.ceil((8 * alignment) / 6);
  const last = Math.floor((8 * (alignment + bytes.length)) / 6);
  return encoded.slice(first, last);
}

/**
 * The spans of `text` (start, end: UTF-16 indices) where any of `secrets` appears in any of its
 * forms, merged where they overlap or touch, in order.
 */
export function secretSpans(text: string, secrets: readonly string[]): [number, number][] {
  const forms = secrets.filter((s) => s.length >= MIN_SECRET_LENGTH).flatMap((s) => secretForms(s));
  if (forms.length === 0 || text === '') return [];
  const spans: [number, number][] = [];
  for (const view of textViews(text)) {
    let lower: string | undefined;
    for (const form of forms) {
      const haystack = form.lowerCase ? (lower ??= asciiLowerCase(view.text)) : view.text;
      for (let at = haystack.indexOf(form.text); at !== -1; at = haystack.indexOf(form.text, at + form.text.length)) {
        spans.push(originalSpan(view, at, at + form.text.length));
      }
    }
  }
  return merge(spans);
}

/** `text` with each of `spans` (sorted, disjoint) replaced by `replacement`. */
export function replaceSpans(text: string, spans: readonly [number, number][], replacement: string): string {
  if (spans.length === 0) return text;
  const parts: string[] = [];
  let from = 0;
  for (const [start, end] of spans) {
    parts.push(text.slice(from, start), replacement);
    from = end;
  }
  parts.push(text.slice(from));
  return parts.join('');
}

function merge(spans: [number, number][]): [number, number][] {
  spans.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const merged: [number, number][] = [];
  for (const span of spans) {
    const last = merged.at(-1);
    if (last && span[0] <= last[1]) last[1] = Math.max(last[1], span[1]);
    else merged.push([span[0], span[1]]);
  }
  return merged;
}

/** Lower case for A-Z only, so that every index stays where it was. */
function asciiLowerCase(text: string): string {
  return text.replace(/[A-Z]+/g, (run) => run.toLowerCase());
}
