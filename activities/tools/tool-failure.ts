/**
 * Splits tool errors by who can fix them. Errors the model can act on (a bad path, a missing file,
 * a refused path, a missing variable, a file too large) and write errors no retry can fix (a
 * read-only file system, a full disk, a quota) become a `{success: false, error}` result at once;
 * anything else (an I/O fault) is rethrown so the activity fails and Temporal retries it.
 * A cancellation is always rethrown: it ends the activity, it is never a result.
 */
import { CancelledFailure } from '@temporalio/common';
import type { ToolResult } from '../../common/messages';
import { BundleError, SecurityViolationError } from '../../bundle/errors';
import { errorCode, MODEL_FIXABLE_CODES } from '../../bundle/file-errors';

/**
 * Write errors that retrying will not fix within a tool's timeout (retries only fill the history
 * and keep the user waiting): reported at once, with what it means, so the model can tell the user.
 */
export const UNRETRYABLE_WRITE_CODES: ReadonlyMap<string, string> = new Map([
  ['EROFS', 'the file system is read-only'],
  ['ENOSPC', 'the disk is full'],
  ['EDQUOT', 'the disk quota is used up'],
]);

/**
 * The failure result for `error`, or a rethrow when the error is not the model's to fix.
 * `path` is added only when the caller knows it lies inside the allowed roots; a security refusal
 * never carries one, so nothing about an outside path leaks.
 */
export function toToolFailure(error: unknown, path?: string): ToolResult {
  if (isCancellation(error)) throw error;
  if (error instanceof SecurityViolationError) return { success: false, error: error.message };
  const code = errorCode(error) ?? '';
  if (error instanceof BundleError || MODEL_FIXABLE_CODES.has(code)) {
    return { success: false, error: (error as Error).message, ...(path !== undefined ? { path } : {}) };
  }
  const meaning = UNRETRYABLE_WRITE_CODES.get(code);
  if (meaning !== undefined) {
    const message = `${(error as Error).message} (${meaning}; retrying will not help, tell the user)`;
    return { success: false, error: message, ...(path !== undefined ? { path } : {}) };
  }
  throw error;
}

/** Whether `error` is a cancellation: the activity's `CancelledFailure` or an aborted operation. */
export function isCancellation(error: unknown): boolean {
  if (error instanceof CancelledFailure) return true;
  return (error instanceof Error && error.name === 'AbortError') || errorCode(error) === 'ABORT_ERR';
}
