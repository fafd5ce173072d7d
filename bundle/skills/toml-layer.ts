/**
 * One TOML layer of a BMAD customization or config, read and parsed as BMAD's own Python scripts
 * read it (customize.ts merges the layers; bmad-config.ts reads the central config with them).
 *
 * Where the Python reader (`tomllib`, TOML 1.0) and smol-toml (TOML 1.1) disagree, the file is
 * refused as Python refuses it: smol-toml accepts line breaks and trailing commas in inline tables,
 * `\e` and `\x` escapes and times without seconds, which BMAD's own script would reject, so a
 * customization that works here would break BMAD. A byte-order mark is refused for the same reason.
 *
 * Files are read as the runtime reads every bundle file: regular files only (`readTextFile`), hard
 * links only when allowed, and at most `MAX_TOML_BYTES`; nesting is bounded by `MAX_TOML_DEPTH`
 * since parsing and merging run on the worker's event loop.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parse as parseToml, TomlDate, TomlError } from 'smol-toml';
import { BundleError, LimitExceededError } from '../errors';
import { errorCode, FileTooLargeError } from '../file-errors';
import { readTextFile } from '../text-content';

/**
 * Largest TOML layer read: 256 KiB. The largest real `customize.toml` (BMAD 6.11's party mode) is
 * 12 KB; smol-toml parses a quarter megabyte of tables in well under 0.1 s.
 */
export const MAX_TOML_BYTES = 256 * 1024;

/**
 * Deepest nesting of tables and arrays in one layer (real files nest 3 deep). Dotted keys can nest
 * a table once per dot, and merging recurses once per level, so the depth is bounded here.
 */
export const MAX_TOML_DEPTH = 64;

/** A TOML scalar: string, number (integer or float), boolean, or date/time (a `TomlDate`). */
export type CustomizationScalar = string | number | boolean | Date;

/** Any TOML value. */
export type CustomizationValue = CustomizationScalar | CustomizationValue[] | CustomizationTable;

/** A TOML table: what a layer parses to and what the merge returns. */
export interface CustomizationTable {
  [key: string]: CustomizationValue;
}

/**
 * A customization or central-config layer cannot be used: it does not parse (`line` and `column`
 * then say where, when TOML reports it), the required `customize.toml`/`config.toml` is missing,
 * or a keyed array has an identifier that is not a non-empty string (`field` names the array).
 */
export class CustomizationError extends BundleError {
  /** 1-based line of the problem, when known. */
  line?: number;
  /** 1-based column of the problem, when known. */
  column?: number;

  constructor(message: string, details: { file?: string; field?: string; line?: number; column?: number; cause?: unknown } = {}) {
    super(message, { file: details.file, field: details.field, cause: details.cause });
    if (details.line !== undefined) this.line = details.line;
    if (details.column !== undefined) this.column = details.column;
  }
}

/** How layers are read. */
export interface LayerReadOptions {
  /** Read layers with more than one hard link (default: refused, as for every file the runtime reads). */
  allowHardLinks?: boolean;
}

/**
 * Reads and parses one TOML layer: undefined when the file does not exist (followed through
 * symlinks, as Python's `Path.exists`) and is not `required`. See `resolveCustomization` for the
 * errors.
 */
export async function readTomlLayer(file: string, options: LayerReadOptions & { required?: boolean } = {}): Promise<CustomizationTable | undefined> {
  const read = await readLayerText(file, MAX_TOML_BYTES, 'MAX_TOML_BYTES', options);
  if (read === undefined) {
    if (options.required) throw new CustomizationError(`Required TOML file not found: ${file}`, { file });
    return undefined;
  }
  if (read.hadByteOrderMark) {
    // tomllib refuses it ("Invalid statement"), so BMAD's scripts fail on such a file.
    throw new CustomizationError(`Invalid TOML in ${file}: a byte-order mark is not allowed (BMAD's Python reader refuses it) at line 1, column 1`, {
      file,
      line: 1,
      column: 1,
    });
  }
  return parseTomlLayer(read.text, file);
}

/**
 * Parses the TOML `text` of `file` (see the module comment for the TOML 1.0 rule) into plain
 * objects. Throws `CustomizationError` (with line and column) or `LimitExceededError`.
 */
export function parseTomlLayer(text: string, file: string): CustomizationTable {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_TOML_BYTES) {
    throw new LimitExceededError(`TOML file ${file} is too large to parse: ${bytes} bytes`, 'MAX_TOML_BYTES', MAX_TOML_BYTES, { file });
  }
  let parsed: Record<string, unknown>;
  try {
    parsed = parseToml(text, { maxDepth: MAX_TOML_DEPTH });
  } catch (error) {
    if (error instanceof TomlError) {
      const problem = error.message.split('\n')[0].replace(/^Invalid TOML document: /, '');
      throw new CustomizationError(`Invalid TOML in ${file}: ${problem} at line ${error.line}, column ${error.column}`, {
        file,
        line: error.line,
        column: error.column,
        cause: error,
      });
    }
    throw error;
  }
  const newer = findToml11Syntax(text);
  if (newer !== undefined) {
    const { line, column } = lineAndColumn(text, newer.offset);
    throw new CustomizationError(`Invalid TOML in ${file}: ${newer.what} is TOML 1.1, which BMAD's Python reader (TOML 1.0) refuses, at line ${line}, column ${column}`, { file, line, column });
  }
  return toPlainTable(parsed, file, 1);
}

/** Whether `value` is a TOML table (not an array, not a date). */
export function isTable(value: unknown): value is CustomizationTable {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/**
 * Reads a layer's text for the config readers of this folder: undefined when the file is missing
 * (ENOENT, ENOTDIR or a symlink loop, as Python's `Path.exists`); over `maxBytes` a
 * `LimitExceededError` named `limit`; another failure to resolve the path a `CustomizationError`.
 */
export async function readLayerText(file: string, maxBytes: number, limit: string, options: LayerReadOptions = {}): Promise<{ text: string; hadByteOrderMark: boolean } | undefined> {
  let realPath: string;
  try {
    // `readTextFile` wants a symlink-free path; the scripts follow symlinks, so the real path is read.
    realPath = await fs.realpath(file);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw new CustomizationError(`Cannot read ${file}: ${(error as Error).message}`, { file, cause: error });
  }
  try {
    const { content, size } = await readTextFile(realPath, maxBytes, undefined, { allowHardLinks: options.allowHardLinks === true });
    return { text: content, hadByteOrderMark: Buffer.byteLength(content, 'utf8') !== size };
  } catch (error) {
    if (error instanceof FileTooLargeError) {
      throw new LimitExceededError(`File ${file} is too large to parse: ${error.size} bytes`, limit, maxBytes, { file });
    }
    if (isMissing(error)) return undefined;
    throw error;
  }
}

function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP';
}

/** Whether `file` exists, through symlinks (a dangling link does not), as Python's `Path.exists`. */
export async function pathExists(file: string): Promise<boolean> {
  try {
    await fs.stat(file);
    return true;
  } catch {
    return false;
  }
}

/** `p` made absolute and real (through its symlinks) when it exists, as Python's `Path.resolve()` for the paths used here. */
export async function realOrResolved(p: string): Promise<string> {
  const absolute = path.resolve(p);
  try {
    return await fs.realpath(absolute);
  } catch {
    return absolute;
  }
}

/** Sets an own property even for `__proto__`, which plain assignment would treat as the prototype. */
export function setOwn(target: CustomizationTable, key: string, value: CustomizationValue): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** smol-toml's null-prototype tables become plain objects; depth is checked on the way. */
function toPlainTable(table: Record<string, unknown>, file: string, depth: number): CustomizationTable {
  const out: CustomizationTable = {};
  for (const key of Object.keys(table)) setOwn(out, key, toPlainValue(table[key], file, depth));
  return out;
}

function toPlainValue(value: unknown, file: string, depth: number): CustomizationValue {
  if (typeof value !== 'object' || value === null || value instanceof TomlDate || value instanceof Date) return value as CustomizationScalar;
  if (depth >= MAX_TOML_DEPTH) {
    throw new LimitExceededError(`TOML nesting too deep in ${file}`, 'MAX_TOML_DEPTH', MAX_TOML_DEPTH, { file });
  }
  if (Array.isArray(value)) return value.map((item) => toPlainValue(item, file, depth + 1));
  return toPlainTable(value as Record<string, unknown>, file, depth + 1);
}

export function typeName(value: CustomizationValue): string {
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return 'a date';
  if (isTable(value)) return 'a table';
  return `a ${typeof value}`;
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: offset - lineStart + 1 };
}

/** A bare value or key: its characters in TOML (dates and times included). */
const BARE = /[A-Za-z0-9_:.+-]/;

/** A time whose minutes are not followed by seconds (`07:32`, `1979-05-27T07:32Z`). */
const TIME_WITHOUT_SECONDS = /(?:^|[Tt])\d{2}:\d{2}(?!:)/;

/**
 * The first TOML 1.1 construct in `text`, which smol-toml has already parsed (so it is valid TOML
 * 1.1): a line break, comment or trailing comma inside an inline table (line breaks inside a
 * nested array or a multi-line string are TOML 1.0), a `\e` or `\x` escape, a time without seconds.
 * One pass over the text, skipping strings and comments.
 */
function findToml11Syntax(text: string): { what: string; offset: number } | undefined {
  const open: string[] = [];
  // The last thing seen outside strings and comments; a `,` right before `}` is a trailing comma.
  let last = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const inInlineTable = open[open.length - 1] === '{';
    if (c === '#') {
      if (inInlineTable) return { what: 'a comment inside an inline table', offset: i };
      const end = text.indexOf('\n', i);
      i = end === -1 ? text.length : end;
    } else if (c === '\n') {
      if (inInlineTable) return { what: 'a line break inside an inline table', offset: i };
      i += 1;
    } else if (c === '"' || c === "'") {
      const scanned = scanString(text, i, c);
      if (scanned.escape !== undefined) return { what: `the escape \\${text[scanned.escape + 1]}`, offset: scanned.escape };
      last = 'value';
      i = scanned.end;
    } else if (c === '{' || c === '[') {
      open.push(c);
      last = c;
      i += 1;
    } else if (c === '}' || c === ']') {
      if (c === '}' && last === ',') return { what: 'a trailing comma in an inline table', offset: i };
      open.pop();
      last = 'value';
      i += 1;
    } else if (BARE.test(c)) {
      let end = i;
      while (end < text.length && BARE.test(text[end])) end += 1;
      const time = TIME_WITHOUT_SECONDS.exec(text.slice(i, end));
      if (time) return { what: 'a time without seconds', offset: i + time.index };
      last = 'value';
      i = end;
    } else {
      if (c !== ' ' && c !== '\t' && c !== '\r') last = c;
      i += 1;
    }
  }
  return undefined;
}

/**
 * Skips the string starting at `start` (basic or literal, one line or multi-line): where it ends,
 * and the offset of a `\e` or `\x` escape in a basic string, if any.
 */
function scanString(text: string, start: number, quote: string): { end: number; escape?: number } {
  const multi = text.startsWith(quote.repeat(3), start);
  const basic = quote === '"';
  let i = start + (multi ? 3 : 1);
  while (i < text.length) {
    const c = text[i];
    if (basic && c === '\\') {
      const next = text[i + 1];
      if (next === 'e' || next === 'x') return { end: i, escape: i };
      i += 2;
    } else if (c === quote) {
      if (!multi) return { end: i + 1 };
      let run = i;
      while (text[run] === quote) run += 1;
      // Up to two quotes before the closing three belong to the string (`""""x""""` style).
      if (run - i >= 3) return { end: run };
      i = run;
    } else {
      i += 1;
    }
  }
  return { end: text.length };
}
