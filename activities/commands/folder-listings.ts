/**
 * Folder listings of the secret-file scan (`sandbox-paths.ts`), kept between commands so a large
 * project is not listed and matched afresh for every command: matching tens of thousands of names
 * against the secret-file rules costs far more than starting the sandbox.
 *
 * A listing is reused only while the folder is unchanged: same device, inode, modification and
 * change time (nanoseconds), and the same roots and rules (`matchKey`). Creating, removing or
 * renaming an entry changes the folder's modification time; a folder replaced by another has
 * another inode. File systems stamp times at the granularity of a clock tick, so a change in the
 * same tick as the listing would leave the time unchanged: a folder changed less than
 * `RACY_MS` before it is listed is not kept (as git treats a "racily clean" index entry).
 */
import { promises as fs } from 'node:fs';

/** A folder changed this recently is listed afresh next time. */
export const RACY_MS = 2_000;
/** Folders kept; the least recently used go first. */
export const MAX_KEPT_FOLDERS = 100_000;

/** A folder's entries and what the scan decided about them. */
export interface Listing {
  entries: { name: string; kind: 'folder' | 'link' | 'other' }[];
  /** Per entry: a secret file or folder. */
  secret: boolean[];
  /** A new name in this folder would be secret (`.ssh/`). */
  probeSecret: boolean;
}

const kept = new Map<string, { key: string; listing: Listing }>();

/**
 * The listing of `dir` for `matchKey`, from `read` or, when the folder has not changed since,
 * from the last scan. Throws what `fs.stat` or `read` throw.
 */
export async function folderListing(dir: string, matchKey: string, read: () => Promise<Listing>): Promise<Listing> {
  const stats = await fs.stat(dir, { bigint: true });
  const key = `${matchKey}\0${stats.dev}:${stats.ino}:${stats.mtimeNs}:${stats.ctimeNs}`;
  const hit = kept.get(dir);
  if (hit?.key === key) {
    kept.delete(dir);
    kept.set(dir, hit);
    return hit.listing;
  }
  const listing = await read();
  const settled = BigInt(Date.now() - RACY_MS) * 1_000_000n;
  if (stats.mtimeNs < settled && stats.ctimeNs < settled) {
    kept.delete(dir);
    kept.set(dir, { key, listing });
    if (kept.size > MAX_KEPT_FOLDERS) kept.delete(kept.keys().next().value as string);
  } else {
    kept.delete(dir);
  }
  return listing;
}

/** Forgets every listing (tests). */
export function forgetFolderListings(): void {
  kept.clear();
}
