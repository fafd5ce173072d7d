/**
 * Views of a text with its character escapes decoded, for finding a secret however a model server
 * quoted it: percent-encoding (`%73`, `%2b`: any case), JSON and JavaScript escapes (`\u0073`,
 * `\/`, `\x73`), HTML character references (`&#115;`, `&#x73;`, `&amp;`), one layer per view and
 * up to MAX_LAYERS deep (`%2573` is `%73` is `s`), and, for base64 wrapped across lines, the last
 * view without its line breaks. Each view is bytes (one character per UTF-8 byte) and knows, for each
 * of its characters, the span of the original text it came from, so that a match in a view redacts
 * exactly the original characters that spelled it. Every view is one linear pass over the previous.
 */

/** Deepest nesting of escapes decoded (a secret percent-encoded twice, then put in JSON, ...). */
export const MAX_LAYERS = 3;

/** A view of a text: `text` holds one character per byte; character i came from `[start[i], end[i])` of the original. */
export interface TextView {
  text: string;
  /** Absent when the view is the original text itself (ASCII, nothing decoded). */
  start?: Int32Array;
  end?: Int32Array;
}

/** The span of the original text that view characters `[from, to)` came from. */
export function originalSpan(view: TextView, from: number, to: number): [number, number] {
  return [startOf(view, from), endOf(view, to - 1)];
}

/** The views to search: the text as UTF-8 bytes, each layer of escapes decoded, and the last without line breaks. */
export function textViews(text: string): TextView[] {
  let view = bytesView(text);
  const views = [view];
  for (let layer = 0; layer < MAX_LAYERS && mayHoldEscapes(view.text); layer += 1) {
    const decoded = decodeLayer(view);
    if (decoded.text.length === view.text.length) break;
    views.push(decoded);
    view = decoded;
  }
  if (/[\r\n]/.test(view.text)) views.push(withoutLineBreaks(view));
  return views;
}

/** The text as UTF-8 bytes; the text itself when it is ASCII. */
function bytesView(text: string): TextView {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return { text };
  const bytes = Buffer.from(text, 'utf8');
  const start = new Int32Array(bytes.length);
  const end = new Int32Array(bytes.length);
  let at = 0;
  for (let i = 0; i < text.length;) {
    const point = text.codePointAt(i)!;
    const units = point > 0xffff ? 2 : 1;
    const size = point < 0x80 ? 1 : point < 0x800 ? 2 : point < 0x10000 ? 3 : 4;
    for (let k = 0; k < size; k += 1, at += 1) {
      start[at] = i;
      end[at] = i + units;
    }
    i += units;
  }
  return { text: bytes.toString('latin1'), start, end };
}

function mayHoldEscapes(text: string): boolean {
  return text.includes('%') || text.includes('\\') || text.includes('&');
}

/** One layer of escapes decoded; each decoded byte maps to the whole escape it came from. */
function decodeLayer(view: TextView): TextView {
  const input = view.text;
  const out = new Uint8Array(input.length);
  const start = new Int32Array(input.length);
  const end = new Int32Array(input.length);
  let n = 0;
  for (let i = 0; i < input.length;) {
    const escape = escapeAt(input, i);
    if (!escape) {
      out[n] = input.charCodeAt(i);
      start[n] = startOf(view, i);
      end[n] = endOf(view, i);
      n += 1;
      i += 1;
      continue;
    }
    const s = startOf(view, i);
    const e = endOf(view, i + escape.length - 1);
    for (const byte of escape.bytes) {
      out[n] = byte;
      start[n] = s;
      end[n] = e;
      n += 1;
    }
    i += escape.length;
  }
  return { text: Buffer.from(out.buffer, 0, n).toString('latin1'), start: start.subarray(0, n), end: end.subarray(0, n) };
}

/** Where view character i starts in the original text. */
function startOf(view: TextView, i: number): number {
  return view.start ? view.start[i]! : i;
}

/** Where view character i ends in the original text. */
function endOf(view: TextView, i: number): number {
  return view.end ? view.end[i]! : i + 1;
}

/** The escape starting at `i`, if one does: the bytes it stands for and its length. */
function escapeAt(text: string, i: number): { bytes: number[]; length: number } | undefined {
  const c = text[i];
  if (c === '%') {
    const byte = hexValue(text, i + 1, 2);
    return byte === undefined ? undefined : { bytes: [byte], length: 3 };
  }
  if (c === '\\') return backslashEscape(text, i);
  if (c === '&') return characterReference(text, i);
  return undefined;
}

const SIMPLE_ESCAPES: Record<string, number> = { '/': 0x2f, '\\': 0x5c, '"': 0x22, "'": 0x27, n: 0x0a, r: 0x0d, t: 0x09 };

function backslashEscape(text: string, i: number): { bytes: number[]; length: number } | undefined {
  const kind = text[i + 1];
  if (kind === undefined) return undefined;
  if (kind in SIMPLE_ESCAPES) return { bytes: [SIMPLE_ESCAPES[kind]!], length: 2 };
  if (kind === 'x') {
    const byte = hexValue(text, i + 2, 2);
    return byte === undefined ? undefined : { bytes: [byte], length: 4 };
  }
  if (kind !== 'u') return undefined;
  const unit = hexValue(text, i + 2, 4);
  if (unit === undefined) return undefined;
  if (unit >= 0xd800 && unit < 0xdc00 && text[i + 6] === '\\' && text[i + 7] === 'u') {
    const low = hexValue(text, i + 8, 4);
    if (low !== undefined && low >= 0xdc00 && low < 0xe000) {
      return { bytes: utf8(0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)), length: 12 };
    }
  }
  if (unit >= 0xd800 && unit < 0xe000) return undefined;
  return { bytes: utf8(unit), length: 6 };
}

const NAMED_REFERENCES: readonly (readonly [string, number])[] = [
  ['&amp;', 0x26],
  ['&quot;', 0x22],
  ['&apos;', 0x27],
  ['&lt;', 0x3c],
  ['&gt;', 0x3e],
];

/** `&#115;`, `&#x73;` or one of NAMED_REFERENCES at `i`. */
function characterReference(text: string, i: number): { bytes: number[]; length: number } | undefined {
  if (text[i + 1] !== '#') {
    for (const [name, byte] of NAMED_REFERENCES) {
      if (text.startsWith(name, i)) return { bytes: [byte], length: name.length };
    }
    return undefined;
  }
  const hex = text[i + 2] === 'x' || text[i + 2] === 'X';
  const first = i + (hex ? 3 : 2);
  let at = first;
  let value = 0;
  // At most 7 digits: enough for any code point, and the scan stays short.
  while (at < first + 7 && at < text.length) {
    const digit = hex ? hexDigit(text.charCodeAt(at)) : decimalDigit(text.charCodeAt(at));
    if (digit === undefined) break;
    value = value * (hex ? 16 : 10) + digit;
    at += 1;
  }
  if (at === first || text[at] !== ';' || value > 0x10ffff || (value >= 0xd800 && value < 0xe000)) return undefined;
  return { bytes: utf8(value), length: at + 1 - i };
}

/** The view without its CR and LF characters (base64 is often wrapped at 64 or 76 characters). */
function withoutLineBreaks(view: TextView): TextView {
  const input = view.text;
  const start = new Int32Array(input.length);
  const end = new Int32Array(input.length);
  let n = 0;
  for (let i = 0; i < input.length; i += 1) {
    const c = input.charCodeAt(i);
    if (c === 0x0a || c === 0x0d) continue;
    start[n] = startOf(view, i);
    end[n] = endOf(view, i);
    n += 1;
  }
  return { text: input.replace(/[\r\n]+/g, ''), start: start.subarray(0, n), end: end.subarray(0, n) };
}

function utf8(point: number): number[] {
  return [...Buffer.from(String.fromCodePoint(point), 'utf8')];
}

function hexValue(text: string, at: number, digits: number): number | undefined {
  let value = 0;
  for (let k = 0; k < digits; k += 1) {
    const digit = hexDigit(text.charCodeAt(at + k));
    if (digit === undefined) return undefined;
    value = value * 16 + digit;
  }
  return value;
}

function hexDigit(code: number): number | undefined {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x41 + 10;
  if (code >= 0x61 && code <= 0x66) return code - 0x61 + 10;
  return undefined;
}

function decimalDigit(code: number): number | undefined {
  return code >= 0x30 && code <= 0x39 ? code - 0x30 : undefined;
}
