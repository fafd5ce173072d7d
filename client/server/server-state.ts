import * as fs from 'node:fs';
import * as path from 'node:path';
import { TemporalConfigError } from './errors';

/**
 * The pid file of a server Loopwright started (`<stateDir>/server.json`), through which `loopwright
 * server stop` and `status`, and later commands, find a server that outlived its command.
 */
export interface ServerState {
  pid: number;
  address: string;
  uiUrl?: string;
  dbFile: string;
  logFile?: string;
  namespace?: string;
  startedAt?: string;
}

/** Path of the pid file in a state folder. */
export const serverStateFile = (stateDir: string): string => path.join(stateDir, 'server.json');

/** Writes the pid file atomically (a temporary file, then rename). */
export function writeServerState(file: string, state: ServerState): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(`${file}.${process.pid}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  fs.renameSync(`${file}.${process.pid}.tmp`, file);
}

/** Reads the pid file: undefined when there is none, TemporalConfigError naming the file when it is malformed. */
export function readServerState(file: string): ServerState | undefined {
  if (!fs.existsSync(file)) return undefined;
  let state: Partial<ServerState>;
  try {
    state = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<ServerState>;
  } catch (error) {
    throw new TemporalConfigError(`${file} is not valid JSON (${(error as Error).message}); delete it`, file);
  }
  if (!Number.isInteger(state?.pid) || typeof state.address !== 'string' || typeof state.dbFile !== 'string') {
    throw new TemporalConfigError(`${file} does not name a server (pid, address, dbFile); delete it`, file);
  }
  return state as ServerState;
}

/** Removes the pid file if it still names `pid` (a later start may own it now), or in any case without one. */
export function removeServerState(file: string, pid?: number): void {
  if (pid === undefined || readServerState(file)?.pid === pid) fs.rmSync(file, { force: true });
}

/** True when `pid` names a live process; a zombie (Linux /proc state Z) counts as dead. */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const stat = readProc(pid, 'stat');
  return stat === undefined || stat[stat.lastIndexOf(')') + 2] !== 'Z';
}

/** Whether `pid` still runs a Temporal server, so that a recycled pid is never signalled (only Linux can tell). */
export function isTemporalProcess(pid: number): boolean {
  const argv = readProc(pid, 'cmdline')?.split('\0');
  return isProcessAlive(pid) && (argv === undefined || argv.includes('start-dev'));
}

function readProc(pid: number, name: string): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/${name}`, 'utf8');
  } catch {
    // No /proc (macOS), or the process just went: nothing more to learn.
    return undefined;
  }
}

/**
 * Stops a process: SIGTERM (the server then flushes SQLite and exits), SIGKILL after `graceMs`. A
 * detached server leads its own process group, which is signalled whole (a wrapper script and the
 * server it runs go together).
 */
export async function terminateProcess(pid: number, graceMs = 10_000): Promise<'not-running' | 'terminated' | 'killed'> {
  const signal = (name: NodeJS.Signals): void => {
    for (const target of [-pid, pid]) {
      try {
        return void process.kill(target, name);
      } catch {
        // No such group (the process is in someone else's), or it has just exited.
      }
    }
  };
  if (!isProcessAlive(pid)) return 'not-running';
  signal('SIGTERM');
  for (const deadline = Date.now() + graceMs; Date.now() < deadline; await sleep(50)) if (!isProcessAlive(pid)) return 'terminated';
  signal('SIGKILL');
  for (const deadline = Date.now() + 5_000; isProcessAlive(pid) && Date.now() < deadline;) await sleep(20);
  return 'killed';
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
