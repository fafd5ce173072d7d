/**
 * The worker's own programs a command is offered (`SandboxRequest.tools`: uv from the tools
 * folder): each an executable file of the host, mounted read-only at `SANDBOX_TOOLS_BIN/<name>`.
 *
 * `bwrap` runs as the command's user and opens every source path with that user's permissions, so
 * a program it cannot reach (the worker is root and the tools folder lies in `/root`, closed to
 * others) would fail the whole sandbox. Such a program is left out instead, with the reason, and
 * the command runs without it: a command that does not use it is not hurt, one that does fails
 * with "not found" and the caller says why (`run_command`: `UvNotFoundError`).
 */
import { constants, promises as fs, type Stats } from 'node:fs';
import * as path from 'node:path';
import { SandboxRequestError } from './sandbox-errors';
import type { SandboxUser } from './sandbox-user';

/** A program to offer: `name` on the sandbox's PATH, `path` the host's file. */
export interface SandboxTool {
  name: string;
  path: string;
}

/** A program that is not offered, and why. */
export interface ToolLeftOut extends SandboxTool {
  reason: string;
}

/** What `resolveTools` decided: real paths of the programs offered, and those left out. */
export interface ResolvedTools {
  offered: SandboxTool[];
  leftOut: ToolLeftOut[];
}

/** A name a program may have on the PATH: one file name, no slash. */
export const TOOL_NAME = /^[A-Za-z0-9][A-Za-z0-9._+-]*$/;

/**
 * Checks each tool: an absolute path (`SandboxRequestError` otherwise: the caller's mistake), to
 * an executable file the command's `user` can reach and run; one that is missing or closed to the
 * user is left out with the reason. Names are unique; the first of a name wins.
 */
export async function resolveTools(tools: readonly SandboxTool[], user: Pick<SandboxUser, 'uid' | 'gid'>): Promise<ResolvedTools> {
  const resolved: ResolvedTools = { offered: [], leftOut: [] };
  for (const [i, tool] of tools.entries()) {
    if (!TOOL_NAME.test(tool.name)) throw new SandboxRequestError(`tools[${i}].name ${JSON.stringify(tool.name)} is not a program name`, `tools[${i}].name`);
    if (!path.isAbsolute(tool.path)) throw new SandboxRequestError(`tools[${i}].path must be an absolute path, got ${JSON.stringify(tool.path)}`, `tools[${i}].path`);
    if ([...resolved.offered, ...resolved.leftOut].some((t) => t.name === tool.name)) continue;
    const reason = await unusableReason(tool.path, user);
    if (typeof reason === 'string') resolved.leftOut.push({ ...tool, reason });
    else resolved.offered.push({ name: tool.name, path: reason.real });
  }
  return resolved;
}

/** Why `file` cannot be run by `user`, or its real path. */
async function unusableReason(file: string, user: Pick<SandboxUser, 'uid' | 'gid'>): Promise<string | { real: string }> {
  let real: string;
  let stats: Stats;
  try {
    real = await fs.realpath(file);
    stats = await fs.stat(real);
    await fs.access(real, constants.X_OK);
  } catch (error) {
    return `${file} cannot be used (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  if (!stats.isFile()) return `${file} is not a file`;
  // The worker reaches it; the command's user must too (the same user unless the worker is root).
  if (process.getuid?.() !== 0 || user.uid === 0) return { real };
  if (!allows(stats, user, constants.S_IROTH | constants.S_IXOTH)) return `${real} cannot be run by the command's user (uid ${user.uid})`;
  for (let dir = path.dirname(real); ; dir = path.dirname(dir)) {
    if (!allows(await fs.stat(dir), user, constants.S_IXOTH)) {
      return `${real} lies in ${dir}, which the command's user (uid ${user.uid}) cannot enter; put the tools folder where it can (LOOPWRIGHT_TOOLS_DIR)`;
    }
    if (path.dirname(dir) === dir) return { real };
  }
}

/** Whether the mode of `stats` grants `user` every bit of `others` (given as the "other" bits), by owner, group or other class. */
function allows(stats: Stats, user: Pick<SandboxUser, 'uid' | 'gid'>, others: number): boolean {
  const shift = stats.uid === user.uid ? 6 : stats.gid === user.gid ? 3 : 0;
  return ((stats.mode >> shift) & others) === others;
}
