import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { TemporalConfigError } from './errors';

/**
 * The pid file of a Loopwright-started dev server (`<stateDir>/server.json`), through which
 * `loopwright server stop` and `status`, and later commands, find a server that outlived the
 * command that started it.
 */
const serverStateSchema = z.object({
  pid: z.number().int().positive(),
  address: z.string().min(1),
  uiUrl: z.string().optional(),
  dbFile: z.string().min(1),
  logFile: z.string().optional(),
  namespace: z.string().optional(),
  startedAt: z.string().optional(),
});

/** Contents of `server.json`. */
export type ServerState = z.infer<typeof serverStateSchema>;

/** Path of the pid file in a state folder. */
export function serverStateFile(stateDir: string): string {
  return path.join(stateDir, 'server.json');
}

/** Writes the pid file atomically (temporary file then rename), creating its folder. */
export function writeServerState(file: string, state: ServerState): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`);
  fs.renameSync(temporary, file);
}

/** Reads the pid file; undefined when there is none, TemporalConfigError naming the file when it is malformed. */
export function readServerState(file: string): ServerState | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new TemporalConfigError(`${file} is not valid JSON (${(error as Error).message}); delete it`, file);
  }
  const parsed = serverStateSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TemporalConfigError(`${file}: field ${issue.path.join('.') || '(root)'}: ${issue.message}; delete the file`, file);
  }
  return parsed.data;
}

/** Removes the pid file if it exists. */
export function removeServerState(file: string): void {
  fs.rmSync(file, { force: true });
}

/** True when `pid` names a live process (a zombie counts as dead). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to someone else, which still means alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return procState(pid) !== 'Z';
}

/** Linux process state letter from /proc, or undefined elsewhere. */
function procState(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch (error) {
    // No /proc (macOS) or the process just went: nothing more to learn.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Whether `pid` still runs a Temporal dev server, so a recycled pid is never signalled. Only Linux
 * can tell (from /proc); elsewhere a live pid is trusted.
 */
export function isTemporalProcess(pid: number): boolean {
  if (!isProcessAlive(pid)) return false;
  try {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return argv.includes('start-dev') || argv.some((arg) => path.basename(arg).startsWith('temporal'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return process.platform !== 'linux';
    throw error;
  }
}

/**
 * Stops a process: SIGTERM (the dev server then flushes SQLite and exits), and SIGKILL when it is
 * still alive after `graceMs`. When `pid` leads a process group (a detached server does) the whole
 * group is signalled, so a wrapper script and the server it runs go together.
 */
export async function terminateProcess(pid: number, options: { graceMs?: number } = {}): Promise<'not-running' | 'terminated' | 'killed'> {
  if (!isProcessAlive(pid)) return 'not-running';
  const target = leadsGroup(pid) ? -pid : pid;
  signal(target, 'SIGTERM');
  const deadline = Date.now() + (options.graceMs ?? 10_000);
  while (Date.now() < deadline) {
    if (!isProcessAlive(pid)) return 'terminated';
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  signal(target, 'SIGKILL');
  // SIGKILL cannot be ignored; the bound only guards against a zombie that /proc cannot reveal.
  const killDeadline = Date.now() + 5_000;
  while (isProcessAlive(pid) && Date.now() < killDeadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return 'killed';
}

function leadsGroup(pid: number): boolean {
  if (process.platform === 'win32') return false;
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    // ESRCH: no group with that id, so the process is a member of someone else's group;
    // EPERM: the group exists but is not ours to signal.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return false;
    if (code === 'EPERM') return true;
    throw error;
  }
}

function signal(target: number, name: NodeJS.Signals): void {
  try {
    process.kill(target, name);
  } catch (error) {
    // ESRCH: it exited between the check and the signal, which is what we wanted.
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}
