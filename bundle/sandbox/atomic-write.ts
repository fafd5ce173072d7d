/**
 * Writes a file so that a reader (or a crash) never sees half of it: the bytes go to a temporary
 * file in the same folder, are flushed to disk, and the temporary file is renamed over the target.
 * A rename within one folder is atomic on POSIX file systems, so the target holds either the old or
 * the new content. Writing the same content again simply replaces the file with identical bytes,
 * which is what makes a retried `save_output` harmless.
 *
 * Nothing is created by path: the folder is opened from the write root through checked descriptors
 * (`CheckedDir`), and the temporary file is created, renamed and, on failure, removed relative to
 * it, so a folder swapped for a symlink meanwhile cannot take either file out of the root. Each
 * write also removes the stale temporary files a crashed write left in its folder (`stale-temp.ts`).
 */
import { constants, promises as fs, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { SecurityViolationError } from '../errors';
import { CheckedDir, sameFile } from './dir-handle';
import { releaseTempName, removeStaleTemps, reserveTempName } from './stale-temp';

/** A new temporary file: created here or not at all, never through a symlink. */
const TEMP_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** Options of `writeFileAtomic`. */
export interface AtomicWriteOptions {
  /**
   * The real write root the target lies in: folders are opened from it (trusted, the user's
   * setting). Default: the target's own folder, which must then exist.
   */
  root?: string;
  /** Create the missing folders between the root and the target (default: no, ENOENT). */
  createFolders?: boolean;
  /** Once aborted, no folder is created and no write is started: the signal's reason is thrown. */
  signal?: AbortSignal;
}

/**
 * Writes `content` to `target` (a real path, as the path guard returns it) atomically; returns the
 * number of bytes written. A folder on the way that is, or becomes, a symlink, or the folder moved
 * out of place while the file was created in it, is refused with `SecurityViolationError` and
 * whatever this write created is removed again. File-system errors name the real paths.
 */
export async function writeFileAtomic(target: string, content: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<number> {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
  const folder = path.dirname(target);
  const dir = await CheckedDir.open(options.root ?? folder, folder, { create: options.createFolders === true, signal: options.signal });
  try {
    await dir.verify();
    await removeStaleTemps(dir);
    options.signal?.throwIfAborted();
    await writeInto(dir, path.basename(target), bytes);
    return bytes.length;
  } catch (error) {
    if (error instanceof SecurityViolationError) await dir.removeCreated();
    throw dir.rephrase(error);
  } finally {
    await dir.close();
  }
}

/**
 * Creates the temporary file in `dir`, checks that it is there (the file at its name is the open
 * file, and `dir` has not moved), writes and flushes it, renames it over `name` and checks `dir`
 * again. A failed check removes the file it created (through `dir`) and refuses.
 */
async function writeInto(dir: CheckedDir, name: string, bytes: Buffer): Promise<void> {
  const temp = reserveTempName(name);
  let handle: FileHandle | undefined;
  let renamed = false;
  try {
    handle = await fs.open(dir.entry(temp), TEMP_FLAGS, 0o644);
    const created = await handle.stat();
    const there = await fs.lstat(dir.entry(temp));
    if (!sameFile(created, there)) throw new SecurityViolationError('outside-roots');
    await dir.verify();
    await handle.writeFile(bytes);
    await handle.sync();
    await fs.rename(dir.entry(temp), dir.entry(name));
    renamed = true;
    await dir.sync();
    await verifyOrRemove(dir, name, created);
  } catch (error) {
    if (handle !== undefined && !renamed) await removeQuietly(dir.entry(temp));
    throw error;
  } finally {
    await handle?.close().catch(() => undefined);
    releaseTempName(temp);
  }
}

/**
 * The check after the rename: `dir` must still be the folder that was opened. If it was moved
 * (out of the root, say) while the file was written, the file is removed from it again, when the
 * name still holds this write's file, and the write is refused.
 */
async function verifyOrRemove(dir: CheckedDir, name: string, written: Stats): Promise<void> {
  try {
    await dir.verify();
  } catch (error) {
    const now = await fs.lstat(dir.entry(name)).catch(() => undefined);
    if (now !== undefined && sameFile(now, written)) await removeQuietly(dir.entry(name));
    throw error;
  }
}

/** Removes a file this write created; a failure is reported by the original error, not this one. */
async function removeQuietly(file: string): Promise<void> {
  await fs.unlink(file).catch(() => {
    // The write already failed with a more useful error; a failed cleanup must not hide it.
  });
}
