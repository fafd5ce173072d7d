/**
 * The `search_files` tool: the lines of text files that match a regular expression. The expression
 * runs on RE2JS, a linear-time engine (no backtracking), so a pattern such as `(a+)+$` on a long
 * line of `a`s costs what any other pattern costs instead of hanging the worker; what a call reads
 * and returns is bounded. Files are found and checked as `list_files` finds and checks them
 * (workspace-files.ts), then read as `read_file` reads them.
 */
import { RE2JS } from 're2js';
import type { ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { SEARCH_FILES } from '../../common/tools/search-files';
import { BundleError } from '../../bundle/errors';
import { errorCode, MODEL_FIXABLE_CODES } from '../../bundle/file-errors';
import { readTextFile } from '../../bundle/text-content';
import type { ToolImplementation, ToolRunOptions } from './activity-wrapper';
import { parseArgsOf } from './parse-args';
import { toToolFailure } from './tool-failure';
import { absolutePathOf, count, GlobError, guardedStart, MAX_EXAMINED_FILES, MAX_VISITED_ENTRIES, readablePath, type ReadScope, readScope, shownPath, walk } from './workspace-files';

/** Most matching lines one call returns. */
export const MAX_MATCHES = 200;
/** Longest piece of a matching line shown; a longer line is cut around its first match. */
export const MAX_LINE_CHARS = 300;
/** Most bytes one call reads (the file that crosses it is still searched whole). */
export const MAX_SEARCHED_BYTES = 20 * 1024 * 1024;
/** Longest regular expression accepted. */
export const MAX_PATTERN_CHARS = 1_000;

/**
 * Runs `search_files` for the session `ctx`: returns `{success: true, matches, searched, note?}`
 * (`matches` as `path:line: text`, path relative to the project root, absolute when outside it,
 * in path order; `searched` the number of files read; `note` what was skipped or cut) or
 * `{success: false, error}`. `path` (default the project root) is a folder, walked with `glob`
 * (default every file; a glob without `/` matches file names at any depth), or one file. Files
 * `read_file` would refuse are skipped: secret ones and those outside the read roots silently,
 * binary, too large or hard-linked ones counted in the note. Stops at `MAX_MATCHES` matches,
 * `MAX_EXAMINED_FILES` files or `MAX_SEARCHED_BYTES` bytes. An invalid expression is an error naming
 * it. When `options.signal` is aborted the search stops and the signal's reason is thrown.
 */
export async function searchFilesTool(ctx: RuntimeContext, args: unknown, options: ToolRunOptions = {}): Promise<ToolResult> {
  const parsed = parseArgsOf(SEARCH_FILES, args);
  if (!parsed.ok) return { success: false, error: parsed.error };
  const { pattern, path: given, glob, ignore_case: ignoreCase } = parsed.value;
  const compiled = compile(pattern, ignoreCase === true);
  if (typeof compiled === 'string') return { success: false, error: compiled };
  try {
    const scope = await readScope(ctx);
    const start = await guardedStart(given === undefined ? ctx.projectRoot : absolutePathOf(ctx, given), scope);
    let candidates = [start.real];
    let cut = false;
    if (start.folder) ({ files: candidates, cut } = await walk(start.real, globOf(glob), options.signal));
    const search = new Search(compiled, scope, ctx, options.signal);
    for (const candidate of candidates) {
      if (search.full()) break;
      await search.file(candidate);
    }
    const note = search.note(candidates.length, cut);
    return { success: true, matches: search.matches, searched: search.searched, ...(note !== undefined ? { note } : {}) };
  } catch (error) {
    return toToolFailure(error);
  }
}

/** The compiled expression, or the error the model is given. */
function compile(pattern: string, ignoreCase: boolean): RE2JS | string {
  if (pattern.length > MAX_PATTERN_CHARS) return `Invalid regular expression: it is ${pattern.length} characters long; the limit is ${MAX_PATTERN_CHARS}`;
  try {
    return RE2JS.compile(pattern, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (error) {
    return `Invalid regular expression: "${pattern}" (${(error as Error).message}); write it in RE2 syntax (no lookaround, no backreferences)`;
  }
}

/** The glob a folder is walked with: every file by default; one without `/` matches names at any depth. */
function globOf(glob: string | undefined): string {
  if (glob === undefined || glob.trim() === '') return '**/*';
  if (glob.startsWith('/') || glob.split('/').includes('..')) throw new GlobError(glob, 'it must be relative to path and stay below it');
  return glob.includes('/') ? glob : `**/${glob}`;
}

/** One call's search: what it found, read and skipped so far. */
class Search {
  readonly matches: string[] = [];
  searched = 0;
  private bytes = 0;
  /** Files read_file would refuse as binary, too large, hard-linked or not regular. */
  private skipped = 0;
  private examined = 0;

  constructor(
    private readonly re: RE2JS,
    private readonly scope: ReadScope,
    private readonly ctx: RuntimeContext,
    private readonly signal: AbortSignal | undefined,
  ) {}

  /** Whether a bound is reached. */
  full(): boolean {
    return this.matches.length >= MAX_MATCHES || this.examined >= MAX_EXAMINED_FILES || this.bytes >= MAX_SEARCHED_BYTES;
  }

  /** Searches `candidate` when read_file could read it, adding its matching lines. */
  async file(candidate: string): Promise<void> {
    this.signal?.throwIfAborted();
    this.examined++;
    const real = await readablePath(candidate, this.scope);
    if (real === undefined) return;
    let content: string;
    try {
      ({ content } = await readTextFile(real, this.ctx.maxReadBytes, this.signal, { allowHardLinks: this.ctx.allowHardLinks === true }));
    } catch (error) {
      this.signal?.throwIfAborted();
      if (error instanceof BundleError || MODEL_FIXABLE_CODES.has(errorCode(error) ?? '')) {
        this.skipped++;
        return;
      }
      throw error;
    }
    this.searched++;
    this.bytes += Buffer.byteLength(content);
    const shown = shownPath(real, this.scope);
    const lines = content.split('\n');
    for (let i = 0; i < lines.length && this.matches.length < MAX_MATCHES; i++) {
      const line = lines[i]!.endsWith('\r') ? lines[i]!.slice(0, -1) : lines[i]!;
      if (this.re.test(line)) this.matches.push(`${shown}:${i + 1}: ${this.excerpt(line)}`);
    }
  }

  /** `line`, or the part of it around its first match when it is longer than `MAX_LINE_CHARS`. */
  private excerpt(line: string): string {
    if (line.length <= MAX_LINE_CHARS) return line;
    const matcher = this.re.matcher(line);
    const at = matcher.find() ? matcher.start() : 0;
    const from = Math.max(0, Math.min(at - Math.floor(MAX_LINE_CHARS / 4), line.length - MAX_LINE_CHARS));
    return `${from > 0 ? '…' : ''}${line.slice(from, from + MAX_LINE_CHARS)}${from + MAX_LINE_CHARS < line.length ? '…' : ''}`;
  }

  /** What the model should know about what was not searched or returned, if anything. */
  note(candidates: number, cut: boolean): string | undefined {
    const notes: string[] = [];
    const narrow = 'narrow the pattern, path or glob to see the rest';
    if (this.matches.length >= MAX_MATCHES) notes.push(`Stopped at ${count(MAX_MATCHES)} matches: ${narrow}.`);
    else if (this.examined >= MAX_EXAMINED_FILES && this.examined < candidates) notes.push(`Stopped after ${count(MAX_EXAMINED_FILES)} files of ${count(candidates)}: ${narrow}.`);
    else if (this.bytes >= MAX_SEARCHED_BYTES && this.examined < candidates) notes.push(`Stopped after reading ${count(MAX_SEARCHED_BYTES / 1024 / 1024)} MB: ${narrow}.`);
    if (cut) notes.push(`The walk stopped after ${count(MAX_VISITED_ENTRIES)} folder entries, so some files were not searched: ${narrow}.`);
    if (this.skipped > 0) notes.push(`${count(this.skipped)} ${this.skipped === 1 ? 'file was' : 'files were'} skipped (binary, too large or not readable as text).`);
    if (candidates === 0) notes.push('No file to search: nothing under path matches the glob.');
    return notes.length > 0 ? notes.join(' ') : undefined;
  }
}

/** `search_files`: its definition and what runs it. */
export const searchFiles: ToolImplementation = { spec: SEARCH_FILES, run: searchFilesTool };
