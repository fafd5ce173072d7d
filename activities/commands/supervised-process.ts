/**
 * Runs one process to its end under a deadline, an output cap and the caller's abort signal, and
 * ends it and everything it started when any of them is reached: SIGTERM to every process it
 * started, then, after the grace period or at once when there is nothing to ask, SIGKILL.
 *
 * Two shapes (`sandboxed`):
 * - the spawned process is `bwrap`, which reports the host pid of the sandbox's init (pid 1 of its
 *   pid namespace) on `infoFd`: SIGTERM goes to every process below that init, SIGKILL to the init.
 *   The kernel kills every process of a pid namespace whose init ends, so nothing survives, and
 *   nothing can leave the namespace. `bwrap` reports the command's end before its init has quite
 *   exited, so the call also waits for the init to be gone (it may stay a zombie until the host's
 *   init reaps it: a zombie holds no memory, file or namespace);
 * - the spawned process is the command itself (no sandbox could be made): it leads a process
 *   group of its own; signals go to the group and to every process below it, and when the command
 *   ends the rest of its group is killed, as the sandbox's end would. A process that left both
 *   (a new session, then re-parented away from the command) cannot be found.
 */
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import type { Readable } from 'node:stream';
import { BoundedOutput } from './bounded-output';
import { stdioFor } from './inherited-fds';
import { descendantsOf, isRunning, signalEach } from './process-tree';

/** How often a process that should be ending is looked at again. */
const POLL_MS = 10;
/** How long the sandbox's init may take to exit once bwrap has reported, or once it is killed. */
const INIT_EXIT_MS = 2_000;
/** SIGKILL rounds before giving up on processes that keep forking (unsandboxed only). */
const KILL_ROUNDS = 50;

/** What `supervise` runs, and its limits. */
export interface SuperviseOptions {
  file: string;
  /** The arguments; as a function, of the numbers `passFds` get in the child. */
  args: readonly string[] | ((passedFds: readonly number[]) => readonly string[]);
  /** Descriptors of the worker the child gets (after its other descriptors), such as the write roots bwrap binds by descriptor. */
  passFds?: readonly number[];
  /** Each chunk of output as it comes (kept or not), for a live view. */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void;
  cwd: string;
  env: Record<string, string>;
  /** Spawn as this user (the worker is root). */
  spawnAs?: { uid: number; gid: number };
  /** `file` is bwrap, given `--info-fd <infoFd>`. */
  sandboxed: boolean;
  infoFd?: number;
  timeoutMs: number;
  killGraceMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
}

/** How the process ended; the exit status is the spawned process's own. */
export interface Supervised {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: BoundedOutput;
  stderr: BoundedOutput;
  timedOut: boolean;
  aborted: boolean;
  outputLimited: boolean;
  killed: boolean;
  durationMs: number;
}

type EndReason = 'timeout' | 'abort' | 'output';

/** A process known by pid and start time, so a reused pid is never taken for it. */
interface KnownProcess {
  pid: number;
  start: string;
}

/** Runs `options.file` to its end (see the module comment). Rejects only when it cannot be spawned. */
export function supervise(options: SuperviseOptions): Promise<Supervised> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const infoFd = options.sandboxed ? options.infoFd : undefined;
    const stdio = stdioFor(infoFd === undefined ? [] : [infoFd]) as (number | 'ignore' | 'pipe')[];
    const passed = (options.passFds ?? []).map((fd) => stdio.push(fd) - 1);
    const args = typeof options.args === 'function' ? options.args(passed) : options.args;
    const child = spawn(options.file, [...args], {
      cwd: options.cwd,
      env: options.env,
      stdio,
      // A process group of its own: the unsandboxed command's group is what is signalled.
      detached: true,
      ...(options.spawnAs ?? {}),
    });
    const stdout = new BoundedOutput(options.maxOutputBytes);
    const stderr = new BoundedOutput(options.maxOutputBytes);
    let reason: EndReason | undefined;
    let exited = false;
    let closed = false;
    let init: Promise<KnownProcess | undefined> = Promise.resolve(undefined);

    if (infoFd !== undefined) init = readInit(child.stdio[infoFd] as Readable);

    /** Who gets SIGTERM, and who SIGKILL. */
    const processes = async (): Promise<{ term: number[]; kill: number[] }> => {
      const pid = child.pid as number;
      if (options.sandboxed) {
        const known = await init;
        if (known !== undefined) return { term: await descendantsOf(known.pid), kill: [known.pid] };
        // No report from bwrap (it failed early): its first child is the init.
        const below = await descendantsOf(pid);
        return { term: below.slice(1), kill: below.length > 0 ? below.slice(0, 1) : [pid] };
      }
      const below = await descendantsOf(pid);
      return { term: [-pid, pid, ...below], kill: [-pid, pid, ...below] };
    };
    const kill = async () => {
      for (let round = 0; round < KILL_ROUNDS && !exited; round++) {
        const { kill: targets } = await processes();
        if (!(await anyRunning(targets))) break;
        signalEach(targets, 'SIGKILL');
        if (options.sandboxed) break; // the namespace goes with its init; bwrap reaps it and exits
        await delay(POLL_MS);
      }
      if (!options.sandboxed) return;
      await waitFor(() => exited, INIT_EXIT_MS);
      // bwrap did not follow its child: kill it too (its child dies with it, by --die-with-parent).
      if (!exited) signalEach([child.pid as number], 'SIGKILL');
    };
    const end = async (why: EndReason) => {
      if (reason !== undefined || exited) return;
      reason = why;
      const { term } = await processes();
      if (term.length > 0 && (await anyRunning(term))) {
        signalEach(term, 'SIGTERM');
        await waitFor(() => exited, options.killGraceMs);
      }
      if (!exited) await kill();
    };
    const endSoon = (why: EndReason) => {
      end(why).catch(() => {
        // Signalling failed (EPERM): kill what can be killed; the timer and `close` still end the call.
        child.kill('SIGKILL');
      });
    };

    const timer = setTimeout(() => endSoon('timeout'), options.timeoutMs);
    const onAbort = () => endSoon('abort');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();

    const [out, err] = [child.stdout as Readable, child.stderr as Readable];
    out.on('data', (chunk: Buffer) => {
      options.onOutput?.('stdout', chunk);
      if (!stdout.push(chunk)) endSoon('output');
    });
    err.on('data', (chunk: Buffer) => {
      options.onOutput?.('stderr', chunk);
      if (!stderr.push(chunk)) endSoon('output');
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.on('exit', () => {
      exited = true;
      if (options.sandboxed) return;
      // What the command left running in its group ends with it, as in the sandbox.
      signalEach([-(child.pid as number)], 'SIGKILL');
      // A process that left the group may still hold the pipes: stop waiting for it after the grace.
      setTimeout(() => {
        if (!closed) {
          out.destroy();
          err.destroy();
        }
      }, options.killGraceMs).unref();
    });
    child.on('close', (code, signal) => {
      closed = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      const finish = () =>
        resolve({
          exitCode: code,
          signal,
          stdout,
          stderr,
          timedOut: reason === 'timeout',
          aborted: reason === 'abort',
          outputLimited: reason === 'output',
          killed: reason !== undefined,
          durationMs: performance.now() - started,
        });
      // Nothing of the sandbox may outlive the call: wait for its init, which ends the rest.
      init.then(awaitGone).then(finish, finish);
    });
  });
}

/** The sandbox's init as bwrap reports it on its info descriptor (`{"child-pid": 1234, ...}`), or `undefined`. */
function readInit(info: Readable): Promise<KnownProcess | undefined> {
  return new Promise((resolve) => {
    let text = '';
    info.setEncoding('utf8');
    info.on('data', (chunk: string) => {
      text += chunk;
      const pid = /"child-pid"\s*:\s*(\d+)/.exec(text)?.[1];
      if (pid !== undefined) resolve(startTime(Number(pid)).then((start) => (start === undefined ? undefined : { pid: Number(pid), start })));
    });
    info.on('error', () => resolve(undefined));
    info.on('close', () => resolve(undefined));
  });
}

/** Waits until `known` has exited (a zombie counts as exited); kills it if it lingers. */
async function awaitGone(known: KnownProcess | undefined): Promise<void> {
  if (known === undefined) return;
  const alive = async () => {
    const stat = await procStat(known.pid);
    return stat !== undefined && stat.start === known.start && stat.state !== 'Z';
  };
  const deadline = performance.now() + INIT_EXIT_MS;
  while ((await alive()) && performance.now() < deadline) await delay(POLL_MS);
  if (await alive()) {
    signalEach([known.pid], 'SIGKILL');
    while (await alive()) await delay(POLL_MS);
  }
}

async function startTime(pid: number): Promise<string | undefined> {
  return (await procStat(pid))?.start;
}

/** State and start time (clock ticks after boot) of `pid`, from `/proc/<pid>/stat`. */
async function procStat(pid: number): Promise<{ state: string; start: string } | undefined> {
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after the name start at the third, the state; the start time is the 22nd.
    return { state: fields[0], start: fields[19] };
  } catch {
    return undefined;
  }
}

async function anyRunning(pids: readonly number[]): Promise<boolean> {
  for (const pid of pids) if (await isRunning(pid)) return true;
  return false;
}

async function waitFor(done: () => boolean, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  while (!done() && performance.now() < deadline) await delay(POLL_MS);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
