/**
 * The `bwrap` command line of a sandboxed command: what it sees of the host and what it is
 * denied. Pure: the host's layout (`systemLayout`) and the checked paths come in, arguments go out.
 *
 * Seen, all read-only unless said: `/usr` and the top-level `/bin`, `/sbin`, `/lib*` (symlinks
 * into `/usr` on merged-/usr systems, mounts otherwise); from `/etc` only `ETC_ENTRIES`; a fresh
 * `/proc` of the sandbox's own processes; a minimal read-only `/dev` (null, zero, full, random,
 * urandom, tty, pts) with a `/dev/shm` tmpfs; a private tmpfs `/tmp` with HOME (`/tmp/home`) in it
 * (each tmpfs holds at most `tmpBytes`; everything else is read-only); the project root; the
 * write roots, writable; secrets hidden and protected paths read-only inside them; the worker's
 * programs offered (`tools`: uv), one file each in `SANDBOX_TOOLS_BIN`. Nothing else of the host
 * exists inside (no `/home`, `/root`, `/var`, `/run`, `/srv`, `/mnt`, `/opt`).
 *
 * Denied: every namespace is new (user, pid, mount, IPC, UTS, cgroup, and the network unless
 * asked), no capabilities, no further user namespaces (`--disable-userns`), a new session (no
 * terminal to inject keystrokes into), and the sandbox dies with the worker (`--die-with-parent`).
 */
import { type Stats, promises as fs } from 'node:fs';
import type { SandboxPaths } from './sandbox-paths';
import { SANDBOX_HOME, SANDBOX_TMP, SANDBOX_TOOLS_BIN } from './sandbox-env';
import type { SandboxTool } from './sandbox-tools';

/**
 * What of `/etc` a command sees, and why; nothing else of it (so not `shadow`, `gshadow`, `ssh/`,
 * `ssl/private/`, `sudoers`, `machine-id`, `npmrc`, `pip.conf`, `gitconfig` or `environment`).
 */
export const ETC_ENTRIES: readonly { entry: string; why: string }[] = [
  { entry: 'ld.so.cache', why: 'the dynamic linker finds libraries' },
  { entry: 'ld.so.conf', why: 'the dynamic linker finds libraries' },
  { entry: 'ld.so.conf.d', why: 'the dynamic linker finds libraries' },
  { entry: 'alternatives', why: 'Debian links commands such as awk and java through it' },
  { entry: 'passwd', why: 'user names for `id`, `ls -l` (no password hashes: those are in shadow, not mounted)' },
  { entry: 'group', why: 'group names' },
  { entry: 'nsswitch.conf', why: 'how names are looked up' },
  { entry: 'host.conf', why: 'name resolution' },
  { entry: 'hosts', why: 'name resolution (localhost)' },
  { entry: 'resolv.conf', why: 'name resolution with the network' },
  { entry: 'gai.conf', why: 'address selection' },
  { entry: 'services', why: 'port names' },
  { entry: 'protocols', why: 'protocol names' },
  { entry: 'ssl/certs', why: 'CA certificates for TLS' },
  { entry: 'ssl/openssl.cnf', why: 'OpenSSL defaults' },
  { entry: 'ca-certificates', why: 'CA certificates for TLS' },
  { entry: 'pki/tls/certs', why: 'CA certificates for TLS (Fedora)' },
  { entry: 'pki/ca-trust/extracted', why: 'CA certificates for TLS (Fedora)' },
  { entry: 'localtime', why: 'the local time zone' },
  { entry: 'timezone', why: 'the local time zone' },
  { entry: 'locale.alias', why: 'locale names' },
  { entry: 'mime.types', why: 'file types by extension' },
  { entry: 'os-release', why: 'which system this is' },
  { entry: 'debian_version', why: 'which system this is' },
];

/** Top-level folders with programs and libraries, mounted (or linked, when they are symlinks) besides `/usr`. */
const SYSTEM_TOP = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** How the host's system folders are made, read once. */
export interface SystemLayout {
  /** Top-level folders that are symlinks (`/bin -> usr/bin`), with their targets. */
  links: { path: string; target: string }[];
  /** System folders and `/etc` entries that exist, to mount read-only. */
  mounts: string[];
}

/** The host's layout: which of `/usr`, `SYSTEM_TOP` and `ETC_ENTRIES` exist and how. */
export async function systemLayout(): Promise<SystemLayout> {
  const layout: SystemLayout = { links: [], mounts: ['/usr'] };
  for (const top of SYSTEM_TOP) {
    const stats = await lstatOrNull(top);
    if (stats?.isSymbolicLink()) layout.links.push({ path: top, target: await fs.readlink(top) });
    else if (stats?.isDirectory()) layout.mounts.push(top);
  }
  for (const { entry } of ETC_ENTRIES) {
    if ((await lstatOrNull(`/etc/${entry}`)) !== null) layout.mounts.push(`/etc/${entry}`);
  }
  return layout;
}

/** What varies per command. */
export interface BwrapPlan {
  paths: SandboxPaths;
  network: boolean;
  tmpBytes: number;
  /** The program and its arguments as run inside (the limits wrapper first). */
  argv: readonly string[];
  /** Where bwrap writes the sandbox's init's pid (`--info-fd`; never passed into the sandbox). */
  infoFd?: number;
  /** The worker's programs offered, real paths the command's user can reach (`sandbox-tools.ts`). */
  tools?: readonly SandboxTool[];
  /** Descriptors (as bwrap gets them) of the write roots, in their order: bound by descriptor, not by path. */
  writeRootFds?: readonly number[];
}

/** The arguments of `bwrap` for `plan`; mounts are applied in this order, so later ones cover earlier ones. */
export function bwrapArgs(plan: BwrapPlan, layout: SystemLayout): string[] {
  const { paths } = plan;
  const args = ['--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--hostname', 'sandbox'];
  if (plan.network) args.push('--share-net');
  if (plan.infoFd !== undefined) args.push('--info-fd', String(plan.infoFd));
  args.push('--perms', '0755', '--dir', '/etc');
  // `-try`: an entry may be a dangling symlink (`resolv.conf` into a resolver that is not running).
  for (const mount of layout.mounts) args.push('--ro-bind-try', mount, mount);
  for (const link of layout.links) args.push('--symlink', link.target, link.path);
  // /dev is a tmpfs without a size: read-only once /dev/shm (shared memory, a tmpfs of its own) is on it.
  args.push('--proc', '/proc', '--dev', '/dev', '--size', String(plan.tmpBytes), '--tmpfs', '/dev/shm', '--remount-ro', '/dev');
  args.push('--size', String(plan.tmpBytes), '--tmpfs', SANDBOX_TMP, '--perms', '0700', '--dir', SANDBOX_HOME);
  args.push('--ro-bind', paths.projectRoot, paths.projectRoot);
  paths.writeRoots.forEach((root, i) => {
    const fd = plan.writeRootFds?.[i];
    if (fd === undefined) args.push('--bind', root, root);
    else args.push('--bind-fd', String(fd), root);
  });
  // After the write roots (which they lie in), before the secrets (which may lie in them).
  for (const p of paths.readOnly) args.push('--ro-bind', p, p);
  for (const hidden of paths.hidden) {
    if (hidden.kind === 'file') args.push('--ro-bind', '/dev/null', hidden.path);
    else args.push('--perms', '0555', '--tmpfs', hidden.path, '--remount-ro', hidden.path);
  }
  // Last, on the sandbox's root (the runner leaves tools out when a root would hold their folder).
  for (const tool of plan.tools ?? []) args.push('--ro-bind', tool.path, `${SANDBOX_TOOLS_BIN}/${tool.name}`);
  // The sandbox's root is a tmpfs without a size (folders such as /etc lie on it): read-only.
  args.push('--remount-ro', '/', '--chdir', paths.cwd, '--', ...plan.argv);
  return args;
}

/** The wrapper that sets the limits inside the sandbox (after its user namespace exists, so RLIMIT_NPROC counts only its processes). */
export function limitsWrapper(prlimit: string, limits: { memoryBytes: number; maxProcesses: number }): string[] {
  return [prlimit, `--as=${limits.memoryBytes}`, `--nproc=${limits.maxProcesses}`, '--core=0', '--'];
}

async function lstatOrNull(p: string): Promise<Stats | null> {
  try {
    return await fs.lstat(p);
  } catch {
    return null;
  }
}
