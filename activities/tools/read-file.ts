/**
 * The `read_file` tool: resolve the path's variables, check it against the read roots, and return
 * the file's text. Every expected failure is a result for the model, never an exception.
 */
import type { ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { READ_FILE } from '../../common/tools/read-file';
import { guardRead, secretOptionsOf } from '../../bundle/path-guard';
import { readTextFile } from '../../bundle/text-content';
import { resolveVariables } from '../../bundle/variables';
import type { ToolImplementation, ToolRunOptions } from './activity-wrapper';
import { parseArgsOf } from './parse-args';
import { toToolFailure } from './tool-failure';

/**
 * Runs `read_file` for the session `ctx`: returns `{success: true, path, content, size}` (`path` is
 * the real path, `size` in bytes) or `{success: false, error}`. Relative paths are taken from the
 * bundle root. Refuses files over `ctx.maxReadBytes`, binary files, anything but a regular file
 * (a FIFO, socket or device, at once), files with several hard links unless `ctx.allowHardLinks`,
 * and secret files (the default list of `bundle/secret-files.ts`, then the project's and session's
 * rules recorded in `ctx.secretFiles`) unless `ctx.allowSecretFiles`. When
 * `options.signal` is aborted the read stops and the signal's reason is thrown (a cancellation is
 * never a result).
 */
export async function readFileTool(ctx: RuntimeContext, args: unknown, options: ToolRunOptions = {}): Promise<ToolResult> {
  const parsed = parseArgsOf(READ_FILE, args);
  if (!parsed.ok) return { success: false, error: parsed.error };
  let realPath: string | undefined;
  try {
    // Strict: a path with an unknown variable would otherwise be read literally and fail obscurely.
    const resolved = resolveVariables(parsed.value.file_path, ctx.variables, { strict: true });
    realPath = await guardRead(resolved, ctx.readRoots, secretOptionsOf(ctx));
    const { content, size } = await readTextFile(realPath, ctx.maxReadBytes, options.signal, {
      allowHardLinks: ctx.allowHardLinks === true,
    });
    return { success: true, path: realPath, content, size };
  } catch (error) {
    // `realPath` is set only once the guard accepted it, so an outside path is never echoed.
    return toToolFailure(error, realPath);
  }
}

/** `read_file`: its definition and what runs it. */
export const readFile: ToolImplementation = { spec: READ_FILE, run: readFileTool };
