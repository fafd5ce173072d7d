/**
 * Writes a file so that a reader (or a crash) never sees half of it: the bytes go to a temporary
 * file in the same folder, are flushed to disk, and the temporary file is renamed over the target.
 * A rename within one folder is atomic on POSIX file systems, so the target holds either the old or
 * the new content. Writing the same content again simply replaces the file with identical bytes,
 * which is what makes a retried `save_output` harmless.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/** Writes `content` to `target` atomically (the folder must exist); returns the number of bytes written. */
export async function writeFileAtomic(target: string, content: string | Uint8Array): Promise<number> {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
  const dir = path.dirname(target);
  // Dot-prefixed and unique per attempt, so concurrent or retried writes never share a temp file.
  const temp = path.join(dir, `.${path.basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await fs.open(temp, 'wx', 0o644);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temp, target);
  } catch (error) {
    await removeQuietly(temp);
    throw error;
  }
  await syncDirectory(dir);
  return bytes.length;
}

/** Removes a leftover temp file; a missing file is the expected case, anything else is reported by the original error. */
async function removeQuietly(file: string): Promise<void> {
  await fs.rm(file, { force: true }).catch(() => {
    // The write already failed with a more useful error; a failed cleanup must not hide it.
  });
}

/** Flushes the folder entry so the rename itself survives a power cut. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
