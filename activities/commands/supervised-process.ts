/**
 * Runs one process to its end under a deadline, an output cap and the caller's abort signal, and
 * ends it and everything it started when any of them is reached: SIGTERM to every process it
 * started, then, after the grace period or at once when there is nothing to ask, SIGKILL.
 *
 * Two shapes (`sandboxed`):
 * - the spawned process is `bwrap`, whose only child is the sandbox's init (pid 1 of its pid
 *   namespace): SIGTERM goes to every process below that init, SIGKILL to the init and `bwrap`.
 *   The kernel kills every process of a pid namespace whose init ends, so nothing survives, and
 *   nothing can leave the namespace;
 * - the spawned process is the command itself (no sandbox could be made): it leads a process
 *   group of its own; signals go to the group and to every process below it, and when the command
 *   ends the rest of its group is killed, as the sandbox's end would. A process that left both
 *   (a new session, then re-parented away from the command) cannot be found.
 */
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { BoundedOutput } from './bounded-output';
import { stdioFor } from './inherited-fds';
import { descendantsOf, isRunning, signalEach } from './process-tree';

/** How often a process that should be ending is looked at again. */
const POLL_MS = 20;
/** How long bwrap may take to exit once the sandbox's init is killed. */
const BWRAP_EXIT_MS = 2_000;
/** SIGKILL rounds before giving up on processes that keep forking (unsandboxed only). */
const KILL_ROUNDS = 50;

/** What `supervise` runs, and its limits. */
export interface SuperviseOptions {
  file: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** Spawn as this user (the worker is root). */
  spawnAs?: { uid: number; gid: number };
  sandboxed: boolean;
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

/** Runs `options.file` to its end (see the module comment). Rejects only when it cannot be spawned. */
export function supervise(options: SuperviseOptions): Promise<Supervised> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(options.file, [...options.args], {
      cwd: options.cwd,
      env: options.env,
      stdio: stdioFor(),
      // A process group of its own: the unsandboxed command's group is what is signalled.
      detached: true,
      ...(options.spawnAs ?? {}),
    });
    const stdout = new BoundedOutput(options.maxOutputBytes);
    const stderr = new BoundedOutput(options.maxOutputBytes);
    let reason: EndReason | undefined;
    let exited = false;
    let closed = false;

    const processes = async (): Promise<{ term: number[]; kill: number[] }> => {
      const pid = child.pid as number;
      const below = await descendantsOf(pid);
      if (options.sandboxed) {
        // The first process below bwrap is the sandbox's init: it is killed, never asked. bwrap
        // itself is left to reap it and exit, so no zombie is left to the host's init.
        return { term: below.slice(1), kill: below.length > 0 ? below : [pid] };
      }
      return { term: [-pid, pid, ...below], kill: [-pid, pid, ...below] };
    };
    const kill = async () => {
      for (let round = 0; round < KILL_ROUNDS && !exited; round++) {
        const { kill: targets } = await processes();
        if (!(await anyRunning(targets))) break;
        signalEach(targets, 'SIGKILL');
        if (options.sandboxed) break; // the namespace goes with its init
        await delay(POLL_MS);
      }
      if (!options.sandboxed) return;
      const deadline = performance.now() + BWRAP_EXIT_MS;
      while (!exited && performance.now() < deadline) await delay(POLL_MS);
      // bwrap did not follow its child: kill it too (its child dies with it, by --die-with-parent).
      if (!exited) signalEach([child.pid as number], 'SIGKILL');
    };
    const end = async (why: EndReason) => {
      if (reason !== undefined || exited) return;
      reason = why;
      const { term } = await processes();
      const asked = term.length > 0 && (await anyRunning(term));
      if (asked) {
        signalEach(term, 'SIGTERM');
        const deadline = performance.now() + options.killGraceMs;
        while (!exited && performance.now() < deadline) await delay(POLL_MS);
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
      if (!stdout.push(chunk)) endSoon('output');
    });
    err.on('data', (chunk: Buffer) => {
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
    });
  });
}

async function anyRunning(pids: readonly number[]): Promise<boolean> {
  for (const pid of pids) if (await isRunning(pid)) return true;
  return false;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
