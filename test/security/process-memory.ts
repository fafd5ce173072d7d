/**
 * The resident memory of a process, read from Linux's /proc: the current size and the peak since
 * the peak was last reset (`VmHWM`, reset by writing 5 to `clear_refs`). The peak catches what
 * sampling would miss: a body read and parsed in one synchronous stretch.
 */
import fs from 'node:fs';

/** True where /proc gives the figures (Linux). */
export const CAN_MEASURE_PEAK = process.platform === 'linux' && fs.existsSync('/proc/self/clear_refs');

/** Start measuring a new peak of `pid`; returns its resident bytes now. */
export function resetPeak(pid: number): number {
  fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
  return statusBytes(pid, 'VmRSS');
}

/** Largest resident size of `pid` since `resetPeak`, in bytes. */
export function peakSinceReset(pid: number): number {
  return statusBytes(pid, 'VmHWM');
}

function statusBytes(pid: number, field: string): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
  if (!match) throw new Error(`/proc/${pid}/status has no ${field}`);
  return Number(match[1]) * 1024;
}
