/**
 * The `save_output` tool: resolve the path's variables, check it against the output roots, create
 * missing folders and write the content atomically. A retried call writes the same bytes again,
 * which is harmless, so the activity can be retried freely. In append mode the whole new file
 * (the old text and the content) is written the same way, never appended in place, and a retried
 * attempt that finds the content already at the end appends nothing (`file-edits.ts`).
 *
 * Folders and files are created through descriptors opened from the write root that holds the
 * checked path (`writeFileAtomic`), never by path: a folder swapped for a symlink after the check
 * cannot take the write, a temporary file or a new folder out of the root.
 */
import type { ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { SAVE_OUTPUT } from '../../common/tools/save-output';
import type { ToolImplementation, ToolRunOptions } from './activity-wrapper';
import { writeFileAtomic } from '../../bundle/sandbox/atomic-write';
import { readCurrentText, withBom, writeTarget } from './file-edits';
import { parseArgsOf } from './parse-args';
import { toToolFailure } from './tool-failure';

/** The note of a retried append whose content an earlier attempt already added. */
export const ALREADY_APPENDED = 'The file already ended with this content (an earlier attempt of this call appended it before its result was lost); nothing was appended again.';

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
 *
 * With `mode: 'append'` the content is added after the file's last character (the file, and its
 * folders, created when missing): `{success: true, path, size, appended}` (`size` of the whole
 * file, `appended` bytes added, `created: true` for a new file). The existing file is read like
 * `read_file` reads (`ctx.maxReadBytes`, text only, no hard links unless allowed). On a retried
 * attempt (`options.attempt > 1`) a file that already ends with the content is left alone, with a
 * `note` saying so.
 */
export async function saveOutputTool(ctx: RuntimeContext, args: unknown, options: ToolRunOptions = {}): Promise<ToolResult> {
  const parsed = parseArgsOf(SAVE_OUTPUT, args);
  if (!parsed.ok) return { success: false, error: parsed.error };
  const { file_path: filePath, content, mode } = parsed.value;
  let realPath: string | undefined;
  try {
    const target = await writeTarget(ctx, filePath, (checked) => (realPath = checked));
    options.signal?.throwIfAborted();
    if (mode === 'append') return await append(ctx, target.realPath, target.root, content, options);
    const size = await writeFileAtomic(target.realPath, content, { root: target.root, createFolders: true, signal: options.signal });
    return { success: true, path: target.realPath, size };
  } catch (error) {
    return toToolFailure(error, realPath);
  }
}

/** The append mode: the whole new file written atomically, or nothing when a retry finds the content there. */
async function append(ctx: RuntimeContext, realPath: string, root: string, content: string, options: ToolRunOptions): Promise<ToolResult> {
  const current = await readCurrentText(realPath, ctx, options.signal);
  const appended = Buffer.byteLength(content, 'utf8');
  if (current !== undefined && (options.attempt ?? 1) > 1 && content !== '' && current.text.endsWith(content)) {
    return { success: true, path: realPath, size: current.size, appended: 0, note: ALREADY_APPENDED };
  }
  options.signal?.throwIfAborted();
  const text = withBom((current?.text ?? '') + content, current?.bom);
  const size = await writeFileAtomic(realPath, text, { root, createFolders: true, signal: options.signal });
  return { success: true, path: realPath, size, appended, ...(current === undefined ? { created: true } : {}) };
}

/** `save_output`: its definition and what runs it. */
export const saveOutput: ToolImplementation = { spec: SAVE_OUTPUT, run: saveOutputTool };
