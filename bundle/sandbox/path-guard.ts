/**
 * The security checks every file access goes through, after variable resolution and before the
 * file is touched: normalise, resolve symlinks, and require the real path to lie inside an allowed
 * root. A refusal for leaving the roots is always `SecurityViolationError` with the fixed message
 * `Security violation: Access denied`, whatever the reason, so the outside path is never revealed.
 *
 * Relative paths are resolved against the first root (the bundle root for reads, the first output
 * folder for writes), never against the worker's working directory.
 *
 * Inside the roots, some files are still refused, with a message that says why (their path is
 * inside the roots, so naming it reveals nothing):
 * - secret files (`secret-files.ts`: credentials, keys, `.env*`, `.git/`, cloud and package-manager
 *   logins, plus the project's and session's own rules) are neither read nor written unless the
 *   user allows them (`allowSecretFiles`), since a project's secrets should not be handed to the
 *   model (nor a hook written into `.git/hooks`); `SecretFileError` names the rule;
 * - for writes, the protected paths (`protected-paths.ts`): every file the bundle loader would read
 *   next time (agents, configs, templates, an installed tree's `bmad/`...), since what the model
 *   wrote there would be what every later session runs (`ProtectedFileError`).
 *
 * This module also holds the checks on the roots themselves (`isBroadRoot`, `resolveRealPath`),
 * used when a session's roots are chosen (see `initializeAgent` and `loadBundle`).
 *
 * Limits: the check and the later open are separate system calls. Readers open with
 * `openRegularFile` (see `text-content.ts`), which refuses a symlink swapped in between.
 * Writers (`bundle/sandbox/atomic-write.ts`) create every folder and file through folder
 * descriptors opened from the real root without following links, and check again after, so a
 * folder swapped for a symlink between the check and the write is refused, not written through.
 * A path that changes while it is being resolved here is resolved again, a bounded number of times.
 */
import { promises as fs, type Stats } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BundleError, SecurityViolationError } from '../errors';
import { errorCode } from '../file-errors';
import { isInside } from './path-inside';
import { ProtectedFileError, protectingEntry } from './protected-paths';
import { type SecretFileOptions, SecretFileError, secretMatch } from './secret-files';

export { isInside } from './path-inside';
export { BUNDLE_OWN_ENTRIES, bundleOwnEntries, ProtectedFileError, protectedPathsOf } from './protected-paths';
export { isSecretPath, SecretFileError, secretKind, secretOptionsOf } from './secret-files';

/** Symlink hops followed before a chain counts as a loop (the Linux kernel allows 40). */
const MAX_SYMLINK_HOPS = 40;

/**
 * Options of `guardRead`: `allowSecretFiles` (the user's own setting, never a bundle's) and the
 * session's own secret-file rules (`secretFiles`); `secretOptionsOf(ctx)` gives both.
 */
export type ReadGuardOptions = SecretFileOptions;

/** Options of `guardWrite`: those of `guardRead`, and the paths never written. */
export interface WriteGuardOptions extends SecretFileOptions {
  /** Paths never written to, nor anything inside them (`protectedPathsOf(ctx)`; a `*` segment is any name). */
  protectedPaths?: string[];
}

/**
 * Checks a path for reading and returns its real (symlink-free, absolute) path.
 *
 * Refused (`SecurityViolationError`): a path outside every root, lexically (`..` escapes, absolute
 * paths elsewhere) or after resolving symlinks (a link pointing out, even a dangling one), a
 * symlink loop, a path with a NUL byte, an empty root list. A secret file inside the roots, by the
 * name it was asked for or by its real name (the default list, then `options.secretFiles`), is
 * refused with `SecretFileError` unless `options.allowSecretFiles`. A missing file inside the roots
 * is not a violation: it fails with Node's own `ENOENT: no such file or directory` error, so the
 * model can correct the path.
 */
export async function guardRead(resolvedPath: string, roots: string[], options: ReadGuardOptions = {}): Promise<string> {
  const checked = await check(resolvedPath, roots, false);
  if (!options.allowSecretFiles) refuseSecret(checked, 'read', options);
  if (!checked.exists) throw enoent(checked.real);
  return checked.real;
}

/**
 * Checks a path for writing and returns the real path to write to. The target need not exist: the
 * nearest existing parent is resolved and the missing segments appended. A target that is a
 * symlink (dangling or not) is followed, so a link pointing out of the roots is refused. The root
 * itself is not a valid target; everything strictly inside it is, except secret files
 * (`SecretFileError`, unless `options.allowSecretFiles`) and anything in `options.protectedPaths`
 * (`ProtectedFileError`, naming the protected path).
 */
export async function guardWrite(resolvedPath: string, roots: string[], options: WriteGuardOptions = {}): Promise<string> {
  const checked = await check(resolvedPath, roots, true);
  if (!options.allowSecretFiles) refuseSecret(checked, 'write', options);
  const real = checked.real;
  const protectedPaths = options.protectedPaths ?? [];
  const entry = protectingEntry(real, protectedPaths) ?? protectingEntry(checked.normalised, protectedPaths);
  if (entry !== undefined) throw new ProtectedFileError(real, entry);
  return real;
}

/** What `check` found: the real path, whether it exists, and what it was checked against. */
interface Checked {
  real: string;
  exists: boolean;
  /** The path asked for, absolute and normalised, symlinks not resolved. */
  normalised: string;
  lexicalRoots: string[];
  realRoots: string[];
}

async function check(resolvedPath: string, roots: string[], strict: boolean): Promise<Checked> {
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
  return { ...resolved, normalised, lexicalRoots, realRoots };
}

/** Throws `SecretFileError` when the path asked for, or its real path, is a secret file within a root holding it. */
function refuseSecret(checked: Checked, access: 'read' | 'write', options: SecretFileOptions): void {
  const candidates: [string, string[]][] = [
    [checked.normalised, [...checked.lexicalRoots, ...checked.realRoots]],
    [checked.real, checked.realRoots],
  ];
  for (const [p, roots] of candidates) {
    for (const root of roots) {
      if (!isInside(p, root)) continue;
      const match = secretMatch(path.relative(root, p), options.secretFiles);
      if (match !== undefined) throw new SecretFileError(p, match, access);
    }
  }
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
    // A name longer than the file system allows (e.g. a mangled variable in a root) names no file.
    if (code === 'ENAMETOOLONG') throw new SecurityViolationError('invalid-path');
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
  }
  const link = await lstatOrNull(p);
  if (link?.isSymbolicLink()) {
    // A dangling link: resolve its target (relative to the link's folder) the same way.
    let link: string;
    try {
      link = await fs.readlink(p);
    } catch (error) {
      // Swapped between the lstat and the readlink (no longer a link, or gone): look again, as a hop.
      const code = errorCode(error);
      if (code === 'EINVAL' || code === 'ENOENT' || code === 'ENOTDIR') return realpathLenient(p, hops + 1);
      throw error;
    }
    const target = path.resolve(path.dirname(p), link);
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

/** Node's own shape of a missing-file error, for a path already known to be inside the roots. */
function enoent(p: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`ENOENT: no such file or directory, open '${p}'`);
  error.code = 'ENOENT';
  error.errno = -2;
  error.syscall = 'open';
  error.path = p;
  return error;
}

/**
 * Whether `realPath` is too broad to be a project root: a file-system root (`/`), the user's home
 * folder, or a folder holding it (`/home`, `/Users`). Reading there would hand the model every
 * project, key and setting of the user's, so it takes the user's explicit say-so.
 */
export async function isBroadRoot(realPath: string): Promise<boolean> {
  const p = path.resolve(realPath);
  if (path.parse(p).root === p) return true;
  const home = await homeFolder();
  return home !== undefined && isInside(home, p);
}

/** The user's home folder, real path: `$HOME` (what `os.homedir()` returns on POSIX), else `os.homedir()`. */
async function homeFolder(): Promise<string | undefined> {
  let home: string;
  try {
    home = process.env.HOME || os.homedir();
  } catch {
    return undefined;
  }
  if (home === '') return undefined;
  return (await realpathLenient(path.resolve(home))).real;
}

/**
 * The real path `p` has, or would have once created: symlinks resolved (a dangling one followed to
 * where it points), missing segments appended to the real path of the nearest existing ancestor.
 */
export async function resolveRealPath(p: string): Promise<string> {
  return (await realpathLenient(path.resolve(p))).real;
}

/**
 * A root of the session cannot be trusted: it leads out of the project (an `output_folder` such as
 * `../../x` or `/`, a shipped symlink), or it is too broad (`/`, the home folder) without the
 * user's say-so. Raised at initialisation, before the model runs. `root` is the offending folder.
 */
export class UnsafeRootError extends BundleError {
  readonly root: string;

  constructor(message: string, root: string, details: { file?: string; field?: string } = {}) {
    super(message, details);
    this.root = root;
  }
}
