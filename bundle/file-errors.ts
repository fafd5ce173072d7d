/**
 * Errors of reading a file as text (`text-content.ts`), and the Node error codes file operations
 * fail with. The classes extend `BundleError` so every expected failure of a tool (bad file, bad
 * bundle data, refused path) is one family that the tools' `toToolFailure` turns into a result for
 * the model.
 */
import { BundleError } from './errors';

/** File-system error codes that retrying will not fix but a different path might: reported, not retried. */
export const MODEL_FIXABLE_CODES: ReadonlySet<string> = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'EACCES', 'EPERM', 'ENAMETOOLONG', 'ELOOP']);

/** `error.code` of a Node system error (`ENOENT`...), if any. */
export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

/** A file is larger than the session's read limit. */
export class FileTooLargeError extends BundleError {
  readonly size: number;
  readonly limit: number;

  constructor(file: string, size: number, limit: number) {
    super(`File too large: ${file} is ${size} bytes; the read limit is ${limit} bytes`, { file });
    this.size = size;
    this.limit = limit;
  }
}

/** A file is not UTF-8 text (a NUL byte in its first 8 KB, or invalid UTF-8). */
export class BinaryFileError extends BundleError {
  constructor(file: string) {
    super(`Binary file refused: ${file} is not UTF-8 text; only text files can be read`, { file });
  }
}

/**
 * The path names something that is not a regular file: a folder (`Not a file: <path>`), or a FIFO,
 * socket or device (`Not a regular file: <path> is a FIFO; ...`), refused before any read: a read
 * of a FIFO waits for a writer forever, a device may never end.
 */
export class NotAFileError extends BundleError {
  /** What it is instead: `a folder`, `a FIFO`, `a socket`, `a character device`, ... */
  readonly kind?: string;

  constructor(file: string, kind?: string) {
    super(kind === undefined || kind === 'a folder' ? `Not a file: ${file}` : `Not a regular file: ${file} is ${kind}; only regular files can be read`, { file });
    if (kind !== undefined) this.kind = kind;
  }
}

/**
 * A file with more than one hard link. A path check sees only the name it was given: a hard link
 * is the same file under another name, so a link placed inside the project to a file elsewhere
 * (a key, another user's data) passes every path check. Such files are read only when the user
 * allows hard links.
 */
export class HardLinkError extends BundleError {
  readonly links: number;

  constructor(file: string, links: number) {
    super(
      `Hard-linked file refused: ${file} has ${links} links; a hard link can make a file from outside the project ` +
        `look like one inside it, so such files are read only when the user allows hard links (the allowHardLinks setting)`,
      { file },
    );
    this.links = links;
  }
}
