/**
 * Reading files as text for the model. Tools return file content inside JSON messages, so binary
 * data or huge files would only waste the context window (and the workflow history).
 */
import { isUtf8 } from 'node:buffer';
import { constants, promises as fs, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { SecurityViolationError } from './errors';
import { BinaryFileError, FileTooLargeError, HardLinkError, NotAFileError } from './file-errors';

/** How many leading bytes are scanned for NUL, the usual sign of a binary file. */
export const BINARY_SNIFF_BYTES = 8192;

/** Default largest file a tool reads: 1 MiB. */
export const DEFAULT_MAX_READ_BYTES = 1024 * 1024;

/** The bytes as UTF-8 text, or `null` when they look binary (a NUL byte early on, or invalid UTF-8). */
export function decodeText(bytes: Uint8Array): string | null {
  if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return null;
  // Checked first because decoding would silently turn invalid bytes into U+FFFD.
  if (!isUtf8(bytes)) return null;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  // A byte-order mark is an encoding detail, not content.
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** What the user allows when a file is opened for reading. */
export interface OpenFileOptions {
  /** Read files with more than one hard link (default: refused, see `HardLinkError`). */
  allowHardLinks?: boolean;
}

/**
 * Reads a file already checked by the path guard, as text. `realPath` must be the real path the
 * guard returned (it is opened with `openRegularFile`). Throws `NotAFileError` (a folder, FIFO,
 * socket or device), `HardLinkError`, `SecurityViolationError` (the path changed after the
 * guard), `FileTooLargeError` (checked before reading, and again on the bytes in case the file
 * grew) or `BinaryFileError`; file-system errors (ENOENT...) pass through unchanged. An aborted
 * `signal` stops it before the file is opened and between chunks of the read (an AbortError).
 */
export async function readTextFile(realPath: string, maxBytes: number, signal?: AbortSignal, options: OpenFileOptions = {}): Promise<{ content: string; size: number }> {
  signal?.throwIfAborted();
  const { handle, stat } = await openRegularFile(realPath, options);
  try {
    if (stat.size > maxBytes) throw new FileTooLargeError(realPath, stat.size, maxBytes);
    const bytes = await handle.readFile(signal ? { signal } : {});
    if (bytes.length > maxBytes) throw new FileTooLargeError(realPath, bytes.length, maxBytes);
    const content = decodeText(bytes);
    if (content === null) throw new BinaryFileError(realPath);
    return { content, size: bytes.length };
  } finally {
    await handle.close();
  }
}

/**
 * The first `maxBytes` bytes of a regular file as text (invalid UTF-8 replaced, never refused as
 * binary): enough to find an agent's name and title when listing a bundle. Opened like
 * `readTextFile`, except that hard links are not refused here: what is read is never handed to the
 * model, and the agent a session runs is read again, in full, by `readTextFile`.
 */
export async function readTextHead(realPath: string, maxBytes: number): Promise<string> {
  const { handle } = await openRegularFile(realPath, { allowHardLinks: true });
  try {
    const buffer = Buffer.alloc(maxBytes);
    let filled = 0;
    while (filled < maxBytes) {
      const { bytesRead } = await handle.read(buffer, filled, maxBytes - filled, null);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled).toString('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * Opens for reading a file the path guard accepted (`realPath` is the guard's real path, free of
 * symlinks), making sure that what is open is a regular file and is that very file:
 *
 * 1. `lstat` first, so a FIFO, socket or device is refused without being opened (opening a FIFO
 *    for reading waits for a writer; opening a device can act on it);
 * 2. `open` with `O_NOFOLLOW` (a symlink swapped in for the last component fails instead of being
 *    followed) and `O_NONBLOCK` (a FIFO swapped in after step 1 cannot block the open);
 * 3. `fstat` on the open descriptor: a regular file, the same device and inode as step 1, and the
 *    same as a fresh `stat` of the real path, whose `realpath` must still be itself. `O_NOFOLLOW`
 *    guards only the last component: a folder on the path swapped for a symlink after the guard is
 *    caught here, as the open file is then not the file at the checked path;
 * 4. a file with more than one hard link is refused unless `options.allowHardLinks`: a hard link is
 *    the same file under a second name, which may lie outside every root, and no path check can
 *    see where the other names are (`HardLinkError`).
 *
 * Throws `NotAFileError`, `SecurityViolationError` (the path changed between the check and the
 * open), `HardLinkError`, or the file-system error (ENOENT...). The caller closes the handle.
 */
export async function openRegularFile(realPath: string, options: OpenFileOptions = {}): Promise<{ handle: FileHandle; stat: Stats }> {
  const before = await fs.lstat(realPath);
  // The guard returns symlink-free paths: a link here was swapped in after the check.
  if (before.isSymbolicLink()) throw new SecurityViolationError('outside-roots');
  if (!before.isFile()) throw new NotAFileError(realPath, fileKind(before));
  let handle: FileHandle;
  try {
    handle = await fs.open(realPath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    // ELOOP (Linux, macOS) or EMLINK (FreeBSD): the last component became a symlink.
    const code = (error as NodeJS.ErrnoException)?.code;
    if (code === 'ELOOP' || code === 'EMLINK') throw new SecurityViolationError('outside-roots');
    throw error;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new NotAFileError(realPath, fileKind(stat));
    const [now, nowReal] = await Promise.all([fs.stat(realPath), fs.realpath(realPath)]);
    const same = (a: Stats, b: Stats) => a.dev === b.dev && a.ino === b.ino;
    if (nowReal !== realPath || !same(stat, now) || !same(stat, before)) throw new SecurityViolationError('outside-roots');
    if (stat.nlink > 1 && !options.allowHardLinks) throw new HardLinkError(realPath, stat.nlink);
    return { handle, stat };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** What a non-regular file is, for messages. */
function fileKind(stat: Stats): string {
  if (stat.isDirectory()) return 'a folder';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSymbolicLink()) return 'a symlink';
  return 'not a regular file';
}
