/**
 * Files where they are: a session records the host that holds its bundle and project
 * (`SessionInput.filesHost`), and the activities that touch files run only on workers of that host,
 * which poll a task queue of their own beside the general one. Model calls, compaction and the
 * transcript's paging run on any worker of the general queue. Plain data and pure functions.
 */

/** The `patched` marker of file routing (sessions recorded before it run every activity on the general queue). */
export const FILES_HOST_PATCH = 'loopwright-files-host';

/** Failure type of a file activity that reached a worker on another host (it never touches the disk there). */
export const NOT_FILES_HOST = 'LoopwrightNotFilesHost';

/** True when a worker on host `hostId` may touch the files of a session whose files are on `filesHost` (unset on either side: any). */
export function onFilesHost(hostId: string | undefined, filesHost: string | undefined): boolean {
  return hostId === undefined || filesHost === undefined || filesHost === hostId;
}

/** How long a file activity waits for a worker of its host before the session says it is waiting (and goes on waiting, longer each time). */
export const FILES_WAIT_NOTICE_MS = 15_000;

/** What a host id may be: letters, digits, `.`, `_`, `-`, at most 100 characters (a host name fits). */
export const HOST_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** The task queue of the workers on `host` that serve the general queue `taskQueue`. */
export function filesQueue(taskQueue: string, host: string): string {
  return `${taskQueue}@${host}`;
}

/** A host name made into a host id (`My Laptop.local` → `My-Laptop.local`); `localhost` when nothing is left. */
export function toHostId(name: string): string {
  const id = name
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 100);
  return id === '' ? 'localhost' : id;
}
