/**
 * The security checks every file access goes through, after variable resolution and before the
 * file is touched: normalise, resolve symlinks, and require the real path to lie inside an allowed
 * root. A refusal for leaving the roots is always `SecurityViolationError` with the fixed message
 * `Security violation: Access denied`, whatever the reason, so the outside path is never revealed.
 *
 * Relative paths are resolved against the first root (the bundle root for reads, the first output
 * folder for writes), never against the worker's working directory.
 *
 * Inside the roots, a few files are still refused, with a message that says why (their path is
 * inside the roots, so naming it reveals nothing):
 * - secret files (`isSecretPath`: `.env*`, `.ssh/`, `.git/`, private keys...) are neither read nor
 *   written unless the user allows them (`allowSecretFiles`), since a project's secrets should not
 *   be handed to the model (nor a hook written into `.git/hooks`);
 * - for writes, the bundle's own files (`protectedPaths`): an agent, config or template the model
 *   overwrote would be what every later session runs.
 *
 * This module also holds the checks on the roots themselves (`isBroadRoot`, `resolveRealPath`),
 * used when a session's roots are chosen (see `initializeAgent` and `loadBundle`).
 *
 * Limits: the check and the later open are separate system calls. Readers open with
 * `openRegularFile` (see `text-content.ts`), which refuses a symlink swapped in between.
 * A write renames a new file into place, so it never writes through a link; a folder swapped for
 * a symlink between the check and the rename (by someone who can already write inside a root) is
 * not caught.
 */
import { promises as fs, type Stats } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RuntimeContext } from '../common/runtime-context';
import { BundleError, SecurityViolationError } from './errors';
import { errorCode } from './file-errors';

/** Symlink hops followed before a chain counts as a loop (the Linux kernel allows 40). */
const MAX_SYMLINK_HOPS = 40;

/** Options of `guardRead`. */
export interface ReadGuardOptions {
  /** Let secret files (`isSecretPath`) through: the user's own setting, never a bundle's. */
  allowSecretFiles?: boolean;
}

/** Options of `guardWrite`. */
export interface WriteGuardOptions {
  /** Let secret files (`isSecretPath`) through: the user's own setting, never a bundle's. */
  allowSecretFiles?: boolean;
  /** Real paths never written to, nor anything inside them: the bundle's own files. */
  protectedPaths?: string[];
}

/**
 * Checks a path for reading and returns its real (symlink-free, absolute) path.
 *
 * Refused (`SecurityViolationError`): a path outside every root, lexically (`..` escapes, absolute
 * paths elsewhere) or after resolving symlinks (a link pointing out, even a dangling one), a
 * symlink loop, a path with a NUL byte, an empty root list. A secret file inside the roots, by the
 * name it was asked for or by its real name, is refused with `SecretFileError` unless
 * `options.allowSecretFiles`. A missing file inside the roots is not a violation: it fails with
 * Node's own `ENOENT: no such file or directory` error, so the model can correct the path.
 */
export async function guardRead(resolvedPath: string, roots: string[], options: ReadGuardOptions = {}): Promise<string> {
  const checked = await check(resolvedPath, roots, false);
  if (!options.allowSecretFiles) refuseSecret(checked, 'read');
  if (!checked.exists) throw enoent(checked.real);
  return checked.real;
}

/**
 * Checks a path for writing and returns the real path to write to. The target need not exist: the
 * nearest existing parent is resolved and the missing segments appended. A target that is a
 * symlink (dangling or not) is followed, so a link pointing out of the roots is refused. The root
 * itself is not a valid target; everything strictly inside it is, except secret files
 * (`SecretFileError`, unless `options.allowSecretFiles`) and anything in `options.protectedPaths`
 * (`ProtectedFileError`).
 */
export async function guardWrite(resolvedPath: string, roots: string[], options: WriteGuardOptions = {}): Promise<string> {
  const checked = await check(resolvedPath, roots, true);
  if (!options.allowSecretFiles) refuseSecret(checked, 'write');
  const real = checked.real;
  if ((options.protectedPaths ?? []).some((p) => isInside(real, p) || isInside(checked.normalised, p))) {
    throw new ProtectedFileError(real);
  }
  return real;
}

/** Whether `child` is `root` or lies beneath it; separator-aware, so `/a/bc` is not inside `/a/b`. */
export function isInside(child: string, root: string, strict = false): boolean {
  const rel = path.relative(root, child);
  if (rel === '') return !strict;
  return rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel);
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

/** Throws `SecretFileError` when the path asked for, or its real path, is a secret file within its root. */
function refuseSecret(checked: Checked, access: 'read' | 'write'): void {
  const candidates: [string, string[]][] = [
    [checked.normalised, [...checked.lexicalRoots, ...checked.realRoots]],
    [checked.real, checked.realRoots],
  ];
  for (const [p, roots] of candidates) {
    for (const root of roots) {
      if (!isInside(p, root)) continue;
      const kind = secretKind(path.relative(root, p));
      if (kind !== undefined) throw new SecretFileError(p, kind, access);
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

/** Node's own shape of a missing-file error, for a path already known to be inside the roots. */
function enoent(p: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`ENOENT: no such file or directory, open '${p}'`);
  error.code = 'ENOENT';
  error.errno = -2;
  error.syscall = 'open';
  error.path = p;
  return error;
}

/*
 * Secret files. The rule, by name only (contents are never sniffed), applied to the path below the
 * root that holds it, so a project that itself sits in, say, a folder named `.git` still works:
 * - anything inside a folder named `.git`, `.ssh` or `.gnupg` (and such a name itself);
 * - environment files: `.env`, `.env.<anything>`, `.env-<anything>`, `.env_<anything>`, `.envrc`
 *   (also `.env.example`: a template often gets real values; the user can allow them all);
 * - private keys: `id_rsa`, `id_dsa`, `id_ecdsa`, `id_ed25519` (and their `_sk` forms, `id_xmss`),
 *   alone or followed by `.`, `-` or `_` and anything except a name ending in `.pub`
 *   (`id_rsa_github`, `id_ed25519.work` are keys; `id_rsa.pub` is not; `id_card.md` is not a key
 *   name at all); and names ending in `.pem`, `.key`, `.p12`, `.pfx`, `.ppk`, `.jks`, `.keystore`;
 * - credential files `.netrc` and `.pgpass`.
 * Case is ignored. The user lets them through with `allowSecretFiles`.
 */
const SECRET_FOLDERS = new Set(['.git', '.ssh', '.gnupg']);
const SECRET_FILE_NAMES = new Set(['.netrc', '.pgpass']);
const ENV_FILE = /^\.env(?:$|[._-]|rc$)/i;
const SSH_KEY_FILE = /^id_(?:rsa|dsa|ecdsa|ed25519|ecdsa_sk|ed25519_sk|xmss)(?:[._-].*)?$/i;
const KEY_EXTENSION = /\.(?:pem|key|p12|pfx|ppk|jks|keystore)$/i;

/**
 * What kind of secret `relativePath` (a path below a root) names, e.g. `an environment file`, or
 * `undefined` when it is not one by the rule above.
 */
export function secretKind(relativePath: string): string | undefined {
  const parts = relativePath.split(/[\\/]+/).filter((part) => part !== '' && part !== '.');
  for (const part of parts) {
    if (SECRET_FOLDERS.has(part.toLowerCase())) return `inside ${part}/`;
  }
  const name = parts[parts.length - 1];
  if (name === undefined) return undefined;
  if (ENV_FILE.test(name)) return 'an environment file (.env*)';
  if (SSH_KEY_FILE.test(name) && !/\.pub$/i.test(name)) return 'a private key';
  if (KEY_EXTENSION.test(name)) return 'a key or certificate file';
  if (SECRET_FILE_NAMES.has(name.toLowerCase())) return 'a credentials file';
  return undefined;
}

/** Whether `relativePath` (a path below a root) is a secret file by the rule of `secretKind`. */
export function isSecretPath(relativePath: string): boolean {
  return secretKind(relativePath) !== undefined;
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
 * Entries of a stand-alone bundle folder that hold the bundle itself (a BMAD module's layout), so
 * `save_output` never writes there even when the output folder contains them.
 */
export const BUNDLE_OWN_ENTRIES = [
  'config.yaml',
  'config.yml',
  'bundle.yaml',
  'bundle.yml',
  'agents',
  'workflows',
  'tasks',
  'templates',
  'data',
  'checklists',
  'teams',
  '_cfg',
];

/** The `BUNDLE_OWN_ENTRIES` of the stand-alone bundle folder `bundleRoot`, as absolute paths. */
export function bundleOwnEntries(bundleRoot: string): string[] {
  return BUNDLE_OWN_ENTRIES.map((entry) => path.join(bundleRoot, entry));
}

/**
 * What `save_output` must never write to for the session `ctx`: `ctx.protectedPaths` when
 * initialisation recorded them; otherwise (a context recorded before they existed) the same rule
 * rebuilt from the roots: an installed tree's whole `bmad/` folder (its core lies inside its bundle
 * root), else the bundle folder's own entries; plus the core and the loaded config.
 */
export function protectedPathsOf(ctx: RuntimeContext): string[] {
  if (ctx.protectedPaths) return ctx.protectedPaths;
  const installed = ctx.coreRoot !== ctx.bundleRoot && isInside(ctx.coreRoot, ctx.bundleRoot, true);
  const paths = installed ? [ctx.bundleRoot] : bundleOwnEntries(ctx.bundleRoot);
  if (ctx.coreRoot !== ctx.bundleRoot) paths.push(ctx.coreRoot);
  if (ctx.configPath !== undefined) paths.push(ctx.configPath);
  return paths;
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

/** A secret file (see `secretKind`) inside the roots, refused unless the user allows secret files. */
export class SecretFileError extends BundleError {
  readonly kind: string;

  constructor(file: string, kind: string, access: 'read' | 'write') {
    const what = access === 'read' ? 'are not read' : 'are not written';
    super(
      `Secret file refused: ${file} is ${kind}. Secret files (.env*, .ssh/, .git/, private keys such as id_rsa or *.pem) ` +
        `${what} unless the user allows them (the allowSecretFiles setting)`,
      { file },
    );
    this.kind = kind;
  }
}

/** `save_output` was asked to write over (or into) one of the bundle's own files. */
export class ProtectedFileError extends BundleError {
  constructor(file: string) {
    super(
      `Refused: ${file} is one of the bundle's own files (agents, config.yaml, bundle.yaml, workflows, ` +
        `instructions, templates); save_output never writes over them. Save documents in the output folder, ` +
        `e.g. {output_folder}/<name>.md`,
      { file },
    );
  }
}
