/**
 * File descriptors the worker inherited open without close-on-exec (from the shell or supervisor
 * that started it). Every child the worker spawns inherits them too, and neither libuv nor `bwrap`
 * closes them, so a sandboxed command would get a pipe, socket or file of the worker's parent. The
 * child gets `/dev/null` in their place instead (`stdioFor`); the worker's own descriptors are
 * close-on-exec (Node opens everything so) and never reach a child.
 */
import { openSync, readdirSync, readFileSync } from 'node:fs';
import type { StdioOptions } from 'node:child_process';

/** `O_CLOEXEC` in the octal `flags:` line of `/proc/self/fdinfo/<fd>` (Linux). */
const O_CLOEXEC = 0o2000000;

let devNull: number | undefined;

/** Descriptors above stderr that a child would inherit; empty without `/proc` (not Linux). */
export function inheritableFds(): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc/self/fdinfo');
  } catch {
    return [];
  }
  const fds: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    try {
      const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
      if (flags !== undefined && (parseInt(flags, 8) & O_CLOEXEC) === 0) fds.push(fd);
    } catch {
      // closed meanwhile
    }
  }
  return fds;
}

/**
 * stdin from /dev/null, stdout and stderr piped, `piped` descriptors (above stderr) piped too, and
 * every inheritable descriptor replaced by /dev/null.
 */
export function stdioFor(piped: readonly number[] = [], fds: readonly number[] = inheritableFds()): StdioOptions {
  const stdio: (number | 'ignore' | 'pipe')[] = ['ignore', 'pipe', 'pipe'];
  const last = Math.max(2, ...fds, ...piped);
  if (fds.some((fd) => !piped.includes(fd))) devNull ??= openSync('/dev/null', 'r');
  for (let fd = 3; fd <= last; fd++) stdio.push(piped.includes(fd) ? 'pipe' : fds.includes(fd) && devNull !== undefined ? devNull : 'ignore');
  return stdio;
}
