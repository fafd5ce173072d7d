/**
 * The `edit_file` tool: replace an exact piece of an existing text file and write the whole new
 * file atomically, under the same roots, guards and write path as `save_output`. Every mistake the
 * model can fix (a missing file, text not found, text found several times, nothing to change) is a
 * result that says what to do, never an exception. A retried attempt that finds the edit already
 * made reports success instead of failing, or of making it twice (`file-edits.ts`).
 */
import type { ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { EDIT_FILE } from '../../common/tools/edit-file';
import { SAVE_OUTPUT } from '../../common/tools/save-output';
import type { ToolImplementation, ToolRunOptions } from './activity-wrapper';
import { writeFileAtomic } from '../../bundle/sandbox/atomic-write';
import { countOccurrences, editAppliedBefore, notFoundHint, readCurrentText, withBom, writeTarget } from './file-edits';
import { parseArgsOf } from './parse-args';
import { toToolFailure } from './tool-failure';

/** The note of a retried edit that an earlier attempt already made. */
export const ALREADY_EDITED = 'old_text is no longer in the file and new_text is (an earlier attempt of this call made the edit before its result was lost); nothing was changed again.';

/**
 * Runs `edit_file` for the session `ctx`: returns `{success: true, path, size, replacements}`
 * (`path` the real path, `size` of the new file in bytes, `replacements` made) or
 * `{success: false, error}`. The path is checked as `save_output` checks it (write roots,
 * protected paths, secret files) and the file read as `read_file` reads it (`ctx.maxReadBytes`,
 * text only, no hard links unless allowed); a leading byte-order mark is kept. `old_text` must
 * occur exactly once (overlapping occurrences count), or at least once with `replace_all`, which
 * replaces every occurrence. On a retried attempt (`options.attempt > 1`) an edit already made
 * (`editAppliedBefore`) is success with a `note`. Cancellation behaves as in `save_output`.
 */
export async function editFileTool(ctx: RuntimeContext, args: unknown, options: ToolRunOptions = {}): Promise<ToolResult> {
  const parsed = parseArgsOf(EDIT_FILE, args);
  if (!parsed.ok) return { success: false, error: parsed.error };
  const { file_path: filePath, old_text: oldText, new_text: newText, replace_all: replaceAll } = parsed.value;
  if (oldText === newText) {
    return { success: false, error: 'Nothing to change: old_text and new_text are the same; give the text the file should hold instead in new_text.' };
  }
  let realPath: string | undefined;
  try {
    const target = await writeTarget(ctx, filePath, (checked) => (realPath = checked));
    options.signal?.throwIfAborted();
    const current = await readCurrentText(target.realPath, ctx, options.signal);
    const path = target.realPath;
    if (current === undefined) {
      return {
        success: false,
        error: `File not found: ${path}. ${EDIT_FILE.name} changes an existing file; to create it, call ${SAVE_OUTPUT.name} with the whole content.`,
        path,
      };
    }
    if ((options.attempt ?? 1) > 1 && editAppliedBefore(current.text, oldText, newText)) {
      return { success: true, path, size: current.size, replacements: 0, note: ALREADY_EDITED };
    }
    const found = countOccurrences(current.text, oldText);
    if (found === 0) {
      return {
        success: false,
        error: `Text not found: old_text does not occur in ${path}. ${notFoundHint(current.text, oldText, newText)} Copy old_text exactly from the file's current text (read it again if unsure).`,
        path,
      };
    }
    if (found > 1 && replaceAll !== true) {
      return {
        success: false,
        error: `Ambiguous: old_text occurs ${found} times in ${path}. Add surrounding lines to old_text so that it occurs once, or set replace_all to true to replace every occurrence.`,
        path,
      };
    }
    const { text, replacements } = replaceAll === true ? replaceEvery(current.text, oldText, newText) : replaceOnce(current.text, oldText, newText);
    options.signal?.throwIfAborted();
    const size = await writeFileAtomic(path, withBom(text, current.bom), { root: target.root, signal: options.signal });
    return { success: true, path, size, replacements };
  } catch (error) {
    return toToolFailure(error, realPath);
  }
}

/** `text` with its one occurrence of `oldText` replaced (by position: `$` in `newText` means nothing special). */
function replaceOnce(text: string, oldText: string, newText: string): { text: string; replacements: number } {
  const at = text.indexOf(oldText);
  return { text: text.slice(0, at) + newText + text.slice(at + oldText.length), replacements: 1 };
}

/** `text` with every occurrence of `oldText` replaced, left to right without overlaps. */
function replaceEvery(text: string, oldText: string, newText: string): { text: string; replacements: number } {
  const pieces = text.split(oldText);
  return { text: pieces.join(newText), replacements: pieces.length - 1 };
}

/** `edit_file`: its definition and what runs it. */
export const editFile: ToolImplementation = { spec: EDIT_FILE, run: editFileTool };
