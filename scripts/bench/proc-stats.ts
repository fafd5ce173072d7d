/**
 * CPU time and memory of another process on this machine, from Linux's /proc: utime + stime of
 * /proc/<pid>/stat (all threads, in clock ticks) and VmRSS / VmHWM of /proc/<pid>/status.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

let ticks: number | undefined;

/** Clock ticks per second of /proc/<pid>/stat times (`getconf CLK_TCK`, else the usual 100). */
export function clockTicksPerSecond(): number {
  if (ticks === undefined) {
    try {
      const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8', timeout: 5_000 }).trim());
      ticks = Number.isInteger(value) && value > 0 ? value : 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/** User plus system CPU time the process has used so far, in milliseconds. */
export function processCpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces; fields after it start at 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[14 - 3]);
  const stime = Number(fields[15 - 3]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`cannot read CPU times from /proc/${pid}/stat`);
  return ((utime + stime) * 1000) / clockTicksPerSecond();
}

/**
 * CPU of a process and its children: its own utime + stime, the cutime + cstime of the children it
 * reaped, and the utime + stime of those still running (a PostgreSQL postmaster and its backends).
 */
export function processTreeCpuMs(pid: number): number {
  const fieldsOf = (p: number | string) => {
    const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  };
  const own = fieldsOf(pid);
  let ticks = Number(own[14 - 3]) + Number(own[15 - 3]) + Number(own[16 - 3]) + Number(own[17 - 3]);
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const fields = fieldsOf(name);
      if (Number(fields[4 - 3]) === pid) ticks += Number(fields[14 - 3]) + Number(fields[15 - 3]);
    } catch {
      // The process ended while the folder was read.
    }
  }
  if (!Number.isFinite(ticks)) throw new Error(`cannot read CPU times of process ${pid} and its children`);
  return (ticks * 1000) / clockTicksPerSecond();
}

/** Resident memory of a process now and at its peak (since start, or since `resetPeakRss`). */
export interface ProcessMemory {
  rssBytes: number;
  peakRssBytes: number;
}

/** VmRSS and VmHWM of the process. */
export function processMemory(pid: number): ProcessMemory {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
    return Number(match[1]) * 1024;
  };
  return { rssBytes: kib('VmRSS'), peakRssBytes: kib('VmHWM') };
}

/** Reset the process's peak RSS to its current RSS (Linux >= 4.0); false where that is refused. */
export function resetPeakRss(pid: number): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
