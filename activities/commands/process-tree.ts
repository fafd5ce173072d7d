/**
 * The processes a command started, found from `/proc` (Linux), and signals to all of them. Used to
 * end a command: SIGTERM to every process it started, then SIGKILL.
 *
 * A process is found by walking parent links down from the one spawned. In the sandbox every
 * process has the sandbox's init among its ancestors (orphans are re-parented to it), so the walk
 * finds all of them. Without the sandbox an orphan is re-parented outside the tree and is found
 * only through its process group (see `sandbox-runner.ts`).
 */
import { promises as fs } from 'node:fs';
import { errorCode } from '../../bundle/file-errors';

/** Parent of every running process, from `/proc/<pid>/stat`; empty without `/proc` (not Linux). */
export async function parentTable(): Promise<Map<number, number>> {
  const table = new Map<number, number>();
  let names: string[];
  try {
    names = await fs.readdir('/proc');
  } catch {
    return table;
  }
  await Promise.all(
    names.map(async (name) => {
      if (!/^[0-9]+$/.test(name)) return;
      let stat: string;
      try {
        stat = await fs.readFile(`/proc/${name}/stat`, 'utf8');
      } catch {
        return; // ended meanwhile
      }
      // `pid (comm) state ppid ...`; comm may hold spaces and parentheses, so split after the last `)`.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.set(Number(name), Number(fields[1]));
    }),
  );
  return table;
}

/** The processes below `root` (not `root` itself), parents before their children. */
export async function descendantsOf(root: number): Promise<number[]> {
  const table = await parentTable();
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of table) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const found: number[] = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    found.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return found;
}

/** Sends `signal` to each of `pids` (a negative one is a process group); those already gone are skipped. */
export function signalEach(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch (error) {
      if (errorCode(error) !== 'ESRCH') throw error;
    }
  }
}

/** Whether a process (or, negative, a process group) `pid` still exists; a zombie counts as gone. */
export async function isRunning(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return errorCode(error) === 'EPERM';
  }
  if (pid < 0) return true;
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Processes and threads whose real user is `uid` (what RLIMIT_NPROC counts), from `/proc/<pid>/status`; 0 without `/proc`. */
export async function countThreadsOf(uid: number): Promise<number> {
  let names: string[];
  try {
    names = await fs.readdir('/proc');
  } catch {
    return 0;
  }
  const counts = await Promise.all(
    names.map(async (name) => {
      if (!/^[0-9]+$/.test(name)) return 0;
      try {
        const status = await fs.readFile(`/proc/${name}/status`, 'utf8');
        if (Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) !== uid) return 0;
        return Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 1);
      } catch {
        return 0;
      }
    }),
  );
  return counts.reduce((a, b) => a + b, 0);
}
