/**
 * The temporary files of `writeFileAtomic`, and the debris a crash leaves of them. A worker killed
 * between creating its temporary file and renaming it over the target leaves
 * `.<name>.<pid>.<random>.tmp` beside the output; nothing else would ever remove it, and it would
 * be handed to whoever lists the folder. So every write sweeps the folder it writes to (through
 * the same checked folder descriptor) and removes the temporary files that are stale.
 *
 * Only the engine's own naming is matched, exactly (`isEngineTempName`): a leading dot, the target
 * name, the writer's pid, 12 lowercase hex digits and `.tmp`. Another program's `.tmp` files, or
 * anything that is not a regular file, are never touched.
 *
 * Stale means (`isStaleTemp`): not a write in flight in this process (those are tracked here),
 * and either the writer's pid is this process's (a previous worker with the same pid, as in a
 * container that restarted, or an abandoned write) or no process with that pid runs on this host,
 * or the file has not changed for `STALE_TEMP_AGE_MS` (its pid may have been reused since).
 *
 * Limit: pids are those of this host's pid namespace. Workers in other containers or hosts writing
 * to the same folder at the same moment could have a live write's temporary file taken for debris;
 * that write then fails (ENOENT on its rename) and is asked again; nothing half-written is left.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { errorCode } from '../file-errors';
import type { CheckedDir } from './dir-handle';

/**
 * How long a temporary file may stay unchanged before it is debris whatever its pid says: far
 * longer than any write takes (a write's activity times out long before), short enough that a pid
 * reused by another process does not keep the debris for good.
 */
export const STALE_TEMP_AGE_MS = 60 * 60 * 1000;

/** `.<name>.<pid>.<12 hex digits>.tmp`, exactly as `tempNameFor` makes it. */
const TEMP_NAME = /^\.(.+)\.([1-9][0-9]{0,9})\.([0-9a-f]{12})\.tmp$/;

/** Temporary files of writes in flight in this process: never stale, whatever their age. */
const inFlight = new Set<string>();

/**
 * A fresh temporary file name for the target `name` (dot-prefixed and unique per attempt, so
 * concurrent or retried writes never share one), marked in flight until `releaseTempName`.
 */
export function reserveTempName(name: string): string {
  const temp = `.${name}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  inFlight.add(temp);
  return temp;
}

/** The write that reserved `temp` is over (renamed or removed). */
export function releaseTempName(temp: string): void {
  inFlight.delete(temp);
}

/** Whether `name` is a temporary file name of the engine's own making (see the module comment). */
export function isEngineTempName(name: string): boolean {
  return TEMP_NAME.test(name);
}

/**
 * Whether the temporary file `name`, last modified at `mtimeMs`, is debris (see the module comment).
 * A name not of the engine's making is never stale.
 */
export function isStaleTemp(name: string, mtimeMs: number, now: number = Date.now()): boolean {
  const match = TEMP_NAME.exec(name);
  if (match === null || inFlight.has(name)) return false;
  if (now - mtimeMs > STALE_TEMP_AGE_MS) return true;
  const pid = Number(match[2]);
  return pid === process.pid || !isRunning(pid);
}

/** Whether a process with this pid runs on this host (EPERM: it does, under another user). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // Anything but "no such process" (a pid out of range, say) keeps the file: removing is the risk.
    return errorCode(error) !== 'ESRCH';
  }
}

/**
 * Removes the stale temporary files of the open folder `dir`, through its descriptor, and returns
 * their names. Never fails: a sweep that cannot read the folder, or loses a file to another sweep,
 * must not fail the write it precedes.
 */
export async function removeStaleTemps(dir: CheckedDir, now: number = Date.now()): Promise<string[]> {
  let names: string[];
  try {
    names = (await fs.readdir(dir.self())).filter(isEngineTempName);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    try {
      const stat = await fs.lstat(dir.entry(name));
      if (!stat.isFile() || !isStaleTemp(name, stat.mtimeMs, now)) continue;
      await fs.unlink(dir.entry(name));
      removed.push(name);
    } catch {
      // Gone meanwhile (renamed by its writer, removed by another sweep): nothing to do.
    }
  }
  return removed;
}
