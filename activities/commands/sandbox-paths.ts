/**
 * The folders a sandboxed command sees, checked with the file sandbox's own rules before anything
 * is mounted: the project root (read-only), the write roots (writable), the working folder, and
 * what is hidden or kept read-only inside them.
 *
 * - Roots are resolved to real paths (symlinks followed once, here, by the worker; inside the
 *   sandbox every path is the host's real path). A root must be an existing folder; the project
 *   root may not be `/` or the home folder unless the user allowed it, a write root never; no root
 *   may be `/tmp` (the sandbox's own) nor lie in `/proc`, `/sys`, `/dev` or `/run`.
 * - A write root inside the project, and the working folder, pass `guardRead` (inside the roots
 *   after resolving symlinks, not a secret file); nor may a write root be a folder where every new
 *   file would be secret (`.ssh/`).
 * - Secret files (the list of `bundle/sandbox/secret-files.ts` with the session's rules, matched
 *   relative to every root that holds them, as the guard does) are hidden unless the user allows
 *   secret files: a file gets `/dev/null` mounted over it (opening it fails, since devices do not
 *   open on bwrap's mounts; it cannot be written, renamed or removed), a folder an empty read-only
 *   tmpfs (its names are hidden too). A folder that is not itself secret but where any new name
 *   would be (`.ssh/`, `.aws/`) is hidden whole when everything in it is secret. Symlinks are not followed: inside the sandbox a link leads to
 *   the sandbox's own view, where its target is either hidden or absent.
 * - `readOnlyPaths` inside the write roots (the bundle's protected paths) are mounted read-only.
 *
 * Listings of folders unchanged since the last command are reused (`folder-listings.ts`).
 *
 * Limits: hiding is decided from the names present when the command starts. A secret file created
 * meanwhile, or by the command itself in a write root, is not hidden, and a hard link to a secret
 * file under another name is not recognised (the file sandbox matches names, too).
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { guardRead, isBroadRoot, isInside } from '../../bundle/sandbox/path-guard';
import { protectingEntry } from '../../bundle/sandbox/protected-paths';
import { SecretFileError, secretMatch, type SecretFileOptions } from '../../bundle/sandbox/secret-files';
import { folderListing, type Listing } from './folder-listings';
import { SandboxRequestError } from './sandbox-errors';
import { SANDBOX_TMP } from './sandbox-env';

/** Entries looked at for secret files per command; a project larger than this is refused rather than half-checked. */
export const MAX_SCANNED_ENTRIES = 500_000;
/** A name no rule would name on purpose: a folder where it would be secret holds only secrets by nature (`.ssh/`). */
const PROBE_NAME = 'loopwright-sandbox-probe-3f9c';
/** Where no root may lie: the sandbox's own mounts. */
const SYSTEM_FOLDERS = ['/proc', '/sys', '/dev', '/run'];

/** A secret inside a root, hidden from the command. */
export interface HiddenPath {
  path: string;
  kind: 'file' | 'folder';
}

/** What the sandbox mounts of the project, all real paths. */
export interface SandboxPaths {
  projectRoot: string;
  /** Parents before the folders inside them. */
  writeRoots: string[];
  cwd: string;
  /** Existing paths inside the write roots mounted read-only again. */
  readOnly: string[];
  hidden: HiddenPath[];
}

/** What `resolveSandboxPaths` reads of the request. */
export interface PathsRequest extends SecretFileOptions {
  projectRoot: string;
  writeRoots?: readonly string[];
  cwd?: string;
  readOnlyPaths?: readonly string[];
  allowBroadProjectRoot?: boolean;
}

/**
 * Checks the request's folders and finds what to hide. Throws `SandboxRequestError` naming the bad
 * field, and the guard's `SecurityViolationError` / `SecretFileError` for a working folder or
 * write root outside the roots or secret.
 */
export async function resolveSandboxPaths(request: PathsRequest): Promise<SandboxPaths> {
  const projectRoot = await realFolder(request.projectRoot, 'projectRoot');
  if (!request.allowBroadProjectRoot && (await isBroadRoot(projectRoot))) {
    throw new SandboxRequestError(`The project root ${projectRoot} is too broad (the file-system root or the home folder); the user must allow a broad project root`, 'projectRoot');
  }
  const secretOptions: SecretFileOptions = { allowSecretFiles: request.allowSecretFiles, secretFiles: request.secretFiles };
  const writeRoots: string[] = [];
  for (const [i, given] of (request.writeRoots ?? []).entries()) {
    const field = `writeRoots[${i}]`;
    let real = await realFolder(given, field);
    // Write roots are real paths when the session starts: one that now leads elsewhere was swapped
    // for a link (or a folder above it was), and binding what it leads to would open that to writes.
    if (real !== path.resolve(given)) throw new SandboxRequestError(`${field} ${given} now leads to ${real}: a write root must be the folder itself, not a link`, field);
    if (await isBroadRoot(real)) throw new SandboxRequestError(`The write root ${real} is too broad (the file-system root or the home folder)`, field);
    if (isInside(real, projectRoot)) {
      real = await guardRead(real, [projectRoot], secretOptions).catch((error: unknown) => {
        // Gone since it was resolved (moved or replaced meanwhile): the root cannot be used now.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new SandboxRequestError(`${field} ${given} is gone`, field);
        throw error;
      });
      // A folder where any new file would be secret (`.ssh/`) is no place to write either.
      const probe = path.join(real, PROBE_NAME);
      const match = request.allowSecretFiles === true ? undefined : secretMatch(path.relative(projectRoot, probe), request.secretFiles);
      if (match !== undefined) throw new SecretFileError(probe, match, 'write');
    }
    if (!writeRoots.includes(real)) writeRoots.push(real);
  }
  writeRoots.sort((a, b) => a.split(path.sep).length - b.split(path.sep).length);
  const cwd = await guardRead(request.cwd ?? projectRoot, [projectRoot, ...writeRoots], secretOptions);
  if (!(await fs.stat(cwd)).isDirectory()) throw new SandboxRequestError(`The working folder ${cwd} is not a folder`, 'cwd');

  const scan = new SecretScan([projectRoot, ...writeRoots], writeRoots, request.readOnlyPaths ?? [], request.allowSecretFiles === true ? undefined : secretOptions);
  for (const root of writeRoots) if (protectingEntry(root, scan.protectedPaths) !== undefined) scan.readOnly.push(root);
  const tops = [projectRoot, ...writeRoots.filter((root) => !isInside(root, projectRoot))].filter((root, i, all) => !all.some((other, j) => j !== i && isInside(root, other, true)));
  const hidden: HiddenPath[] = [];
  // Nothing to hide and nothing to protect: no walk at all.
  const walked = request.allowSecretFiles === true ? (scan.protectedPaths.length > 0 ? writeRoots : []) : tops;
  for (const top of walked) hidden.push(...(await scan.folder(top)).hidden);
  return { projectRoot, writeRoots, cwd, readOnly: scan.readOnly, hidden };
}

/** The real path of `given`, which must be an absolute path to an existing folder that is a possible root. */
async function realFolder(given: string, field: string): Promise<string> {
  if (!path.isAbsolute(given)) throw new SandboxRequestError(`${field} must be an absolute path, got ${JSON.stringify(given)}`, field);
  let real: string;
  try {
    real = await fs.realpath(given);
  } catch (error) {
    throw new SandboxRequestError(`${field} ${given} cannot be used: ${(error as Error).message}`, field);
  }
  const isFolder = await fs.stat(real).then(
    (stat) => stat.isDirectory(),
    () => false,
  );
  if (!isFolder) throw new SandboxRequestError(`${field} ${given} is not a folder`, field);
  if (real === SANDBOX_TMP || isInside(SANDBOX_TMP, real, true)) {
    throw new SandboxRequestError(`${field} ${real} would take the place of the sandbox's private ${SANDBOX_TMP}; use a folder inside it`, field);
  }
  if (SYSTEM_FOLDERS.some((folder) => isInside(real, folder))) throw new SandboxRequestError(`${field} ${real} lies in a system folder the sandbox mounts itself`, field);
  return real;
}

/** What the walk found in a folder. */
interface Found {
  hidden: HiddenPath[];
  /** Every entry of the folder is hidden (none is left visible). */
  allHidden: boolean;
}

/** One walk over the roots: the secrets to hide and the protected paths to keep read-only. */
class SecretScan {
  readonly readOnly: string[] = [];
  private entries = 0;
  /** What the secret decisions depend on besides the folder: the roots and the rules. */
  private readonly matchKey: string;

  constructor(
    private readonly roots: readonly string[],
    private readonly writeRoots: readonly string[],
    readonly protectedPaths: readonly string[],
    /** `undefined`: the user allows secret files, nothing is hidden. */
    private readonly secrets: SecretFileOptions | undefined,
  ) {
    this.matchKey = JSON.stringify([roots, secrets === undefined ? null : (secrets.secretFiles ?? [])]);
  }

  /** Walks `dir`, a folder not itself secret. */
  async folder(dir: string): Promise<Found> {
    let listing: Listing;
    try {
      listing = await folderListing(dir, this.matchKey, () => this.list(dir));
    } catch {
      // Unreadable to the worker, so to the sandbox's user as well (the same one; root reads everything).
      return { hidden: [], allHidden: false };
    }
    this.entries += listing.entries.length;
    if (this.entries > MAX_SCANNED_ENTRIES) {
      throw new SandboxRequestError(`The roots hold more than ${MAX_SCANNED_ENTRIES} entries to check for secret files; use a smaller project root`, 'projectRoot');
    }
    const found = await Promise.all(listing.entries.map((entry, i) => this.entry(path.join(dir, entry.name), entry.kind, listing.secret[i])));
    const allHidden = found.every((f) => f.allHidden);
    if (allHidden && listing.probeSecret && !this.roots.includes(dir)) {
      // Hide the folder itself: its names too, and nothing new can be created in it.
      return { hidden: [{ path: dir, kind: 'folder' }], allHidden: true };
    }
    return { hidden: found.flatMap((f) => f.hidden), allHidden: false };
  }

  /** Lists `dir` and decides which entries are secret. */
  private async list(dir: string): Promise<Listing> {
    const list = await fs.readdir(dir, { withFileTypes: true });
    const entries = list.map((entry) => ({ name: entry.name, kind: entry.isSymbolicLink() ? ('link' as const) : entry.isDirectory() ? ('folder' as const) : ('other' as const) }));
    return {
      entries,
      secret: entries.map((entry) => entry.kind !== 'link' && this.isSecret(path.join(dir, entry.name))),
      probeSecret: this.isSecret(path.join(dir, PROBE_NAME)),
    };
  }

  private async entry(full: string, kind: Listing['entries'][number]['kind'], secret: boolean): Promise<Found> {
    if (kind === 'link') return { hidden: [], allHidden: false };
    if (this.protectedPaths.length > 0 && this.isProtected(full)) this.readOnly.push(full);
    if (secret) return { hidden: [{ path: full, kind: kind === 'folder' ? 'folder' : 'file' }], allHidden: true };
    if (kind === 'folder') return this.folder(full);
    return { hidden: [], allHidden: false };
  }

  /** Whether `full`, in a write root, is a protected path not yet inside one mounted read-only (a parent is pushed before its entries are walked). */
  private isProtected(full: string): boolean {
    if (!this.writeRoots.some((root) => isInside(full, root, true)) || this.readOnly.some((p) => isInside(full, p))) return false;
    return protectingEntry(full, this.protectedPaths) !== undefined;
  }

  /** Whether `full` is a secret file relative to any root that holds it (as `guardRead` decides). */
  private isSecret(full: string): boolean {
    if (this.secrets === undefined) return false;
    return this.roots.some((root) => isInside(full, root, true) && secretMatch(path.relative(root, full), this.secrets?.secretFiles) !== undefined);
  }
}
