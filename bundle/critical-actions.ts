/**
 * Runs an agent's critical actions at initialisation, as the execution spec describes: file loads
 * become `[Critical Action] Loaded file: <path>` system messages (a config's keys become variables
 * for every later action), everything else becomes a `[Critical Instruction] <text>` message with
 * the variables known so far filled in. Only files named by critical actions are read here;
 * workflows, templates and instructions are left for the model to load through tools.
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
 *
 * A loaded `.yaml`/`.yml` file is a config when its name is `config.yaml`/`config.yml` or the
 * instruction says "set variable(s)"; all its top-level scalar keys become variables (the list
 * after "set variables" is informational: real agents list keys their config lacks). The same file
 * named twice is loaded once. Files are read with `readTextFile` (regular files only, so a FIFO
 * is refused at once; hard links only when the user allows them) through `guardRead` (secret
 * files only when the user allows them).
 *
 * A named file that does not exist, or whose path holds a variable that does not resolve, does not
 * stop the agent: a `[Critical Action] Could not load file: <path> (<why>)` message takes its place
 * and a line goes to `warnings`; with `strict` it throws `CriticalActionError` instead. Everything
 * else that keeps a file from loading (a path outside the roots, a secret file, a file too large,
 * binary or not regular, a config that does not parse, a variable cycle) throws
 * `CriticalActionError`, unless `keepGoing` (for `inspect`) turns it into a warning too.
 */
import * as path from 'node:path';
import type { SystemMessage } from '../common/messages';
import type { AgentDefinition } from './agent-schema';
import type { BundleInfo } from './bundle-loader';
import { BundleError, ConfigVariableNotFoundError, CriticalActionError, inFile, LimitExceededError, SecurityViolationError } from './errors';
import { errorCode } from './file-errors';
import { MAX_VARIABLE_EXPANSION_CHARS } from './limits';
import { guardRead } from './path-guard';
import { parseYamlSafe } from './safe-yaml';
import { readTextFile } from './text-content';
import { findUnresolved, resolveConfigVariables, resolveVariables } from './variables';

/** What critical actions need besides the agent. */
export interface CriticalActionContext {
  bundle: BundleInfo;
  /** The agent file (absolute); kept for error reports. */
  agentFile: string;
  /** Variables known before the first action: the path variables, usually. */
  variables: Record<string, string>;
  /** Value of `{date}` (default today). */
  date?: string;
  /** Largest file a critical action may load, in bytes (default: no limit beyond memory). */
  maxReadBytes?: number;
  /** Let secret files (`.env*`, keys...) be loaded: the user's own setting, never a bundle's. */
  allowSecretFiles?: boolean;
  /** Let files with more than one hard link be loaded: the user's own setting. */
  allowHardLinks?: boolean;
  /** A missing file, or a load path with a variable that does not resolve, throws (default: a warning). */
  strict?: boolean;
  /**
   * Never throw `CriticalActionError`: every problem becomes a warning and the actions go on
   * (`inspect`, which shows an agent whatever is wrong with it). Never set for a session.
   */
  keepGoing?: boolean;
}

/** Messages for the model's context and the variables known after the last action. */
export interface CriticalActionResult {
  messages: SystemMessage[];
  variables: Record<string, string>;
  /** The first config file loaded, if any (also `{config_source}` in `variables`). */
  configPath?: string;
  /** Real paths of the files loaded, in order, without repeats. */
  loadedFiles: string[];
  /** One human-readable line per problem met (`Critical action: could not load <path> (not found)`). */
  warnings: string[];
  /**
   * With `keepGoing`: whether one of the `warnings` would have stopped a session (thrown without
   * `keepGoing`). Always false otherwise, since such a problem throws.
   */
  wouldStop: boolean;
}

/**
 * Most problems reported one by one in a run; the rest are counted in one last line, so a bundle
 * naming thousands of missing files cannot flood the session's history.
 */
export const MAX_REPORTED_LOAD_PROBLEMS = 100;

// Every pattern here runs in linear time: the line prefix, the path tokens and the object of a
// "Read" are scanned by hand (see `loadLine`, `pathTokens` and `readObjectTokens`), since their
// natural regular expressions backtrack exponentially (30 `!` took seconds) or quadratically (a
// 100,000-character word took 9 s).
const SET_VARIABLES = /\bset\s+variables?\b|\bsession variables\b/i;
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
function targetsOf(instruction: string, resolve: (text: string) => string): string[] {
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
  'a', 'all', 'an', 'and', 'complete', 'completely', 'content', 'contents', 'document', 'entire', 'entirely',
  'file', 'files', 'from', 'full', 'fully', 'in', 'into', 'load', 'memory', 'of', 'permanent', 'the', 'this', 'whole',
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
class ExpansionBudget {
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

/** The path a missing-file error names (the guard's real path), else `fallback`. */
function missingPath(error: unknown, fallback: string): string {
  const p = typeof error === 'object' && error !== null && 'path' in error ? (error as { path?: unknown }).path : undefined;
  return typeof p === 'string' && p !== '' ? p : fallback;
}

function spell(variable: string): string {
  return variable.startsWith('config_source:') ? `{config_source}:${variable.slice('config_source:'.length)}` : `{${variable}}`;
}

function firstLine(text: string): string {
  const end = text.search(/\r|\n/);
  return end === -1 ? text : text.slice(0, end);
}

/** Runs the agent's critical actions in order (see the module comment). */
export async function processCriticalActions(agent: AgentDefinition, ctx: CriticalActionContext): Promise<CriticalActionResult> {
  return new CriticalActionRun(ctx).run(agent);
}

/** One run of an agent's critical actions: the state they share. */
class CriticalActionRun {
  private readonly roots: string[];
  private readonly messages: SystemMessage[] = [];
  private readonly loadedFiles: string[] = [];
  private readonly warnings: string[] = [];
  private variables: Record<string, string>;
  private configPath: string | undefined;
  private wouldStop = false;
  private reported = 0;
  private omitted = 0;
  private readonly resolveOptions: { date?: string };

  constructor(private readonly ctx: CriticalActionContext) {
    this.roots = [ctx.bundle.bundleRoot, ctx.bundle.coreRoot, ctx.bundle.projectRoot];
    this.variables = { ...ctx.variables };
    this.resolveOptions = ctx.date !== undefined ? { date: ctx.date } : {};
  }

  async run(agent: AgentDefinition): Promise<CriticalActionResult> {
    for (const instruction of agent.criticalActions) await this.action(instruction);
    if (this.omitted > 0) {
      this.messages.push({ role: 'system', content: `[Critical Action] ${this.omitted} more file(s) could not be loaded` });
      this.warnings.push(`Critical action: ${this.omitted} more problem(s) not listed`);
    }
    return {
      messages: this.messages,
      variables: this.variables,
      ...(this.configPath !== undefined ? { configPath: this.configPath } : {}),
      loadedFiles: this.loadedFiles,
      warnings: this.warnings,
      wouldStop: this.wouldStop,
    };
  }

  private async action(instruction: string): Promise<void> {
    const budget = new ExpansionBudget();
    let targets: string[];
    try {
      targets = targetsOf(instruction, (text) => budget.resolve(text, this.variables, this.resolveOptions));
    } catch (error) {
      // A variable cycle or an expansion over its limit: the action cannot be judged.
      this.fatal(instruction, error, `Critical action: cannot run "${firstLine(instruction)}" (${messageOf(error)})`);
      this.messages.push({ role: 'system', content: `[Critical Instruction] ${instruction}` });
      return;
    }
    if (targets.length === 0) {
      let text: string;
      try {
        text = resolveVariables(instruction, this.variables, this.resolveOptions);
      } catch (error) {
        // A variable cycle or an expansion over its limit: the instruction cannot be given.
        this.fatal(instruction, error, `Critical action: cannot give the instruction "${firstLine(instruction)}" (${messageOf(error)})`);
        text = instruction;
      }
      this.messages.push({ role: 'system', content: `[Critical Instruction] ${text}` });
      return;
    }
    for (const target of targets) {
      if (!(await this.load(instruction, target, budget))) return;
    }
  }

  /** Loads one target; false when the rest of the instruction is to be skipped (keepGoing after a fatal problem). */
  private async load(instruction: string, target: string, budget: ExpansionBudget): Promise<boolean> {
    let resolved: string;
    try {
      resolved = budget.resolve(target, this.variables, { ...this.resolveOptions, strict: true });
    } catch (error) {
      if (error instanceof ConfigVariableNotFoundError) {
        this.couldNotLoad(instruction, error, target, `${this.unresolvedIn(target)} does not resolve`);
        return true;
      }
      this.fatal(instruction, error, `Critical action: could not load ${target} (${messageOf(error)})`, target);
      return false;
    }
    let realPath: string;
    let content: string;
    try {
      realPath = await guardRead(resolved, this.roots, { allowSecretFiles: this.ctx.allowSecretFiles === true });
      if (this.loadedFiles.includes(realPath)) return true;
      const maxBytes = this.ctx.maxReadBytes ?? Number.MAX_SAFE_INTEGER;
      content = (await readTextFile(realPath, maxBytes, undefined, { allowHardLinks: this.ctx.allowHardLinks === true })).content;
    } catch (error) {
      const code = errorCode(error);
      if (!(error instanceof SecurityViolationError) && (code === 'ENOENT' || code === 'ENOTDIR')) {
        this.couldNotLoad(instruction, error, missingPath(error, resolved), 'not found');
        return true;
      }
      // A refusal names the path as written: a path outside the roots is never revealed.
      this.fatal(instruction, error, `Critical action: could not load ${target} (${messageOf(error)})`, target);
      return true;
    }
    this.loadedFiles.push(realPath);
    this.messages.push({ role: 'system', content: `[Critical Action] Loaded file: ${realPath}\n\n${content}` });
    if (isConfig(realPath, instruction)) this.useConfig(instruction, realPath, content);
    return true;
  }

  /** A config's keys become variables; the first config loaded is the config source. */
  private useConfig(instruction: string, realPath: string, content: string): void {
    let own: Record<string, string>;
    try {
      const config = parseConfig(content, realPath);
      own = resolveConfigVariables(config, this.variables, this.resolveOptions);
    } catch (error) {
      // A config that does not parse, a cycle (`output_folder: '{output_folder}/docs'`) or a limit:
      // the config is at fault.
      const cause = error instanceof BundleError ? inFile(error, realPath) : error;
      this.fatal(instruction, cause, `Critical action: config ${realPath} not used (${messageOf(cause)})`);
      return;
    }
    this.variables = { ...this.variables, ...own };
    if (this.configPath === undefined) {
      this.configPath = realPath;
      this.variables.config_source = realPath;
    }
  }

  /** The variables of `target` that do not resolve, spelled as written: `variable {a}`, `variables {a}, {b}`. */
  private unresolvedIn(target: string): string {
    let names: string[];
    try {
      names = findUnresolved(resolveVariables(target, this.variables, this.resolveOptions));
    } catch {
      names = [];
    }
    if (names.length === 0) names = findUnresolved(target);
    return `${names.length === 1 ? 'variable' : 'variables'} ${names.map(spell).join(', ')}`;
  }

  /** A named file that could not be loaded but need not stop the agent: missing, or its path does not resolve. */
  private couldNotLoad(instruction: string, error: unknown, shown: string, why: string): void {
    if (this.ctx.strict && !this.ctx.keepGoing) throw new CriticalActionError(instruction, error, { file: this.ctx.agentFile });
    const stops = this.ctx.strict === true;
    if (stops) this.wouldStop = true;
    this.report(
      `[Critical Action] Could not load file: ${shown} (${why})`,
      `Critical action: could not load ${shown} (${why})${stops ? '; a session stops here (strict)' : ''}`,
    );
  }

  /** A problem that stops a session: throws, unless `keepGoing` (then a warning, and a message when a file was named). */
  private fatal(instruction: string, error: unknown, warning: string, target?: string): void {
    if (!this.ctx.keepGoing) throw new CriticalActionError(instruction, error, { file: this.ctx.agentFile });
    this.wouldStop = true;
    const message = target === undefined ? undefined : `[Critical Action] Could not load file: ${target} (${messageOf(error)})`;
    this.report(message, `${warning}; a session stops here`);
  }

  private report(message: string | undefined, warning: string): void {
    if (this.warnings.includes(warning)) return;
    if (this.reported >= MAX_REPORTED_LOAD_PROBLEMS) {
      this.omitted += 1;
      return;
    }
    this.reported += 1;
    if (message !== undefined) this.messages.push({ role: 'system', content: message });
    this.warnings.push(warning);
  }
}

/** The first line of an error's message (a refusal's message never names the path). */
function messageOf(error: unknown): string {
  return firstLine(error instanceof Error ? error.message : String(error));
}

function isConfig(file: string, instruction: string): boolean {
  const base = path.basename(file).toLowerCase();
  if (base === 'config.yaml' || base === 'config.yml') return true;
  return /\.ya?ml$/.test(base) && SET_VARIABLES.test(instruction);
}

function parseConfig(content: string, configFile: string): Record<string, unknown> {
  const parsed = parseYamlSafe(content, configFile);
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new Error(`config file ${configFile} is not a mapping of keys to values`);
  }
  return parsed as Record<string, unknown>;
}
