/**
 * The `save_output` tool: resolve the path's variables, check it against the output roots, create
 * missing folders and write the content atomically. A retried call writes the same bytes again,
 * which is harmless, so the activity can be retried freely.
 *
 * Folders and files are created through descriptors opened from the write root that holds the
 * checked path (`writeFileAtomic`), never by path: a folder swapped for a symlink after the check
 * cannot take the write, a temporary file or a new folder out of the root.
 */
import type { ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { SAVE_OUTPUT } from '../../common/tools/save-output';
import { SecurityViolationError } from '../../bundle/errors';
import { guardWrite, isInside, protectedPathsOf, resolveRealPath } from '../../bundle/path-guard';
import { secretOptionsOf } from '../../bundle/secret-files';
import { resolveVariables } from '../../bundle/variables';
import type { ToolImplementation, ToolRunOptions } from './activity-wrapper';
import { writeFileAtomic } from './atomic-write';
import { parseArgsOf } from './parse-args';
import { toToolFailure } from './tool-failure';

/**
 * Runs `save_output` for the session `ctx`: returns `{success: true, path, size}` (`path` is the
 * real path written, `size` in bytes of UTF-8) or `{success: false, error}`. Relative paths are
 * taken from the first output root; anything outside `ctx.writeRoots` is refused, and so are the
 * bundle's own files (`protectedPathsOf(ctx)`: agents, config, manifest, workflows, templates),
 * even when an output root contains them, and secret files (`.env*`, `.git/`, `.ssh/`, keys)
 * unless `ctx.allowSecretFiles`. A read-only file system, a full disk or a used-up quota is
 * reported at once (see `toToolFailure`). A folder on the way swapped for a symlink while the call
 * runs is refused like a path outside the roots, and leaves nothing behind outside them. Once
 * `options.signal` is aborted no folder is created and no write is started: the signal's reason is
 * thrown instead (a write already under way finishes, atomically).
 */
export async function saveOutputTool(ctx: RuntimeContext, args: unknown, options: ToolRunOptions = {}): Promise<ToolResult> {
  const parsed = parseArgsOf(SAVE_OUTPUT, args);
  if (!parsed.ok) return { success: false, error: parsed.error };
  let realPath: string | undefined;
  try {
    const resolved = resolveVariables(parsed.value.file_path, ctx.variables, { strict: true });
    // The session's secret-file rules (defaults, the project's file, the session's lines) apply to writes too.
    realPath = await guardWrite(resolved, ctx.writeRoots, { ...secretOptionsOf(ctx), protectedPaths: protectedPathsOf(ctx) });
    options.signal?.throwIfAborted();
    const root = await writeRootOf(realPath, ctx.writeRoots);
    const size = await writeFileAtomic(realPath, parsed.value.content, { root, createFolders: true, signal: options.signal });
    return { success: true, path: realPath, size };
  } catch (error) {
    return toToolFailure(error, realPath);
  }
}

/**
 * The real path of the write root holding `realPath` (the innermost, when roots nest): where the
 * write's walk through folder descriptors starts. The guard has just found one; none now means a
 * root changed in between, which is refused like any path outside the roots.
 */
async function writeRootOf(realPath: string, writeRoots: string[]): Promise<string> {
  const roots = await Promise.all(writeRoots.map((root) => resolveRealPath(root)));
  const holding = roots.filter((root) => isInside(realPath, root, true)).sort((a, b) => b.length - a.length);
  if (holding.length === 0) throw new SecurityViolationError('outside-roots');
  return holding[0];
}

/** `save_output`: its definition and what runs it. */
export const saveOutput: ToolImplementation = { spec: SAVE_OUTPUT, run: saveOutputTool };
