/**
 * Splits tool errors by who can fix them. Errors the model can act on (a bad path, a missing file,
 * a refused path, a missing variable, a file too large) become a `{success: false, error}` result;
 * anything else (an I/O fault, a full disk) is rethrown so the activity fails and Temporal retries it.
 * A cancellation is always rethrown: it ends the activity, it is never a result.
 */
import { CancelledFailure } from '@temporalio/common';
import type { ToolResult } from '../../common/messages';
import { BundleError, SecurityViolationError } from '../bundle/errors';

/** File-system error codes that retrying will not fix but a different path might: reported, not retried. */
export const MODEL_FIXABLE_CODES = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'EACCES', 'EPERM', 'ENAMETOOLONG', 'ELOOP']);

/**
 * The failure result for `error`, or a rethrow when the error is not the model's to fix.
 * `path` is added only when the caller knows it lies inside the allowed roots; a security refusal
 * never carries one, so nothing about an outside path leaks.
 */
export function toToolFailure(error: unknown, path?: string): ToolResult {
  if (isCancellation(error)) throw error;
  if (error instanceof SecurityViolationError) return { success: false, error: error.message };
  if (error instanceof BundleError || MODEL_FIXABLE_CODES.has(errorCode(error) ?? '')) {
    return { success: false, error: (error as Error).message, ...(path !== undefined ? { path } : {}) };
  }
  throw error;
}

/** `error.code` of a Node system error, if any. */
export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

/** Whether `error` is a cancellation: the activity's `CancelledFailure` or an aborted operation. */
export function isCancellation(error: unknown): boolean {
  if (error instanceof CancelledFailure) return true;
  return (error instanceof Error && error.name === 'AbortError') || errorCode(error) === 'ABORT_ERR';
}
