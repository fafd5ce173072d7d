/**
 * The security check every file access goes through, after variable resolution and before the
 * file is touched: normalise, resolve symlinks, and require the real path to lie inside an allowed
 * root. A refusal is always `SecurityViolationError` with the fixed message
 * `Security violation: Access denied`, whatever the reason, so the outside path is never revealed.
 *
 * Relative paths are resolved against the first root (the bundle root for reads, the first output
 * folder for writes), never against the worker's working directory.
 *
 * Limits: the check and the later open are separate system calls, so a symlink swapped in between
 * (by someone who can already write inside a root) is not caught.
 */
import { promises as fs, type Stats } from 'node:fs';
import * as path from 'node:path';
import { SecurityViolationError } from './errors';

/** Symlink hops followed before a chain counts as a loop (the Linux kernel allows 40). */
const MAX_SYMLINK_HOPS = 40;

/**
 * Checks a path for reading and returns its real (symlink-free, absolute) path.
 *
 * Refused (`SecurityViolationError`): a path outside every root, lexically (`..` escapes, absolute
 * paths elsewhere) or after resolving symlinks (a link pointing out, even a dangling one), a
 * symlink loop, a path with a NUL byte, an empty root list. A missing file inside the roots is not
 * a violation: it fails with Node's own `ENOENT: no such file or directory` error, so the model can
 * correct the path.
 */
export async function guardRead(resolvedPath: string, roots: string[]): Promise<string> {
  const { real, exists } = await check(resolvedPath, roots, false);
  if (!exists) throw enoent(real);
  return real;
}

/**
 * Checks a path for writing and returns the real path to write to. The target need not exist: the
 * nearest existing parent is resolved and the missing segments appended. A target that is a
 * symlink (dangling or not) is followed, so a link pointing out of the roots is refused. The root
 * itself is not a valid target; everything strictly inside it is.
 */
export async function guardWrite(resolvedPath: string, roots: string[]): Promise<string> {
  const { real } = await check(resolvedPath, roots, true);
  return real;
}

/** Whether `child` is `root` or lies beneath it; separator-aware, so `/a/bc` is not inside `/a/b`. */
export function isInside(child: string, root: string, strict = false): boolean {
  const rel = path.relative(root, child);
  if (rel === '') return !strict;
  return rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel);
}

async function check(
  resolvedPath: string,
  roots: string[],
  strict: boolean,
): Promise<{ real: string; exists: boolean }> {
  if (roots.length === 0) throw new SecurityViolationError('no-roots');
  if (typeof resolvedPath !== 'string' || resolvedPath.includes('\0')) {
    throw new SecurityViolationError('invalid-path');
  }
  const lexicalRoots = roots.map((root) => path.resolve(root));
  const normalised = path.resolve(lexicalRoots[0], resolvedPath);
  const realRoots = await Promise.all(lexicalRoots.map(async (root) => (await realpathLenient(root)).real));

  // Lexical containment first: a missing file outside is refused before anything is looked up.
  // Either spelling of a root counts (e.g. /tmp and /private/tmp on macOS).
  const allRoots = [...lexicalRoots, ...realRoots];
  if (!allRoots.some((root) => isInside(normalised, root, strict))) {
    throw new SecurityViolationError('outside-roots');
  }
  const resolved = await realpathLenient(normalised);
  if (!realRoots.some((root) => isInside(resolved.real, root, strict))) {
    throw new SecurityViolationError('outside-roots');
  }
  return resolved;
}

/**
 * The real path `p` has or would have: `fs.realpath` when it exists; otherwise the real path of the
 * nearest existing ancestor plus the missing segments, following a dangling symlink to where it
 * points (writing through it would create the file there).
 */
async function realpathLenient(p: string, hops = 0): Promise<{ real: string; exists: boolean }> {
  if (hops > MAX_SYMLINK_HOPS) throw new SecurityViolationError('symlink-loop');
  try {
    return { real: await fs.realpath(p), exists: true };
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ELOOP') throw new SecurityViolationError('symlink-loop');
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
  }
  const link = await lstatOrNull(p);
  if (link?.isSymbolicLink()) {
    // A dangling link: resolve its target (relative to the link's folder) the same way.
    const target = path.resolve(path.dirname(p), await fs.readlink(p));
    const followed = await realpathLenient(target, hops + 1);
    return { real: followed.real, exists: false };
  }
  const parent = path.dirname(p);
  if (parent === p) return { real: p, exists: false };
  const up = await realpathLenient(parent, hops);
  return { real: path.join(up.real, path.basename(p)), exists: false };
}

async function lstatOrNull(p: string): Promise<Stats | null> {
  try {
    return await fs.lstat(p);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw error;
  }
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

/** Node's own shape of a missing-file error, for a path already known to be inside the roots. */
function enoent(p: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`ENOENT: no such file or directory, open '${p}'`);
  error.code = 'ENOENT';
  error.errno = -2;
  error.syscall = 'open';
  error.path = p;
  return error;
}
