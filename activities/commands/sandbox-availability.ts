/**
 * Whether a sandbox can be made on this machine, decided once per `bwrap` and user and kept for
 * the worker's life: `bwrap` on the worker's PATH (or the one named), `prlimit` inside `/usr`, and
 * a self-check, `bwrap <the sandbox's own options> prlimit ... true`, run as the command's user.
 * The check fails where user namespaces are not allowed (a sysctl, Ubuntu's AppArmor restriction,
 * a container's seccomp profile) or `bwrap` lacks an option used here; the answer says why and how
 * to fix it.
 */
import { execFile } from 'node:child_process';
import { constants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { bwrapArgs, limitsWrapper, systemLayout, type SystemLayout } from './bwrap-args';
import { BASE_ENV } from './sandbox-env';
import type { SandboxUser } from './sandbox-user';

/** How long the self-check may take. */
const SELF_CHECK_TIMEOUT_MS = 10_000;

/** What to do when there is no `bwrap`. */
export const INSTALL_BWRAP = 'Install bubblewrap: apt-get install bubblewrap (Debian, Ubuntu; npm run setup does it when run as root), dnf install bubblewrap (Fedora)';
/** What to do when `bwrap` cannot make a user namespace. */
const ALLOW_USERNS =
  'bwrap needs unprivileged user namespaces for the worker user: check sysctl user.max_user_namespaces (> 0) and kernel.unprivileged_userns_clone (1, older Debian), ' +
  'on Ubuntu 23.10+ kernel.apparmor_restrict_unprivileged_userns or an AppArmor profile for bwrap, and in a container a seccomp profile that allows user namespaces';

/** A sandbox can be made: with what. */
export interface Available {
  ok: true;
  bwrap: string;
  prlimit: string;
  layout: SystemLayout;
}

/** No sandbox can be made: why, and how to fix it. `prlimit` is there when the limits can still be applied without a sandbox. */
export interface Unavailable {
  ok: false;
  reason: string;
  fix: string;
  prlimit?: string;
}

const answers = new Map<string, Promise<Available | Unavailable>>();

/** Whether commands of `user` can run in a sandbox (cached per `bwrap` path and user). */
export function sandboxAvailability(user: SandboxUser, bwrapPath?: string): Promise<Available | Unavailable> {
  const key = `${bwrapPath ?? ''}\0${user.uid}:${user.gid}`;
  let answer = answers.get(key);
  if (answer === undefined) {
    answer = check(user, bwrapPath);
    answers.set(key, answer);
  }
  return answer;
}

/** Forgets the cached answers (tests; an operator who just installed bubblewrap restarts the worker instead). */
export function forgetSandboxAvailability(): void {
  answers.clear();
}

async function check(user: SandboxUser, bwrapPath: string | undefined): Promise<Available | Unavailable> {
  const prlimit = await onPath('prlimit');
  if (prlimit === undefined || !prlimit.startsWith('/usr/')) {
    return { ok: false, reason: 'prlimit (util-linux) was not found in /usr', fix: 'Install util-linux (apt-get install util-linux), which the sandbox uses to set its limits' };
  }
  const bwrap = bwrapPath ?? (await onPath('bwrap'));
  if (bwrap === undefined) return { ok: false, reason: 'bwrap (bubblewrap) is not on the PATH', fix: INSTALL_BWRAP, prlimit };
  if (!(await isExecutable(bwrap))) return { ok: false, reason: `${bwrap} is not an executable file`, fix: INSTALL_BWRAP, prlimit };
  const layout = await systemLayout();
  const args = bwrapArgs(
    {
      paths: { projectRoot: '/usr', writeRoots: [], cwd: '/', readOnly: [], hidden: [] },
      network: false,
      tmpBytes: 1024 * 1024,
      argv: [...limitsWrapper(prlimit, { memoryBytes: 1024 * 1024 * 1024, maxProcesses: 16 }), 'true'],
    },
    layout,
  );
  const failure = await new Promise<string | undefined>((resolve) => {
    execFile(bwrap, args, { env: { ...BASE_ENV }, cwd: '/', timeout: SELF_CHECK_TIMEOUT_MS, ...(user.spawnAs ?? {}) }, (error, _stdout, stderr) => {
      resolve(error === null ? undefined : stderr.trim().split('\n')[0] || error.message);
    });
  });
  if (failure !== undefined) return { ok: false, reason: `bwrap failed its self-check as uid ${user.uid} (${failure})`, fix: ALLOW_USERNS, prlimit };
  return { ok: true, bwrap, prlimit, layout };
}

/** The first executable `name` on the worker's PATH. */
async function onPath(name: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '' || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    if (await isExecutable(candidate)) return fs.realpath(candidate);
  }
  return undefined;
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await fs.access(file, constants.X_OK);
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}
