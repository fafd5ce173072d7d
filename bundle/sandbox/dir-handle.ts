/**
 * Folders opened for writing so that a symlink swapped in after the path guard cannot redirect
 * what is created in them. The guard checks a path, but the write happens later, by path: a folder
 * on the way swapped for a symlink in between would take the temporary file (or a new folder) out
 * of the project. So nothing is created by path. A folder is reached from the (trusted, real)
 * write root one segment at a time, each opened with `O_DIRECTORY | O_NOFOLLOW` relative to its
 * parent's descriptor, and every file and folder is created relative to an open folder.
 *
 * Node has no `openat()`. On Linux `/proc/self/fd/<fd>/<name>` is the same thing: the kernel
 * resolves `<fd>` to the open folder itself, not to a path, so a renamed or swapped folder cannot
 * change where `<name>` lands. Where `/proc/self/fd` is not usable (macOS, BSD, a container without
 * `/proc`), names are resolved by path and each segment is checked with `lstat` before and after
 * it is created, which narrows the window but cannot close it: only Linux is race-free.
 *
 * After creating, `verify` checks that the folder is still where it was opened (its descriptor's
 * real path): a folder moved out of the root while it was open is refused, and the caller removes
 * what it created there.
 */
import { constants, promises as fs, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { SecurityViolationError } from '../errors';
import { errorCode } from '../file-errors';
import { isInside } from './path-guard';

/** How a folder on the way is opened: a folder, never through a symlink in its last segment. */
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** How often a missing folder is created and opened again before its absence is reported. */
const CREATE_ATTEMPTS = 3;

/** Options of `CheckedDir.open`. */
export interface OpenDirOptions {
  /** Create missing folders (below the nearest existing ancestor of the root, too). */
  create?: boolean;
  /** Once aborted, no folder is created: the signal's reason is thrown instead. */
  signal?: AbortSignal;
}

/**
 * An open folder inside a write root. `entry(name)` is the path through which a name in it is
 * created, renamed or removed; `verify()` checks that the folder is still the one at `path`.
 * Always `close()` it.
 */
export class CheckedDir {
  private constructor(
    private readonly handle: FileHandle,
    /** The folder's real path, as the path guard resolved it. */
    readonly path: string,
    /** Whether names are resolved through the descriptor (`/proc/self/fd`), i.e. race-free. */
    readonly viaDescriptor: boolean,
    /** Folders created on the way, with their parents still open, deepest last. */
    private readonly created: { parent: CheckedDir; name: string }[],
    /** Folders still open on the way (the parents of `created`), closed with this one. */
    private readonly ancestors: CheckedDir[],
  ) {}

  /**
   * Opens the folder `dir` (a real path the path guard accepted) inside the real write root
   * `root`, walking from the root (or its nearest existing ancestor, when the root is still to be
   * created) one segment at a time. A segment that is a symlink, or has become one, is refused
   * with `SecurityViolationError`; a segment that is a file fails with ENOTDIR; a missing one fails
   * with ENOENT unless `options.create`.
   */
  static async open(root: string, dir: string, options: OpenDirOptions = {}): Promise<CheckedDir> {
    if (!isInside(dir, root)) throw new SecurityViolationError('outside-roots');
    options.signal?.throwIfAborted();
    // Parents of created folders stay open (to remove those folders after a refusal); others are closed on the way.
    const kept: CheckedDir[] = [];
    const created: { parent: CheckedDir; name: string }[] = [];
    let current: CheckedDir | undefined;
    try {
      current = await CheckedDir.openStart(root, options.create === true);
      const rest = path.relative(current.path, dir);
      for (const name of rest === '' ? [] : rest.split(path.sep)) {
        if (name === '' || name === '.' || name === '..') throw new SecurityViolationError('invalid-path');
        const { handle, made } = await openChild(current, name, options);
        const parent: CheckedDir = current;
        current = new CheckedDir(handle, path.join(parent.path, name), parent.viaDescriptor, [], []);
        if (made) {
          created.push({ parent, name });
          kept.push(parent);
        } else {
          await parent.handle.close();
        }
        if (!current.viaDescriptor) await current.verify();
      }
      return new CheckedDir(current.handle, current.path, current.viaDescriptor, created, kept);
    } catch (error) {
      if (error instanceof SecurityViolationError) await removeFolders(created);
      const open = current === undefined || kept.includes(current) ? kept : [...kept, current];
      await Promise.all(open.map((d) => d.handle.close().catch(() => undefined)));
      throw error;
    }
  }

  /**
   * Opens the root, or, when it does not exist yet and may be created, its nearest existing
   * ancestor. The root is the user's setting and its path is real, so its descriptor's real path
   * must be that path; this also tells whether `/proc/self/fd` works here.
   */
  private static async openStart(root: string, create: boolean): Promise<CheckedDir> {
    let start = root;
    for (;;) {
      let handle: FileHandle | undefined;
      try {
        handle = await fs.open(start, DIR_FLAGS);
        const viaDescriptor = process.platform === 'linux' && (await descriptorPath(handle)) !== undefined;
        const dir = new CheckedDir(handle, start, viaDescriptor, [], []);
        await dir.verify();
        return dir;
      } catch (error) {
        await handle?.close().catch(() => undefined);
        if (await isSymlinkRefusal(error, start)) throw new SecurityViolationError('outside-roots');
        const parent = path.dirname(start);
        if (errorCode(error) !== 'ENOENT' || !create || parent === start) throw error;
        start = parent;
      }
    }
  }

  /** The path through which `name` in this folder is reached: through the descriptor where possible. */
  entry(name: string): string {
    return this.viaDescriptor ? `/proc/self/fd/${this.handle.fd}/${name}` : path.join(this.path, name);
  }

  /** The folder itself, for `readdir`. */
  self(): string {
    return this.viaDescriptor ? `/proc/self/fd/${this.handle.fd}` : this.path;
  }

  /**
   * Checks that the open folder is still the folder at `path`: its descriptor's real path (Linux),
   * or, elsewhere, the real path of `path` and that it is the same folder as the descriptor. Throws
   * `SecurityViolationError` otherwise (the folder was moved, or a segment swapped for a symlink).
   */
  async verify(): Promise<void> {
    if (this.viaDescriptor) {
      const now = await fs.readlink(`/proc/self/fd/${this.handle.fd}`).catch(() => undefined);
      if (now !== this.path) throw new SecurityViolationError('outside-roots');
      return;
    }
    const [real, stat, mine] = await Promise.all([fs.realpath(this.path).catch(() => undefined), fs.lstat(this.path).catch(() => undefined), this.handle.stat()]);
    if (real !== this.path || stat === undefined || !sameFile(stat, mine)) throw new SecurityViolationError('outside-roots');
  }

  /** Flushes the folder's entries, so a rename in it survives a power cut. */
  async sync(): Promise<void> {
    await this.handle.sync();
  }

  /** Removes, quietly, the folders this open created (only empty ones go): after a refusal. */
  async removeCreated(): Promise<void> {
    await removeFolders(this.created);
  }

  /** Closes this folder and the folders opened on the way to it. */
  async close(): Promise<void> {
    await Promise.all([this.handle, ...this.ancestors.map((d) => d.handle)].map((h) => h.close().catch(() => undefined)));
  }

  /**
   * `error` with this folder's descriptor paths (`/proc/self/fd/<fd>`) replaced by its real path:
   * the model and the user see the file they asked for, not a descriptor number.
   */
  rephrase<E>(error: E): E {
    if (!this.viaDescriptor || typeof error !== 'object' || error === null) return error;
    const descriptor = new RegExp(`/proc/self/fd/${this.handle.fd}(?![0-9])`, 'g');
    const e = error as { message?: unknown; path?: unknown; dest?: unknown };
    for (const key of ['message', 'path', 'dest'] as const) {
      const value = e[key];
      if (typeof value === 'string') e[key] = value.replace(descriptor, () => this.path);
    }
    return error;
  }
}

/** The real path of an open descriptor from `/proc/self/fd`, or `undefined` where that is not available. */
async function descriptorPath(handle: FileHandle): Promise<string | undefined> {
  try {
    const target = await fs.readlink(`/proc/self/fd/${handle.fd}`);
    return path.isAbsolute(target) ? target : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Opens the folder `name` inside `parent` without following a symlink, creating it first when it
 * is missing and `options.create`. Creating and opening are separate steps, so a folder created
 * here may be swapped before it is opened: the open with `O_NOFOLLOW` is the check after creation.
 */
async function openChild(parent: CheckedDir, name: string, options: OpenDirOptions): Promise<{ handle: FileHandle; made: boolean }> {
  const entry = parent.entry(name);
  let made = false;
  for (let attempt = 1; ; attempt++) {
    if (!parent.viaDescriptor) await refuseSymlink(entry);
    try {
      return { handle: await fs.open(entry, DIR_FLAGS), made };
    } catch (error) {
      if (await isSymlinkRefusal(error, entry)) throw new SecurityViolationError('outside-roots');
      if (errorCode(error) !== 'ENOENT' || options.create !== true || attempt >= CREATE_ATTEMPTS) throw parent.rephrase(error);
    }
    options.signal?.throwIfAborted();
    try {
      await fs.mkdir(entry);
      made = true;
    } catch (error) {
      // Created meanwhile by another write: open what is there (or refuse it) on the next round.
      if (errorCode(error) !== 'EEXIST') throw parent.rephrase(error);
    }
  }
}

/** Refuses a path whose last segment is a symlink (the check before creation, without `/proc`). */
async function refuseSymlink(p: string): Promise<void> {
  if (await isSymlink(p)) throw new SecurityViolationError('outside-roots');
}

/**
 * Whether an open with `O_DIRECTORY | O_NOFOLLOW` failed because `p` is, or was a moment ago, a
 * symlink: ELOOP (most systems), EMLINK (FreeBSD), or ENOTDIR (Linux's answer for a symlink) unless
 * `p` is now something that is neither a folder nor a symlink (a file in the way: the model's to
 * fix). A folder found there now was swapped back after the open saw a symlink.
 */
async function isSymlinkRefusal(error: unknown, p: string): Promise<boolean> {
  const code = errorCode(error);
  if (code === 'ELOOP' || code === 'EMLINK') return true;
  if (code !== 'ENOTDIR') return false;
  const now = await fs.lstat(p).catch(() => undefined);
  return now === undefined || now.isSymbolicLink() || now.isDirectory();
}

async function isSymlink(p: string): Promise<boolean> {
  try {
    return (await fs.lstat(p)).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Removes the created folders, deepest first, each through its still-open parent; a folder in use
 * stays. Only through descriptors: by path, a swapped segment could point the removal elsewhere.
 */
async function removeFolders(created: { parent: CheckedDir; name: string }[]): Promise<void> {
  for (const { parent, name } of [...created].reverse()) {
    if (!parent.viaDescriptor) continue;
    await fs.rmdir(parent.entry(name)).catch(() => {
      // Not empty (another write put a file there), or no longer a folder: leave it.
    });
  }
}

/** Whether two stats name the same file. */
export function sameFile(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}
