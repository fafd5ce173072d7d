/**
 * The host user a command runs as. Never root: a process whose real user is root ignores
 * RLIMIT_NPROC (the kernel exempts root's user from it), so a fork bomb would not be stopped, and
 * root owns most of the host's files.
 *
 * - A worker running as another user runs its commands as itself: `bwrap` makes a user namespace
 *   (unprivileged) and the command keeps the worker's uid, so it can write the write roots the
 *   worker can.
 * - A worker running as root spawns `bwrap` as `runAs` when given, else as the owner of the
 *   project root (the user whose files the command works on), else, for a project owned by root,
 *   as nobody (65534), which can then write only where the permissions let anyone write.
 *
 * Inside the sandbox the command keeps that uid, without capabilities.
 */
import { promises as fs } from 'node:fs';
import { NOBODY } from './sandbox-request';

/** Who runs the command: `spawnAs` is set when the worker (root) must switch to that user to spawn it. */
export interface SandboxUser {
  uid: number;
  gid: number;
  spawnAs?: { uid: number; gid: number };
}

/** The user for a command over `projectRoot` (a real path); see the module comment. */
export async function sandboxUser(projectRoot: string, runAs?: { uid: number; gid: number }): Promise<SandboxUser> {
  const uid = process.getuid?.();
  const gid = process.getgid?.();
  if (uid === undefined || gid === undefined) throw new Error('Commands run only on POSIX systems');
  if (uid !== 0) return { uid, gid };
  if (runAs !== undefined) return { ...runAs, spawnAs: runAs };
  const owner = await fs.stat(projectRoot);
  // Root's group would open the files of group root to the command: nogroup instead.
  const user = owner.uid !== 0 ? { uid: owner.uid, gid: owner.gid !== 0 ? owner.gid : NOBODY.gid } : { ...NOBODY };
  return { ...user, spawnAs: user };
}
