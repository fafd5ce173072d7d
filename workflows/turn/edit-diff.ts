/**
 * The diff an approval shows for an edit (a call of a tool with `replaces`): its old
 * text against its new text as a compact unified diff (hunks with two lines of context, no file
 * headers), so the person approving reads the lines that change rather than comparing two blocks
 * by eye. Workflow code: jsdiff is pure JavaScript and deterministic, and its work is bounded
 * (`MAX_EDIT_LENGTH`) whatever the texts, so a large edit cannot stall a workflow task.
 */
import { formatPatch, OMIT_HEADERS, structuredPatch } from 'diff';

/** Lines of context around each change. */
const CONTEXT_LINES = 2;

/**
 * Most changed lines the diff looks for before giving up; past it the diff shows every old line
 * removed and every new line added, which is what it would show for texts that different anyway.
 */
const MAX_EDIT_LENGTH = 400;

/** Longest diff shown, in characters (whole lines; the lines left out are counted). */
export const MAX_DIFF_CHARS = 2_000;

/**
 * The unified diff of `oldText` → `newText`, each line cut at `lineChars` characters (with `…`),
 * at most `MAX_DIFF_CHARS` characters in all, then `… N more diff lines`. jsdiff's "No newline at
 * end of file" markers are left out: an edit's texts are pieces of a file, not files.
 */
export function editDiff(oldText: string, newText: string, lineChars: number): string {
  const patch = structuredPatch('', '', oldText, newText, undefined, undefined, { context: CONTEXT_LINES, maxEditLength: MAX_EDIT_LENGTH });
  const lines = patch === undefined ? wholeReplacement(oldText, newText) : formatPatch(patch, OMIT_HEADERS).split('\n');
  const shown: string[] = [];
  let chars = 0;
  let left = 0;
  for (const line of lines) {
    if (line === '' || line.startsWith('\\')) continue;
    const cut = line.length > lineChars ? `${line.slice(0, lineChars)}…` : line;
    if (left > 0 || chars + cut.length + 1 > MAX_DIFF_CHARS) {
      left++;
      continue;
    }
    shown.push(cut);
    chars += cut.length + 1;
  }
  if (left > 0) shown.push(`… ${left} more diff ${left === 1 ? 'line' : 'lines'}`);
  return shown.join('\n');
}

/** One hunk removing every line of `oldText` and adding every line of `newText`. */
function wholeReplacement(oldText: string, newText: string): string[] {
  const oldLines = linesOf(oldText);
  const newLines = linesOf(newText);
  return [`@@ -1,${oldLines.length} +1,${newLines.length} @@`, ...oldLines.map((line) => `-${line}`), ...newLines.map((line) => `+${line}`)];
}

function linesOf(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}
