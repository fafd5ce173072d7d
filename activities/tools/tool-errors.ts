/**
 * Typed errors of the tools themselves. They extend `BundleError` so every expected failure of a
 * tool (bad file, bad bundle data, refused path) is one family that `toToolFailure` turns into a
 * result for the model.
 */
import { BundleError } from '../bundle/errors';

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

/** The path names something that is not a regular file (a folder, a device). */
export class NotAFileError extends BundleError {
  constructor(file: string) {
    super(`Not a file: ${file}`, { file });
  }
}
