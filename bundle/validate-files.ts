/**
 * What `validate` checks of a file an agent or workflow names, as a session would meet it without
 * reading it: whether anything is there, whether the secret-file rules refuse it, and whether it is
 * a regular file with one link. validate.ts reports what these say as problems.
 */
import { promises as fs } from 'node:fs';
import type { RuntimeContext } from '../common/runtime-context';
import { guardRead, secretOptionsOf } from './sandbox/path-guard';
import { SecretFileError } from './sandbox/secret-files';

/** Whether something (even a dangling symlink) exists at `p`. */
export async function lexists(p: string): Promise<boolean> {
  try {
    await fs.lstat(p);
    return true;
  } catch {
    return false;
  }
}

/** The refusal a session would meet reading `real` by the session's secret-file rules (the project's own too), if any. */
export async function secretProblem(real: string, ctx: RuntimeContext): Promise<string | undefined> {
  try {
    await guardRead(real, ctx.readRoots, secretOptionsOf(ctx));
    return undefined;
  } catch (error) {
    if (error instanceof SecretFileError) return error.message;
    return undefined;
  }
}

/**
 * Why a session could not read the (guarded, existing) file `real` as text, without reading it:
 * not a regular file (a FIFO would block the read), or several hard links; else `undefined`.
 */
export async function fileKindProblem(real: string, ctx: RuntimeContext): Promise<string | undefined> {
  const stat = await fs.lstat(real);
  if (stat.isDirectory()) return `Not a file: ${real}`;
  if (!stat.isFile()) return `Not a regular file: ${real}; only regular files can be read`;
  if (stat.nlink > 1 && !ctx.allowHardLinks) {
    return `Hard-linked file: ${real} has ${stat.nlink} links and is read only when the user allows hard links (allowHardLinks)`;
  }
  return undefined;
}
