/**
 * Which files a critical action asks to load: the scan of an instruction's text that decides
 * whether it is a file load (see `processCriticalActions`) or an instruction for the model.
 *
 * What counts as a load (decided from the real BMAD files):
 * - a line of the instruction that starts with the verb "Load" (after list markers, emoji, or a
 *   `CRITICAL:`-style label) and names at least one file: "Load into memory {path} and set
 *   variables: a, b", "... set variable a, b", "... set variables", "Load COMPLETE file {path} into
 *   permanent memory", a compiled step's "- Load and read {path} NOW", "Load config from {path}";
 * - a line that starts with the verb "Read" (same prefixes) whose object is a named file: "Read"
 *   then only words from `READ_FILLERS` ("the", "complete", "file", "and load", ...) then the file,
 *   and more files joined by "and" or ","; "Read COMPLETE file {path}", "Read and load {path}",
 *   "Read the file {path} into memory". A "Read" sentence whose object is anything else ("Read the
 *   user's request carefully", "Read each file to understand ...") stays an instruction;
 * - a load target is a token that resolves to a file: a `{variable}` followed by a path
 *   (`{project-root}/bmad/bmm/config.yaml`), a relative path with a known extension, or a single
 *   `{variable}` whose value is a file path (`notes_file: '{bundle-root}/data/notes.md'`), decided
 *   from its value with the variables known at that point (`isFilePathValue`), not from its name.
 *   On a "Load" line, a single variable that does not resolve is a target that cannot be loaded
 *   (reported, see below); on a "Read" line it is not a target. A token ending in `/` is a folder
 *   ("Load the referenced fragment(s) from `{...}/knowledge/`" is guidance for later, not a load),
 *   and the names after "and set variable(s)" are not paths;
 * - "Load persona from this current agent file" names no file, so it stays an instruction.
 */
import * as path from 'node:path';
import { LimitExceededError } from './errors';
import { MAX_VARIABLE_EXPANSION_CHARS } from './limits';
import { findUnresolved, resolveVariables } from './variables';

// Every pattern here runs in linear time: the line prefix, the path tokens and the object of a
// "Read" are scanned by hand (see `loadLine`, `pathTokens` and `readObjectTokens`), since their
// natural regular expressions backtrack exponentially (30 `!` took seconds) or quadratically (a
// 100,000-character word took 9 s).
export const SET_VARIABLES = /\bset\s+variables?\b|\bsession variables\b/i;
const AND_SET_VARIABLES = /\band\s+set\s+variables?\b/i;

/** The verb a load line starts with. */
type LoadVerb = 'load' | 'read';

/** A path-like token of a load line, as written, with the verb of its line. */
interface Candidate {
  token: string;
  verb: LoadVerb;
}

/**
 * The files an instruction asks to load, as written (variables unresolved); empty when it is not a
 * load instruction. Exported for `inspect`/`validate` and tests. Linear in the instruction's length.
 *
 * Without `variables`, only tokens spelled as paths count (and `{config_source}`): a single
 * `{variable}` cannot be judged without its value. With `variables` (those known when the action
 * runs), a single variable counts when its value is a file path (`isFilePathValue`), or, on a
 * "Load" line, when it does not resolve. Judging single variables resolves them; the values of one
 * instruction may total at most `MAX_VARIABLE_EXPANSION_CHARS` characters, past which this throws
 * `LimitExceededError` (as does a variable cycle, `VariableCycleError`).
 */
export function fileLoadTargets(instruction: string, variables?: Record<string, string>, options: { date?: string } = {}): string[] {
  if (variables === undefined) {
    return candidates(instruction)
      .filter((c) => !isLoneVariable(c.token) || (c.verb === 'load' && c.token === '{config_source}'))
      .map((c) => c.token);
  }
  const budget = new ExpansionBudget();
  return targetsOf(instruction, (text) => budget.resolve(text, variables, options));
}

/** The load targets of `instruction`, single variables judged by their value (`resolve`, non-strict). */
export function targetsOf(instruction: string, resolve: (text: string) => string): string[] {
  const targets: string[] = [];
  for (const { token, verb } of candidates(instruction)) {
    if (isLoneVariable(token)) {
      const value = resolve(token);
      if (findUnresolved(value).length > 0 ? verb === 'load' : isFilePathValue(value)) targets.push(token);
    } else {
      targets.push(token);
    }
  }
  return targets;
}

/** Every path-like token of the instruction's load lines, without repeats, in order. */
function candidates(instruction: string): Candidate[] {
  const seen = new Set<string>();
  const out: Candidate[] = [];
  for (const line of instruction.split(/\r\n?|[\n\u2028\u2029]/)) {
    const load = loadLine(line);
    if (load === undefined) continue;
    // Only what comes before "and set variable(s)" can be a file; after it are variable names.
    const rest = load.rest.split(AND_SET_VARIABLES)[0];
    const tokens = load.verb === 'load' ? pathTokens(rest) : readObjectTokens(rest);
    for (const raw of tokens) {
      const token = trimEndChars(raw, '.:!?');
      if (token.endsWith('/')) continue;
      const isPath = token.includes('/') || hasExtension(token) || isLoneVariable(token);
      if (!isPath || seen.has(token)) continue;
      seen.add(token);
      out.push({ token, verb: load.verb });
    }
  }
  return out;
}

/**
 * The verb and what follows it when `line` is a load line, else `undefined`. A load line is: list
 * markers, numbering and spaces (`- `, `1. `, `> `), then any symbols and spaces (emoji, `**`),
 * then optionally an upper-case label ending in a colon (`CRITICAL:`), then the word "load" or
 * "read" (any case).
 */
function loadLine(line: string): { verb: LoadVerb; rest: string } | undefined {
  const n = line.length;
  let i = 0;
  while (i < n && isListMarker(line[i])) i++;
  while (i < n) {
    const cp = line.codePointAt(i) as number;
    const ch = String.fromCodePoint(cp);
    if (ch === '{' || LETTER_OR_NUMBER.test(ch)) break;
    i += ch.length;
  }
  if (i >= n || !isAsciiLetter(line[i])) return undefined;
  // A label: letters and spaces up to a colon, then spaces, then the verb.
  let j = i;
  while (j < n && (isAsciiLetter(line[j]) || line[j] === ' ')) j++;
  if (line[j] === ':') {
    let k = j + 1;
    while (k < n && WHITESPACE.test(line[k])) k++;
    const verb = verbAt(line, k);
    if (verb !== undefined) return { verb, rest: line.slice(k + verb.length) };
  }
  const verb = verbAt(line, i);
  return verb === undefined ? undefined : { verb, rest: line.slice(i + verb.length) };
}

function verbAt(line: string, at: number): LoadVerb | undefined {
  if (isWordAt(line, at, 'load')) return 'load';
  if (isWordAt(line, at, 'read')) return 'read';
  return undefined;
}

const LETTER_OR_NUMBER = /^[\p{L}\p{N}]$/u;
const WHITESPACE = /^\s$/;

function isListMarker(ch: string): boolean {
  return WHITESPACE.test(ch) || '-*•>#.)'.includes(ch) || (ch >= '0' && ch <= '9');
}

function isAsciiLetter(ch: string | undefined): boolean {
  return ch !== undefined && ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'));
}

/** An ASCII word character, as `\w` in a regular expression. */
function isWordChar(ch: string | undefined): boolean {
  return ch !== undefined && (isAsciiLetter(ch) || (ch >= '0' && ch <= '9') || ch === '_');
}

/** Whether `word` (lower-case) stands at `at` in `text`, in any case, not followed by a word character. */
function isWordAt(text: string, at: number, word: string): boolean {
  return text.slice(at, at + word.length).toLowerCase() === word && !isWordChar(text[at + word.length]);
}

/** Characters that end a `{variable}...` token, besides white space. */
const TOKEN_END = '`\'"<>,;()';
const EXTENSIONS = ['yaml', 'yml', 'md', 'xml', 'csv', 'json', 'txt'];

/**
 * The path-like tokens of `text`, left to right, not overlapping:
 * - a `{variable}` followed by any characters up to white space, a quote or one of `<>,;()`;
 * - a relative path: segments of word characters, `.` and `-`, separated by single slashes, whose
 *   last segment ends with a known extension (`.yaml`, `.yml`, `.md`, `.xml`, `.csv`, `.json`,
 *   `.txt`) not followed by a word character; the longest such path from the leftmost start.
 * Each character is looked at a bounded number of times.
 */
function pathTokens(text: string): string[] {
  const tokens: string[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const ch = text[i];
    if (ch === '{') {
      const end = variableTokenEnd(text, i);
      if (end === -1) {
        i += 1;
      } else {
        tokens.push(text.slice(i, end));
        i = end;
      }
      continue;
    }
    if (!isSegmentChar(ch)) {
      i += 1;
      continue;
    }
    const end = segmentRunEnd(text, i);
    // The longest path ends at the last extension of the run; a later start in the same run could
    // only end at fewer places, so when there is none, the whole run holds no path.
    const stop = lastExtensionEnd(text, i, end);
    if (stop === -1) {
      i = end;
    } else {
      tokens.push(text.slice(i, stop));
      i = stop;
    }
  }
  return tokens;
}

/** End of the `{variable}...` token starting at `i` (`text[i]` is `{`), or -1 when none starts there. */
function variableTokenEnd(text: string, i: number): number {
  const n = text.length;
  let j = i + 1;
  while (j < n && isNameChar(text[j])) j++;
  if (j === i + 1 || text[j] !== '}') return -1;
  let k = j + 1;
  while (k < n && !isTokenEnd(text[k])) k++;
  return k;
}

/** End of the run of path segments joined by single slashes that starts at `i` (a segment character). */
function segmentRunEnd(text: string, i: number): number {
  const n = text.length;
  let end = i;
  for (;;) {
    while (end < n && isSegmentChar(text[end])) end++;
    if (text[end] === '/' && isSegmentChar(text[end + 1])) end++;
    else break;
  }
  return end;
}

/**
 * Words that may stand between "Read" and the file it names: "Read COMPLETE file {path}", "Read
 * and load {path}", "Read the entire document {path}", "Read into memory {path}". Compared in
 * lower case, without surrounding `*` (Markdown emphasis) nor a trailing `:` or `,`.
 */
const READ_FILLERS = new Set([
  'a',
  'all',
  'an',
  'and',
  'complete',
  'completely',
  'content',
  'contents',
  'document',
  'entire',
  'entirely',
  'file',
  'files',
  'from',
  'full',
  'fully',
  'in',
  'into',
  'load',
  'memory',
  'of',
  'permanent',
  'the',
  'this',
  'whole',
]);

/** Characters that may open or close a file token after "Read" (quotes, Markdown code and emphasis). */
const QUOTES = '`\'"*';

/**
 * The files a "Read" line names as its object (see the module comment): after "Read", only
 * `READ_FILLERS` words, then a path token starting a word, then more tokens joined by `,`, `and`
 * or `&`. Anything else first, and the line names no file. Linear: each character is looked at a
 * bounded number of times.
 */
function readObjectTokens(text: string): string[] {
  const n = text.length;
  let i = skipSpaces(text, 0);
  // The filler words.
  for (;;) {
    let end = i;
    while (end < n && !WHITESPACE.test(text[end])) end++;
    if (end === i || !READ_FILLERS.has(trimChars(text.slice(i, end), '*:,').toLowerCase())) break;
    i = skipSpaces(text, end);
  }
  const tokens: string[] = [];
  for (;;) {
    while (i < n && QUOTES.includes(text[i])) i++;
    const end = text[i] === '{' ? variableTokenEnd(text, i) : tokenPathEnd(text, i);
    if (end === -1) break;
    tokens.push(text.slice(i, end));
    i = end;
    while (i < n && QUOTES.includes(text[i])) i++;
    if (text[i] === ',') i++;
    i = skipSpaces(text, i);
    if (isWordAt(text, i, 'and')) i = skipSpaces(text, i + 3);
    else if (text[i] === '&') i = skipSpaces(text, i + 1);
    else if (text[i - 1] !== ',' && !WHITESPACE.test(text[i - 1] ?? '')) break;
  }
  return tokens;
}

/** End of the relative path token that starts exactly at `i`, or -1 (see `pathTokens`). */
function tokenPathEnd(text: string, i: number): number {
  if (!isSegmentChar(text[i])) return -1;
  return lastExtensionEnd(text, i, segmentRunEnd(text, i));
}

function skipSpaces(text: string, i: number): number {
  while (i < text.length && WHITESPACE.test(text[i])) i++;
  return i;
}

/** End of the last `.<extension>` in `text[from, to)` that follows a non-slash and ends a word, or -1. */
function lastExtensionEnd(text: string, from: number, to: number): number {
  for (let dot = to - 1; dot > from; dot--) {
    if (text[dot] !== '.' || text[dot - 1] === '/') continue;
    for (const ext of EXTENSIONS) {
      const stop = dot + 1 + ext.length;
      if (stop <= to && text.startsWith(ext, dot + 1) && !isWordChar(text[stop])) return stop;
    }
  }
  return -1;
}

function isNameChar(ch: string): boolean {
  return isWordChar(ch) || ch === '-';
}

function isSegmentChar(ch: string | undefined): boolean {
  return ch !== undefined && (isWordChar(ch) || ch === '.' || ch === '-');
}

function isTokenEnd(ch: string): boolean {
  return TOKEN_END.includes(ch) || WHITESPACE.test(ch);
}

/** `text` without its trailing characters from `chars`. */
function trimEndChars(text: string, chars: string): string {
  let end = text.length;
  while (end > 0 && chars.includes(text[end - 1])) end--;
  return text.slice(0, end);
}

/** `text` without its leading and trailing characters from `chars`. */
function trimChars(text: string, chars: string): string {
  let start = 0;
  while (start < text.length && chars.includes(text[start])) start++;
  return trimEndChars(text.slice(start), chars);
}

/** Whether the last `.` of `text` is followed by one or more ASCII letters or digits only. */
function hasExtension(text: string): boolean {
  const dot = text.lastIndexOf('.');
  if (dot === -1 || dot === text.length - 1) return false;
  for (let i = dot + 1; i < text.length; i++) {
    const ch = text[i];
    if (!(isAsciiLetter(ch) || (ch >= '0' && ch <= '9'))) return false;
  }
  return true;
}

/** Whether `token` is exactly one `{variable}`: `{notes_file}`, not `{a}/b.md` nor `{{x}}`. */
function isLoneVariable(token: string): boolean {
  if (token.length < 3 || token[0] !== '{' || token[token.length - 1] !== '}') return false;
  for (let i = 1; i < token.length - 1; i++) if (!isNameChar(token[i])) return false;
  return true;
}

/**
 * Whether a variable's resolved value names a file: one line, no URL, not ending in a slash, and
 * either a path (absolute, or with a slash and no white space) whose last segment has an extension
 * with a letter (`notes.md`, `config.yaml`; not `docs`, not `6.0.0`), or a bare name with a known
 * extension (`notes.md`). `{output_folder}` (`/p/docs`), `{user_name}` (`Bryan`) and `{date}` are
 * not files. Linear in the value's length.
 */
export function isFilePathValue(value: string): boolean {
  if (value === '' || /[\r\n\u2028\u2029]/.test(value) || value.includes('://')) return false;
  if (value.endsWith('/') || value.endsWith(path.sep)) return false;
  const slash = Math.max(value.lastIndexOf('/'), value.lastIndexOf(path.sep));
  const last = value.slice(slash + 1);
  const dot = last.lastIndexOf('.');
  if (dot <= 0 || !hasExtension(last)) return false;
  const ext = last.slice(dot + 1);
  if (!/[A-Za-z]/.test(ext)) return false;
  if (path.isAbsolute(value)) return true;
  if (/\s/.test(value)) return false;
  return slash !== -1 || EXTENSIONS.includes(ext.toLowerCase());
}

/**
 * Resolutions of one instruction share one budget of `MAX_VARIABLE_EXPANSION_CHARS` characters,
 * so an instruction naming thousands of variables with long values stays as cheap as one
 * resolution (each resolution is bounded by the same limit on its own).
 */
export class ExpansionBudget {
  private left = MAX_VARIABLE_EXPANSION_CHARS;

  resolve(text: string, variables: Record<string, string>, options: { date?: string; strict?: boolean }): string {
    const value = resolveVariables(text, variables, options);
    this.left -= value.length;
    if (this.left < 0) {
      throw new LimitExceededError(
        `Variable expansion too large: the paths of one critical action expand to more than ${MAX_VARIABLE_EXPANSION_CHARS} characters`,
        'MAX_VARIABLE_EXPANSION_CHARS',
        MAX_VARIABLE_EXPANSION_CHARS,
      );
    }
    return value;
  }
}
