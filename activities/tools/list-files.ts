/**
 * The `list_files` tool: the files matching a glob, sorted, as paths relative to the project root,
 * keeping out what `read_file` would refuse (see workspace-files.ts). Every expected failure is a
 * result for the model, never an exception.
 */
import * as path from 'node:path';
import type { ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { LIST_FILES } from '../../common/tools/list-files';
import { errorCode } from '../../bundle/file-errors';
import { resolveVariables } from '../../bundle/variables';
import type { ToolImplementation, ToolRunOptions } from './activity-wrapper';
import { parseArgsOf } from './parse-args';
import { toToolFailure } from './tool-failure';
import { absolutePathOf, count, guardedStart, inBatches, looksLikeText, MAX_EXAMINED_FILES, MAX_VISITED_ENTRIES, readablePath, readScope, shownPath, splitGlob, walk } from './workspace-files';

/** Most paths one call lists. */
export const MAX_LISTED_FILES = 1_000;

/**
 * Runs `list_files` for the session `ctx`: returns `{success: true, files, note?}` (`files` sorted,
 * relative to the project root, absolute when outside it; `note` says what was left out or cut) or
 * `{success: false, error}`. The pattern's variables are resolved strictly; a relative pattern is
 * taken from `path` (default the project root). The part of the pattern before its first wildcard
 * is where the walk starts, checked by the read guard. At most `MAX_LISTED_FILES` paths are listed
 * and `MAX_EXAMINED_FILES` checked; binary files are left out (their count is in the note). When
 * `options.signal` is aborted the walk stops and the signal's reason is thrown. A pattern without
 * wildcards lists the file it names, or every file below the folder it names.
 */
export async function listFilesTool(ctx: RuntimeContext, args: unknown, options: ToolRunOptions = {}): Promise<ToolResult> {
  const parsed = parseArgsOf(LIST_FILES, args);
  if (!parsed.ok) return { success: false, error: parsed.error };
  const { pattern, path: base } = parsed.value;
  try {
    const scope = await readScope(ctx);
    // A pattern that starts with a variable (or `/`) names its own folder; otherwise it lies below `path`.
    const resolved = resolveVariables(pattern, ctx.variables, { strict: true });
    const full = path.isAbsolute(resolved) || base === undefined ? path.resolve(ctx.projectRoot, resolved) : path.resolve(absolutePathOf(ctx, base), resolved);
    const { folder, glob } = splitGlob(full);
    let start: { real: string; folder: boolean };
    try {
      start = await guardedStart(folder, scope);
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
      return { success: true, files: [], note: `Nothing matches: ${shownPath(folder, scope)} does not exist.` };
    }
    let candidates: string[];
    let cut = false;
    if (!start.folder) candidates = glob === '' ? [start.real] : [];
    else ({ files: candidates, cut } = await walk(start.real, glob === '' ? '**/*' : glob, options.signal));

    // Each candidate: its real path when listed, `binary`, or `undefined` when read_file could not read it.
    const checked = await inBatches(
      candidates.slice(0, MAX_EXAMINED_FILES),
      async (candidate): Promise<string | undefined> => {
        const real = await readablePath(candidate, scope);
        if (real === undefined) return undefined;
        const text = await looksLikeText(real, ctx);
        return text === undefined ? undefined : text ? real : BINARY;
      },
      (done) => listedOf(done).length >= MAX_LISTED_FILES,
      options.signal,
    );
    const examined = examinedCount(checked);
    const files = listedOf(checked.slice(0, examined));
    const binary = checked.slice(0, examined).filter((c) => c === BINARY).length;
    return { success: true, files: files.map((real) => shownPath(real, scope)), ...noteOf(files.length, candidates.length - examined, binary, cut) };
  } catch (error) {
    return toToolFailure(error);
  }
}

/** A candidate that is a binary file (a real path always starts with `/`). */
const BINARY = 'binary';

function listedOf(checked: readonly (string | undefined)[]): string[] {
  return checked.filter((c): c is string => c !== undefined && c !== BINARY);
}

/** How many of `checked` were needed to list `MAX_LISTED_FILES` paths (all of them when fewer were found). */
function examinedCount(checked: readonly (string | undefined)[]): number {
  let listed = 0;
  for (let i = 0; i < checked.length; i++) {
    if (checked[i] !== undefined && checked[i] !== BINARY && ++listed === MAX_LISTED_FILES) return i + 1;
  }
  return checked.length;
}

/** What the model should know about what was not listed, if anything. */
function noteOf(listed: number, unexamined: number, binary: number, cut: boolean): { note?: string } {
  const notes: string[] = [];
  if (unexamined > 0) notes.push(`Only the first ${count(listed)} files are listed; ${count(unexamined)} more paths match: narrow the pattern or path.`);
  if (cut) notes.push(`The walk stopped after ${count(MAX_VISITED_ENTRIES)} folder entries, so some files may be missing: narrow the pattern or path.`);
  if (binary > 0) notes.push(`${count(binary)} binary ${binary === 1 ? 'file is' : 'files are'} not listed.`);
  if (listed === 0 && notes.length === 0) notes.push('No file matches. Patterns are relative to the project root; ** matches any number of folders (e.g. **/*.md).');
  return notes.length > 0 ? { note: notes.join(' ') } : {};
}

/** `list_files`: its definition and what runs it. */
export const listFiles: ToolImplementation = { spec: LIST_FILES, run: listFilesTool };
