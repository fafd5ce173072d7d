/**
 * Runs a command (a program and its arguments, or a line for `/bin/sh -c`) in a folder of the
 * project, inside a bubblewrap (`bwrap`) sandbox, and answers how it ended: `runSandboxed`.
 *
 * What the sandbox guarantees (each kept by a test in test/unit/commands-sandbox/ or
 * test/security/commands-sandbox.test.ts):
 * - **File system.** The command sees the project root read-only, the write roots writable, a
 *   private `/tmp` (a tmpfs of `tmpBytes`) holding its empty HOME, `/usr` and the top-level
 *   program folders read-only, the few `/etc` entries of `ETC_ENTRIES` (never `shadow`, `ssh/`,
 *   `ssl/private/`), its own `/proc` and a minimal read-only `/dev`; nothing else of the host: no
 *   home folders, no `/root`, `/var`, `/run`; everything but the write roots, `/tmp` and
 *   `/dev/shm` is read-only (`bwrap-args.ts`). The working folder and the write roots pass the
 *   file sandbox's checks (`guardRead`: inside the roots, symlinks resolved, not secret), and a
 *   symlink in the project leads only within the sandbox's view, so it cannot take a write outside.
 * - **Secret files** inside the roots (the file sandbox's list and the session's rules) are hidden
 *   unless the user allows secret files: `/dev/null` over a file (opening it fails: devices do not
 *   open on the project's mounts), an empty read-only folder over a folder (`sandbox-paths.ts`).
 *   Neither can be written, renamed or removed.
 * - **Protected paths** that exist inside the write roots are mounted read-only (`readOnlyPaths`).
 * - **The worker's programs** (`tools`: uv) are mounted read-only, one file each, in
 *   `SANDBOX_TOOLS_BIN`, first on the PATH; one the command's user cannot reach is left out and
 *   named in `toolsLeftOut` (`sandbox-tools.ts`).
 * - **Network**: none (a network namespace of its own, with only a loopback of its own) unless
 *   `network: true`.
 * - **Environment** built from scratch (`sandbox-env.ts`): PATH, HOME, LANG, TMPDIR and what the
 *   caller passes; the worker's variables (its API keys, Temporal credentials) never; a variable
 *   that looks like a credential is refused. Descriptors the worker inherited open arrive as
 *   `/dev/null` (`inherited-fds.ts`).
 * - **Privileges**: never root on the host (`sandbox-user.ts`), no capabilities, no new user
 *   namespaces, a session of its own (no terminal).
 * - **Limits**: wall-clock `timeoutMs`; RLIMIT_AS `memoryBytes` and RLIMIT_NPROC `maxProcesses`
 *   (set inside the sandbox's user namespace, so they count only its own processes; a fork bomb
 *   stops there); `maxOutputBytes` per stream; the caller's AbortSignal. Reaching any ends the
 *   command: SIGTERM to all its processes, SIGKILL after `killGraceMs` (`supervised-process.ts`).
 * - **Nothing outlives the call**: the command runs in a pid namespace, and the call returns only
 *   once that namespace's init has exited; the kernel ends every process of a namespace with its
 *   init, so whatever the command left running (in the background, double-forked) ends with it.
 *   `--die-with-parent` ends the sandbox if the worker dies.
 * - Where no sandbox can be made (`sandbox-availability.ts`), `SandboxUnavailableError` says why
 *   and how to fix it, unless the operator passed `allowUnsandboxed: true`.
 *
 * What it does not guarantee:
 * - Unsandboxed (`sandboxed: false` in the result): only the environment (HOME and TMPDIR a fresh
 *   folder, removed after), the limits (RLIMIT_NPROC then counts all the user's processes, so it
 *   is set to those plus `maxProcesses`), the user (never root) and the kill of the command's
 *   process group and descendants apply. Files, network and every process of the user are
 *   reachable; a process that starts a new session and is re-parented escapes the kill, and
 *   nothing ends the command if the worker itself is killed.
 * - Secret files are hidden by the names present at the start; one created later (by the command
 *   in a write root, or by anyone meanwhile) is not hidden, nor a hard link to one under another
 *   name. A protected path that does not exist yet can be created. Hiding walks the roots: about
 *   0.1 s per command for a checkout with node_modules (40,000 entries, folder listings reused
 *   while unchanged), and a project of more than `MAX_SCANNED_ENTRIES` entries is refused.
 * - Memory is address space, not resident memory: a program that maps much and touches little is
 *   refused early; `/tmp` and `/dev/shm` are tmpfs, the host's memory, up to `tmpBytes` each; there
 *   is no CPU or disk quota (a command can fill a write root's disk or spin a core until its
 *   timeout).
 * - With `network: true` the command shares the host's network: anything the host reaches, it
 *   reaches, abstract Unix sockets included.
 * - The kernel is shared: the sandbox is as strong as user namespaces and bubblewrap are; it is
 *   not a virtual machine.
 * - bwrap's own init exits last and is left for the host's init to reap: a zombie (no memory,
 *   files or namespaces) for a moment, or for good under an init that never reaps (in a container,
 *   run the worker with an init: `docker run --init`, tini).
 * - The exit status of a command killed by a signal is reported as that signal; a command that
 *   exits with 128+n itself is reported the same way (see `SandboxResult.signal`).
 */
import { constants as fsConstants, promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { isInside } from '../../bundle/sandbox/path-inside';
import { bwrapArgs, limitsWrapper } from './bwrap-args';
import { countThreadsOf } from './process-tree';
import { SandboxRequestError, SandboxSetupError, SandboxUnavailableError } from './sandbox-errors';
import { sandboxAvailability } from './sandbox-availability';
import { SANDBOX_TOOLS_BIN, sandboxEnv } from './sandbox-env';
import { resolveSandboxPaths, type SandboxPaths } from './sandbox-paths';
import { type ResolvedTools, resolveTools, type ToolLeftOut } from './sandbox-tools';
import { type CheckedRequest, checkRequest, commandArgv, type SandboxRequest, type SandboxResult } from './sandbox-request';
import { type SandboxUser, sandboxUser } from './sandbox-user';
import { supervise, type Supervised, type SuperviseOptions } from './supervised-process';

/** The limits `supervise` applies, as the request gives them. */
type SuperviseLimits = Pick<SuperviseOptions, 'timeoutMs' | 'killGraceMs' | 'maxOutputBytes' | 'signal'>;

/** The descriptor bwrap reports the sandbox's init on. */
const INFO_FD = 3;
/** How `bwrap` starts every message of its own (a failure to set the sandbox up). */
const BWRAP_MESSAGE = 'bwrap: ';

/**
 * Runs `request.command` in the sandbox and resolves with how it ended; the command's own failure
 * (status, signal, timeout, output limit) is the result, never an error. Throws before anything
 * runs: `SandboxRequestError` / `SecretEnvironmentError` for a refused request, the file sandbox's
 * `SecurityViolationError` / `SecretFileError` for a working folder or write root it refuses,
 * `SandboxUnavailableError` where no sandbox can be made (unless `allowUnsandboxed`), the
 * signal's reason when it is already aborted; `SandboxSetupError` when `bwrap` cannot set this
 * sandbox up (a root its user cannot reach).
 */
export async function runSandboxed(request: SandboxRequest): Promise<SandboxResult> {
  const checked = checkRequest(request);
  const env = sandboxEnv(checked.env);
  checked.signal?.throwIfAborted();
  const paths = await resolveSandboxPaths(checked);
  const user = await sandboxUser(paths.projectRoot, checked.runAs);
  const tools = await toolsFor(checked, paths, user);
  const available = await sandboxAvailability(user, checked.bwrapPath);
  checked.signal?.throwIfAborted();
  const argv = commandArgv(checked.command);
  const limits: SuperviseLimits = {
    timeoutMs: checked.timeoutMs,
    killGraceMs: checked.killGraceMs,
    maxOutputBytes: checked.maxOutputBytes,
    signal: checked.signal,
    ...(checked.onOutput ? { onOutput: checked.onOutput } : {}),
  };
  const spawnAs = user.spawnAs ? { spawnAs: user.spawnAs } : {};

  if (!available.ok) {
    if (!checked.allowUnsandboxed || available.prlimit === undefined) throw new SandboxUnavailableError(available.reason, available.fix);
    return runUnsandboxed(available.prlimit, argv, env, paths.cwd, user, checked, limits, tools);
  }

  const inner = [...limitsWrapper(available.prlimit, checked), ...argv];
  if (tools.offered.length > 0) env.PATH = `${SANDBOX_TOOLS_BIN}:${env.PATH}`;
  // The write roots are bound by descriptor: a root swapped for a link after the check still binds the folder checked.
  const pinned = await pinFolders(paths.writeRoots);
  let ran: Awaited<ReturnType<typeof supervise>>;
  try {
    const args = (fds: readonly number[]) =>
      bwrapArgs({ paths, network: checked.network === true, tmpBytes: checked.tmpBytes, argv: inner, infoFd: INFO_FD, tools: tools.offered, writeRootFds: fds }, available.layout);
    ran = await supervise({ file: available.bwrap, args, passFds: pinned.map((h) => h.fd), cwd: '/', env, sandboxed: true, infoFd: INFO_FD, ...spawnAs, ...limits });
  } finally {
    await Promise.all(pinned.map((h) => h.close()));
  }
  const stderr = ran.stderr.text();
  if (!ran.killed && ran.exitCode === 1 && ran.stdout.total === 0 && stderr.startsWith(BWRAP_MESSAGE)) {
    throw new SandboxSetupError(`${stderr.trim()} (the command runs as uid ${user.uid})`);
  }
  return result(
    ran,
    true,
    user.uid,
    paths.hidden.map((hidden) => hidden.path),
    tools.leftOut,
  );
}

/**
 * Each folder opened (never through a link at its last step) and checked to be the folder named:
 * bwrap then binds what was checked, whatever the path leads to by the time it mounts. Throws
 * `SandboxRequestError` naming a folder that changed in between; closes what it opened.
 */
async function pinFolders(folders: readonly string[]): Promise<FileHandle[]> {
  const handles: FileHandle[] = [];
  try {
    for (const [i, folder] of folders.entries()) {
      const handle = await fs.open(folder, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_NOFOLLOW).catch((error: unknown) => {
        throw new SandboxRequestError(`writeRoots[${i}] ${folder} changed while the command was set up (${(error as Error).message}); run it again`, `writeRoots[${i}]`);
      });
      handles.push(handle);
      const opened = await fs.readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
      if (opened !== folder)
        throw new SandboxRequestError(`writeRoots[${i}] ${folder} changed while the command was set up (it now leads to ${opened ?? 'nothing'}); run it again`, `writeRoots[${i}]`);
    }
    return handles;
  } catch (error) {
    await Promise.all(handles.map((h) => h.close()));
    throw error;
  }
}

/** The request's tools the command gets; none when a root would hold their folder (bwrap could not make it inside that root's mount). */
async function toolsFor(checked: CheckedRequest, paths: SandboxPaths, user: SandboxUser): Promise<ResolvedTools> {
  const resolved = await resolveTools(checked.tools ?? [], user);
  const holder = [paths.projectRoot, ...paths.writeRoots].find((root) => isInside(SANDBOX_TOOLS_BIN, root));
  if (holder === undefined) return resolved;
  const reason = `the root ${holder} holds ${SANDBOX_TOOLS_BIN}, where programs are offered`;
  return { offered: [], leftOut: [...resolved.offered.map((tool) => ({ ...tool, reason })), ...resolved.leftOut] };
}

/**
 * The operator's fallback: the command itself, with the same environment (HOME and TMPDIR a fresh
 * folder of its own; the tools linked from a folder in it, first on the PATH) and limits.
 */
async function runUnsandboxed(
  prlimit: string,
  argv: string[],
  env: Record<string, string>,
  cwd: string,
  user: SandboxUser,
  checked: CheckedRequest,
  limits: SuperviseLimits,
  tools: ResolvedTools,
): Promise<SandboxResult> {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), 'loopwright-command-'));
  try {
    let PATH = env.PATH;
    if (tools.offered.length > 0) {
      // Made before HOME is handed over, so the command cannot swap the links.
      const bin = path.join(home, '.loopwright-tools');
      await fs.mkdir(bin, { mode: 0o755 });
      for (const tool of tools.offered) await fs.symlink(tool.path, path.join(bin, tool.name));
      PATH = `${bin}:${PATH}`;
    }
    if (user.spawnAs) await fs.chown(home, user.spawnAs.uid, user.spawnAs.gid);
    // Without a user namespace RLIMIT_NPROC counts every process of the user: allow those running now, plus the command's own.
    const maxProcesses = (await countThreadsOf(user.uid)) + checked.maxProcesses;
    const wrapper = limitsWrapper(prlimit, { memoryBytes: checked.memoryBytes, maxProcesses });
    const ran = await supervise({
      file: wrapper[0],
      args: [...wrapper.slice(1), ...argv],
      cwd,
      env: { ...env, PATH, HOME: home, TMPDIR: home },
      sandboxed: false,
      ...(user.spawnAs ? { spawnAs: user.spawnAs } : {}),
      ...limits,
    });
    return result(ran, false, user.uid, [], tools.leftOut);
  } finally {
    await fs.rm(home, { recursive: true, force: true });
  }
}

function result(ran: Supervised, sandboxed: boolean, uid: number, hiddenPaths: string[], toolsLeftOut: ToolLeftOut[]): SandboxResult {
  let { exitCode, signal } = ran;
  // bwrap reports a command killed by signal n as status 128 + n, as the shell does.
  const byStatus = sandboxed && exitCode !== null && exitCode > 128 ? signalName(exitCode - 128) : undefined;
  if (byStatus !== undefined) [exitCode, signal] = [null, byStatus];
  return {
    sandboxed,
    exitCode,
    signal,
    stdout: ran.stdout.text(),
    stderr: ran.stderr.text(),
    stdoutTruncated: ran.stdout.truncated,
    stderrTruncated: ran.stderr.truncated,
    outputLimited: ran.outputLimited,
    timedOut: ran.timedOut,
    aborted: ran.aborted,
    killed: ran.killed,
    durationMs: Math.round(ran.durationMs),
    uid,
    hiddenPaths,
    toolsLeftOut,
  };
}

function signalName(n: number): NodeJS.Signals | undefined {
  return (Object.keys(os.constants.signals) as NodeJS.Signals[]).find((name) => os.constants.signals[name] === n);
}
