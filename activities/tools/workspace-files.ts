/**
 * What the workspace tools (`list_files`, `search_files`) share: where a walk starts (a path
 * resolved like `read_file`'s, but relative to the project root, and checked by the same read
 * guard), the walk of a folder by glob, the check of each file found (the read guard again, so
 * secret files and paths outside the read roots are left out exactly as `read_file` refuses them),
 * and how a path is shown to the model (relative to the project root).
 *
 * The walk (tinyglobby) neither follows nor lists symbolic links, so nothing outside the roots is
 * ever entered and a link loop cannot spin; it does not enter `node_modules` or `.git` below where
 * it starts; and it stops after `MAX_VISITED_ENTRIES` folder entries, saying so.
 */
import { type Dirent, promises as fs, readdir } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import * as path from 'node:path';
import { type FileSystemAdapter, glob, isDynamicPattern } from 'tinyglobby';
import type { RuntimeContext } from '../../common/runtime-context';
import { BundleError } from '../../bundle/errors';
import { errorCode, MODEL_FIXABLE_CODES } from '../../bundle/file-errors';
import { guardRead, isInside, type ReadGuardOptions, resolveRealPath, secretOptionsOf } from '../../bundle/sandbox/path-guard';
import { BINARY_SNIFF_BYTES, openRegularFile } from '../../bundle/text-content';
import { resolveVariables } from '../../bundle/variables';
import { readRootsOf } from './read-file';

/** Most folder entries one walk looks at before it stops (a huge tree must not hold a worker). */
export const MAX_VISITED_ENTRIES = 100_000;

/** Most files one call checks (list) or reads (search). */
export const MAX_EXAMINED_FILES = 5_000;

/** Folders a walk does not enter below where it starts (naming one as the start still walks it). */
const SKIPPED_FOLDERS = ['**/node_modules/**', '**/.git/**'];

/** How many files are checked at once. */
const CHECK_BATCH = 16;

/** What every check of one call needs, worked out once. */
export interface ReadScope {
  /** The read roots of `read_file` (the session's, and its skills folders). */
  roots: string[];
  secrets: ReadGuardOptions;
  /** The project root's real path: shown paths are relative to it. */
  projectRoot: string;
}

export async function readScope(ctx: RuntimeContext): Promise<ReadScope> {
  return { roots: readRootsOf(ctx), secrets: secretOptionsOf(ctx), projectRoot: await resolveRealPath(ctx.projectRoot) };
}

/**
 * A path argument as an absolute path: variables resolved strictly (an unknown one is an error
 * naming it, as in `read_file`), a relative path taken from the project root. Not yet checked.
 */
export function absolutePathOf(ctx: RuntimeContext, given: string): string {
  return path.resolve(ctx.projectRoot, resolveVariables(given, ctx.variables, { strict: true }));
}

/**
 * Checks `absolute` with the read guard and returns its real path and whether it is a folder.
 * Throws what the guard throws (`SecurityViolationError`, `SecretFileError`, ENOENT).
 */
export async function guardedStart(absolute: string, scope: ReadScope): Promise<{ real: string; folder: boolean }> {
  const real = await guardRead(absolute, scope.roots, scope.secrets);
  return { real, folder: (await fs.stat(real)).isDirectory() };
}

/**
 * A glob split where its first wildcard segment starts: `_bmad/**\/*.md` gives the folder `_bmad`
 * and the glob `**\/*.md`; `/p/docs/*.md` gives `/p/docs` and `*.md`; a glob without wildcards is
 * all folder (`docs/prd.md`, glob `''`). The folder part may hold `..` (the guard then checks where
 * it leads); the glob part may not, nor may it be absolute, so the walk never leaves its folder.
 */
export function splitGlob(pattern: string): { folder: string; glob: string } {
  const segments = pattern.split('/');
  // A brace may hold a slash ({docs/a,b}/*.md): its segment and all after it are glob.
  const first = segments.findIndex((segment) => segment.includes('{') || isDynamicPattern(segment));
  if (first === -1) return { folder: pattern, glob: '' };
  const rest = segments.slice(first);
  if (rest.includes('..')) throw new GlobError(pattern, '".." may not follow a wildcard; put the folder before it');
  const folder = segments.slice(0, first).join('/');
  return { folder: folder === '' && pattern.startsWith('/') ? '/' : folder, glob: rest.join('/') };
}

/** A glob the tools cannot use: the message names it and says why. */
export class GlobError extends BundleError {
  constructor(pattern: string, why: string) {
    super(`Invalid glob: "${pattern}": ${why}`);
  }
}

/** What a walk found: absolute paths, sorted, and whether it stopped at `MAX_VISITED_ENTRIES`. */
export interface Walked {
  files: string[];
  cut: boolean;
}

/**
 * The files below the real folder `folder` whose paths relative to it match `pattern`, sorted;
 * see the module comment for what is not entered or listed. An aborted `signal` stops the walk and
 * is thrown.
 */
export async function walk(folder: string, pattern: string, signal?: AbortSignal): Promise<Walked> {
  const limit = new AbortController();
  let visited = 0;
  // tinyglobby stops when its signal aborts and returns what it found so far.
  const counting = ((dir: string, options: { withFileTypes: true }, callback: (error: NodeJS.ErrnoException | null, entries: Dirent[]) => void) =>
    readdir(dir, options, (error, entries) => {
      visited += entries?.length ?? 0;
      if (visited > MAX_VISITED_ENTRIES) limit.abort();
      callback(error, entries);
    })) as unknown as FileSystemAdapter['readdir'];
  let files: string[];
  try {
    files = await glob(pattern, {
      cwd: folder,
      absolute: true,
      dot: true,
      onlyFiles: true,
      expandDirectories: false,
      followSymbolicLinks: false,
      ignore: SKIPPED_FOLDERS,
      fs: { readdir: counting },
      signal: signal === undefined ? limit.signal : AbortSignal.any([signal, limit.signal]),
    });
  } catch (error) {
    signal?.throwIfAborted();
    throw new GlobError(pattern, (error as Error).message);
  }
  signal?.throwIfAborted();
  return { files: files.sort(), cut: limit.signal.aborted };
}

/**
 * The real path of `candidate` when `read_file` could read it as far as the guard is concerned
 * (inside the read roots, not a secret file), else `undefined`. A file that vanished or cannot be
 * looked at is left out too; any other error (an I/O fault) is thrown.
 */
export async function readablePath(candidate: string, scope: ReadScope): Promise<string | undefined> {
  try {
    return await guardRead(candidate, scope.roots, scope.secrets);
  } catch (error) {
    if (error instanceof BundleError || MODEL_FIXABLE_CODES.has(errorCode(error) ?? '')) return undefined;
    throw error;
  }
}

/**
 * Runs `check` on each of `items` in order, a few at once, keeping the order of the results; stops
 * taking new items once `enough` says so (and between batches when `signal` aborts, throwing).
 */
export async function inBatches<T, R>(items: readonly T[], check: (item: T) => Promise<R>, enough: (done: R[]) => boolean, signal?: AbortSignal): Promise<R[]> {
  const done: R[] = [];
  for (let i = 0; i < items.length && !enough(done); i += CHECK_BATCH) {
    signal?.throwIfAborted();
    done.push(...(await Promise.all(items.slice(i, i + CHECK_BATCH).map(check))));
  }
  return done;
}

/**
 * Whether the file at `realPath` (a path the guard accepted) is text as `read_file` sees it, from
 * its first bytes: no NUL, valid UTF-8. Opened as `read_file` opens it (a regular file, no hard
 * links unless the session allows them); `undefined` when it cannot be opened so.
 */
export async function looksLikeText(realPath: string, ctx: RuntimeContext): Promise<boolean | undefined> {
  let opened: Awaited<ReturnType<typeof openRegularFile>>;
  try {
    opened = await openRegularFile(realPath, { allowHardLinks: ctx.allowHardLinks === true });
  } catch (error) {
    if (error instanceof BundleError || MODEL_FIXABLE_CODES.has(errorCode(error) ?? '')) return undefined;
    throw error;
  }
  try {
    const head = Buffer.alloc(Math.min(BINARY_SNIFF_BYTES, opened.stat.size));
    const { bytesRead } = await opened.handle.read(head, 0, head.length, 0);
    const bytes = head.subarray(0, bytesRead);
    if (bytes.includes(0)) return false;
    return isUtf8(bytes.subarray(0, bytesRead < opened.stat.size ? lastCharacterStart(bytes) : bytesRead));
  } finally {
    await opened.handle.close();
  }
}

/** Where the last (maybe cut) UTF-8 character of `bytes` starts, so a head cut mid-character still checks as UTF-8. */
function lastCharacterStart(bytes: Uint8Array): number {
  let i = bytes.length - 1;
  // Continuation bytes are 10xxxxxx; a character has at most three of them.
  while (i > 0 && i > bytes.length - 4 && (bytes[i]! & 0xc0) === 0x80) i--;
  return Math.max(0, i);
}

/** `realPath` as the model is shown it: relative to the project root when inside it, else absolute. */
export function shownPath(realPath: string, scope: ReadScope): string {
  return isInside(realPath, scope.projectRoot, true) ? path.relative(scope.projectRoot, realPath).split(path.sep).join('/') : realPath;
}

/** `n` with thousands separators, for notes. */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}
