/**
 * What the tools that change a saved file share (`edit_file`, and `save_output` in append mode):
 * the guarded write target, the file's current text read under `read_file`'s rules (size limit,
 * text only, no hard links unless allowed), and the text checks that make a retry safe and a
 * failed match explainable. Both write the whole new file atomically (`writeFileAtomic`), never a
 * partial append, so a reader or a crash sees the old file or the new one, nothing between.
 */
import type { RuntimeContext } from '../../common/runtime-context';
import { SecurityViolationError } from '../../bundle/errors';
import { errorCode } from '../../bundle/file-errors';
import { guardWrite, isInside, protectedPathsOf, resolveRealPath } from '../../bundle/sandbox/path-guard';
import { secretOptionsOf } from '../../bundle/sandbox/secret-files';
import { readTextFile } from '../../bundle/text-content';
import { resolveVariables } from '../../bundle/variables';

/** Where a write goes: the real path the guard accepted and the write root holding it. */
export interface WriteTarget {
  realPath: string;
  root: string;
}

/**
 * Resolves `filePath`'s variables strictly and checks it for writing for the session `ctx`: inside
 * a write root, not a protected path (the bundle's own files), not a secret file unless allowed.
 * Throws what the guard throws (`SecurityViolationError`, `ProtectedFileError`, `SecretFileError`,
 * a missing variable); `onChecked` learns the real path as soon as the guard accepts it, so a later
 * failure may name it (a refused path is never echoed).
 */
export async function writeTarget(ctx: RuntimeContext, filePath: string, onChecked?: (realPath: string) => void): Promise<WriteTarget> {
  const resolved = resolveVariables(filePath, ctx.variables, { strict: true });
  // The session's secret-file rules (defaults, the project's file, the session's lines) apply to writes too.
  const realPath = await guardWrite(resolved, ctx.writeRoots, { ...secretOptionsOf(ctx), protectedPaths: protectedPathsOf(ctx) });
  onChecked?.(realPath);
  return { realPath, root: await writeRootOf(realPath, ctx.writeRoots) };
}

/**
 * The real path of the write root holding `realPath` (the innermost, when roots nest): where the
 * write's walk through folder descriptors starts. The guard has just found one; none now means a
 * root changed in between, which is refused like any path outside the roots.
 */
export async function writeRootOf(realPath: string, writeRoots: string[]): Promise<string> {
  const roots = await Promise.all(writeRoots.map((root) => resolveRealPath(root)));
  const holding = roots.filter((root) => isInside(realPath, root, true)).sort((a, b) => b.length - a.length);
  if (holding.length === 0) throw new SecurityViolationError('outside-roots');
  return holding[0];
}

/** A file's text as a change starts from it. */
export interface CurrentText {
  /** The text, without a leading byte-order mark. */
  text: string;
  /** The file started with a UTF-8 byte-order mark, which the new file keeps. */
  bom: boolean;
  /** Its size in bytes. */
  size: number;
}

/**
 * The text of the file at `realPath` (a path the write guard accepted), or `undefined` when there
 * is none. Read like `read_file` reads: refused over `ctx.maxReadBytes` (`FileTooLargeError`),
 * when binary (`BinaryFileError`), not a regular file (`NotAFileError`), hard-linked unless
 * `ctx.allowHardLinks` (`HardLinkError`: its other name may be a file outside, whose text an
 * append would copy and a failed edit would quote), or swapped for a symlink.
 */
export async function readCurrentText(realPath: string, ctx: RuntimeContext, signal?: AbortSignal): Promise<CurrentText | undefined> {
  try {
    const { content, size } = await readTextFile(realPath, ctx.maxReadBytes, signal, { allowHardLinks: ctx.allowHardLinks === true });
    // readTextFile drops a leading byte-order mark and nothing else: three bytes fewer means there was one.
    return { text: content, bom: size === Buffer.byteLength(content, 'utf8') + 3, size };
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/** `text` as the bytes to write: with the byte-order mark back when the file had one. */
export function withBom(text: string, bom: boolean | undefined): string {
  return bom ? `\ufeff${text}` : text;
}

/** How many times `part` (not empty) occurs in `text`, overlapping occurrences counted: `aa` is twice in `aaa`. */
export function countOccurrences(text: string, part: string): number {
  let count = 0;
  for (let at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) count += 1;
  return count;
}

/**
 * Whether an edit of `oldText` into `newText` looks made already (what a retried attempt sees when
 * an earlier one wrote the file but its result was lost): `newText` is in the file and `oldText`
 * occurs nowhere outside it (a `newText` that contains `oldText` still holds it). A deletion
 * (`newText` empty) counts as made when `oldText` is gone.
 */
export function editAppliedBefore(text: string, oldText: string, newText: string): boolean {
  if (newText === '') return !text.includes(oldText);
  const pieces = text.split(newText);
  if (pieces.length === 1) return false;
  // newText's occurrences blanked out (joined by NUL, which no old_text copied from a text holds): the rest must not hold oldText.
  return !pieces.join('\u0000').includes(oldText);
}

/** Longest line quoted in a hint. */
const HINT_LINE_CHARS = 160;
/** Lines longer than this are compared by their start only (a hint is a guide, not a diff). */
const COMPARED_CHARS = 400;

/**
 * A short hint for an `old_text` that does not occur in `text`: where it would match if spaces and
 * line breaks were ignored, else the line most like its first line (`line 12: "stepsCompleted: [ ]"`),
 * and whether `newText` is already there (the change may have been made).
 */
export function notFoundHint(text: string, oldText: string, newText: string): string {
  const lines = text.split('\n');
  const hints: string[] = [];
  const anchor =
    oldText
      .split('\n')
      .map((line) => line.trim())
      .find((line) => line !== '') ?? oldText.trim();
  const squeeze = (s: string): string => s.replace(/\s+/g, ' ').trim();
  const best = closestLine(lines, anchor);
  if (squeeze(oldText) !== '' && squeeze(text).includes(squeeze(oldText))) {
    const crlf = text.includes('\r\n') ? ' (the file ends its lines with CRLF)' : '';
    hints.push(`It does occur when spaces and line breaks are ignored${best ? `, near line ${best.line}` : ''}: copy them exactly${crlf}.`);
  } else if (best !== undefined && best.score >= 0.5) {
    hints.push(`The closest line is line ${best.line}: ${quote(lines[best.line - 1]!)}.`);
  } else {
    hints.push('No line of the file resembles its first line.');
  }
  if (newText.trim() !== '') {
    const at = text.indexOf(newText);
    if (at >= 0) hints.push(`new_text already occurs at line ${text.slice(0, at).split('\n').length}: the change may have been made already.`);
  }
  return hints.join(' ');
}

/** The line (1-based) most like `anchor` by shared character pairs (Dice coefficient), and its score. */
function closestLine(lines: readonly string[], anchor: string): { line: number; score: number } | undefined {
  const wanted = pairsOf(anchor.slice(0, COMPARED_CHARS));
  if (wanted.total === 0) return undefined;
  let best: { line: number; score: number } | undefined;
  lines.forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === '') return;
    const score = dice(wanted, pairsOf(trimmed.slice(0, COMPARED_CHARS)));
    if (best === undefined || score > best.score) best = { line: i + 1, score };
  });
  return best;
}

interface Pairs {
  counts: Map<string, number>;
  total: number;
}

function pairsOf(s: string): Pairs {
  const counts = new Map<string, number>();
  for (let i = 0; i < s.length - 1; i++) {
    const pair = s.slice(i, i + 2);
    counts.set(pair, (counts.get(pair) ?? 0) + 1);
  }
  return { counts, total: Math.max(0, s.length - 1) };
}

function dice(a: Pairs, b: Pairs): number {
  if (a.total === 0 || b.total === 0) return 0;
  let shared = 0;
  for (const [pair, n] of b.counts) shared += Math.min(n, a.counts.get(pair) ?? 0);
  return (2 * shared) / (a.total + b.total);
}

/** A line as a JSON string (its spaces and tabs visible), cut to `HINT_LINE_CHARS`. */
function quote(line: string): string {
  const cut = line.length > HINT_LINE_CHARS ? `${line.slice(0, HINT_LINE_CHARS)}…` : line;
  return JSON.stringify(cut.replace(/\r$/, ''));
}
