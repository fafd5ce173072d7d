/**
 * What `runSandboxed` is asked and what it answers: the request, its defaults (one named place),
 * the check of its plain fields, and the result.
 */
import { z } from 'zod';
import type { SecretFileOptions } from '../../bundle/sandbox/secret-files';
import { SandboxRequestError } from './sandbox-errors';
import type { SandboxTool, ToolLeftOut } from './sandbox-tools';

/** The limits a request gets when it names none. */
export const SANDBOX_DEFAULTS = {
  /** Wall-clock time from spawning the sandbox to the command's end. */
  timeoutMs: 60_000,
  /** Between SIGTERM and SIGKILL when the sandbox is ended (timeout, abort, output limit). */
  killGraceMs: 2_000,
  /** Per stream (stdout, stderr); more ends the command (`outputLimited`). */
  maxOutputBytes: 1024 * 1024,
  /** RLIMIT_AS of every process: address space, not resident memory. Node, Java and Go reserve far more than they use, so this is generous. */
  memoryBytes: 4 * 1024 * 1024 * 1024,
  /** RLIMIT_NPROC: processes and threads of the sandbox's user, counted within its user namespace. */
  maxProcesses: 256,
  /** Size of the private `/tmp` (a tmpfs, so it is the host's memory); HOME lies inside it. */
  tmpBytes: 128 * 1024 * 1024,
} as const;

/** The uid and gid `nobody` / `nogroup` have on Debian, used when the worker runs as root and the project belongs to root. */
export const NOBODY = { uid: 65534, gid: 65534 } as const;

/** What to run: a program and its arguments (looked up on the sandbox's PATH), or a line for `/bin/sh -c`. */
export type SandboxCommand = readonly string[] | { shell: string };

/** A command to run in the sandbox. Paths are the host's; inside the sandbox they are the same. */
export interface SandboxRequest extends SecretFileOptions {
  command: SandboxCommand;
  /** The project: mounted read-only. Absolute; `/` and the home folder are refused unless `allowBroadProjectRoot`. */
  projectRoot: string;
  /** Folders mounted writable (the session's output folders): absolute, existing. */
  writeRoots?: readonly string[];
  /** Working folder, relative to the project root or absolute; inside the project or a write root. Default: the project root. */
  cwd?: string;
  /** Variables added to the scratch environment (PATH, HOME, LANG, TMPDIR); names that look like credentials are refused. */
  env?: Readonly<Record<string, string>>;
  /** Let the command reach the network (the host's network namespace). Default: no network at all. */
  network?: boolean;
  timeoutMs?: number;
  killGraceMs?: number;
  maxOutputBytes?: number;
  memoryBytes?: number;
  maxProcesses?: number;
  tmpBytes?: number;
  /** Ends the command as a timeout does (the activity's cancellation). Aborted before the start: nothing runs and the reason is thrown. */
  signal?: AbortSignal;
  /** Each chunk of the command's output as it comes, kept or not (a live view). */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void;
  /**
   * Paths inside the write roots mounted read-only again (the bundle's protected paths); a
   * segment `*` is any one name, `.*` any one name starting with a dot. Only existing paths are
   * covered: the command can still create one that does not exist yet.
   */
  readOnlyPaths?: readonly string[];
  /** The user allowed a broad project root (`/`, the home folder): `--allow-broad-project-root`. */
  allowBroadProjectRoot?: boolean;
  /** The operator's explicit opt-in: where no sandbox can be made, run the command directly (same environment, limits and kill). */
  allowUnsandboxed?: boolean;
  /** The worker runs as root: the (non-root) user the command runs as. Default: the project root's owner, or nobody when that is root. */
  runAs?: { uid: number; gid: number };
  /** The `bwrap` to use instead of the one on the worker's PATH (tests, unusual installs). */
  bwrapPath?: string;
  /**
   * Programs of the worker's offered to the command (uv from the tools folder): each host file is
   * mounted read-only at `SANDBOX_TOOLS_BIN/<name>`, which goes first on the PATH. One the command's
   * user cannot reach or run is left out (`SandboxResult.toolsLeftOut`), not refused.
   */
  tools?: readonly SandboxTool[];
}

/** How a command ended. Its own failure (exit code, signal, timeout) is reported here, never thrown. */
export interface SandboxResult {
  /** False only when the caller allowed running without a sandbox and none could be made. */
  sandboxed: boolean;
  /** The exit status, or `null` when the command ended by a signal. */
  exitCode: number | null;
  /**
   * The signal that ended the command. In the sandbox, `bwrap` reports a command killed by signal
   * n as status 128+n (as the shell does), so a command that itself exits with such a status
   * reads as killed by that signal.
   */
  signal: NodeJS.Signals | null;
  /** At most `maxOutputBytes` of each stream, decoded as UTF-8. */
  stdout: string;
  stderr: string;
  /** The stream was cut at `maxOutputBytes`. */
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  /** A stream passed `maxOutputBytes`, so the command was ended. */
  outputLimited: boolean;
  /** The command ran past `timeoutMs` and was ended. */
  timedOut: boolean;
  /** The caller's signal ended the command. */
  aborted: boolean;
  /** The command was ended from outside (timeout, abort or output limit), SIGTERM then SIGKILL after the grace. */
  killed: boolean;
  /** From the spawn to the end of the last process, in milliseconds. */
  durationMs: number;
  /** The host user the command ran as. */
  uid: number;
  /** Secret files and folders inside the roots hidden from the command (`/dev/null` over a file, which then fails to open; an empty read-only folder). */
  hiddenPaths: string[];
  /** Programs of `SandboxRequest.tools` the command did not get, and why. */
  toolsLeftOut: ToolLeftOut[];
}

const MAX_TIMEOUT_MS = 24 * 60 * 60 * 1000;
const limit = (max: number) => z.number().int().positive().max(max).optional();

/** The request's plain fields; paths are checked against the file sandbox later (`sandbox-paths.ts`). */
const REQUEST_SCHEMA = z.object({
  command: z.union([z.array(z.string()).min(1), z.object({ shell: z.string().min(1) }).strict()]),
  projectRoot: z.string().min(1),
  writeRoots: z.array(z.string().min(1)).optional(),
  cwd: z.string().min(1).optional(),
  env: z.record(z.string(), z.string()).optional(),
  network: z.boolean().optional(),
  timeoutMs: limit(MAX_TIMEOUT_MS),
  killGraceMs: limit(60_000),
  maxOutputBytes: limit(256 * 1024 * 1024),
  memoryBytes: limit(Number.MAX_SAFE_INTEGER),
  maxProcesses: limit(1_000_000),
  tmpBytes: limit(Number.MAX_SAFE_INTEGER),
  readOnlyPaths: z.array(z.string().min(1)).optional(),
  runAs: z.object({ uid: z.number().int().positive(), gid: z.number().int().positive() }).strict().optional(),
  bwrapPath: z.string().min(1).optional(),
  tools: z.array(z.object({ name: z.string().min(1), path: z.string().min(1) }).strict()).optional(),
});

/** The request with every limit filled in. */
export type CheckedRequest = SandboxRequest & { [K in keyof typeof SANDBOX_DEFAULTS]: number };

/** Checks the plain fields (`SandboxRequestError` naming the first bad one) and fills in the defaults. */
export function checkRequest(request: SandboxRequest): CheckedRequest {
  const parsed = REQUEST_SCHEMA.safeParse(request);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.map(String).join('.') || 'request';
    throw new SandboxRequestError(`Invalid command request: ${field}: ${issue.message}`, field);
  }
  const argv = 'shell' in request.command ? [request.command.shell] : request.command;
  if (argv.some((arg) => arg.includes('\0'))) throw new SandboxRequestError('Invalid command request: command: a NUL byte cannot be passed', 'command');
  const filled = { ...request } as CheckedRequest;
  for (const [key, value] of Object.entries(SANDBOX_DEFAULTS) as [keyof typeof SANDBOX_DEFAULTS, number][]) filled[key] = request[key] ?? value;
  return filled;
}

/** The argv the command is, before any wrapper: a shell line becomes `/bin/sh -c <line>`. */
export function commandArgv(command: SandboxCommand): string[] {
  return 'shell' in command ? ['/bin/sh', '-c', command.shell] : [...command];
}
