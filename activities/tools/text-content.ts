/**
 * Reading files as text for the model. Tools return file content inside JSON messages, so binary
 * data or huge files would only waste the context window (and the workflow history).
 */
import { isUtf8 } from 'node:buffer';
import { promises as fs } from 'node:fs';
import { BinaryFileError, FileTooLargeError, NotAFileError } from './tool-errors';

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

/**
 * Reads a file already checked by the path guard, as text. Throws `NotAFileError`,
 * `FileTooLargeError` (checked before reading, and again on the bytes in case the file grew) or
 * `BinaryFileError`; file-system errors (ENOENT...) pass through unchanged. An aborted `signal`
 * stops it before the file is opened and between chunks of the read (an AbortError); it cannot
 * interrupt an `open` the kernel keeps waiting (a FIFO with no writer): the activity wrapper ends
 * the activity regardless.
 */
export async function readTextFile(
  realPath: string,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<{ content: string; size: number }> {
  signal?.throwIfAborted();
  const handle = await fs.open(realPath, 'r');
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new NotAFileError(realPath);
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
