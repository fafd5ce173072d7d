/**
 * Path containment, lexical only (no file-system access): the one comparison every root and
 * protected-path check makes. Kept apart from `path-guard.ts` so the modules holding the rules the
 * guard applies (secret files, protected paths, the bundle layout) can use it too.
 */
import * as path from 'node:path';

/** Whether `child` is `root` or lies beneath it; separator-aware, so `/a/bc` is not inside `/a/b`. */
export function isInside(child: string, root: string, strict = false): boolean {
  const rel = path.relative(root, child);
  if (rel === '') return !strict;
  return rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel);
}

/**
 * The folders on the way between `a` and `b`, both included, from the lower one up: when one lies
 * inside the other, it and every folder above it up to the other; otherwise just `[a, b]`.
 */
export function foldersBetween(a: string, b: string): string[] {
  const ordered = isInside(a, b) ? [a, b] : isInside(b, a) ? [b, a] : undefined;
  if (ordered === undefined) return [a, b];
  const [low, high] = ordered;
  const folders = [low];
  let current = low;
  while (current !== high) {
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
    folders.push(current);
  }
  return folders;
}
