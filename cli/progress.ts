/**
 * Shows what a session is doing while a turn runs, by polling the `state` query: the iteration and
 * the tool running now. Only changes are printed. Also the progress line of a batch or an eval
 * while the command waits for its summary.
 */
import type { SessionState } from '../common/session-types';
import type { SessionHandle } from '../client/session-client';
import type { CommandOutput } from './output';

/** Describe a state in one line, e.g. `iteration 2/50 · running save_output`. */
export function describeProgress(state: SessionState): string {
  const where = state.iteration > 0 ? `iteration ${state.iteration}/${state.maxIterations}` : `turn ${state.turn}`;
  switch (state.status) {
    case 'initializing':
      return 'initialising the agent';
    case 'thinking':
      return `${where} · waiting for the model`;
    case 'executing_tool':
      return `${where} · running ${state.runningTools.map((t) => t.name).join(', ')}`;
    default:
      return `${where} · ${state.status.replace(/_/g, ' ')}`;
  }
}

/** Poll `state` every `intervalMs` and print changes until `stop()` is called. */
export function watchProgress(session: SessionHandle, out: CommandOutput, intervalMs = 400, paused: () => boolean = () => false): { stop(): void } {
  let last = '';
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async (): Promise<void> => {
    try {
      const line = describeProgress(await session.state());
      // While a reply is being printed live, a progress line would break it.
      if (!stopped && line !== last && !paused()) {
        last = line;
        out.error(`  … ${line}`);
      }
    } catch {
      // A query can fail while the workflow task is being retried or the worker is starting;
      // progress is best effort and the next poll tries again.
    }
    if (!stopped) timer = setTimeout(() => void tick(), intervalMs);
  };
  timer = setTimeout(() => void tick(), intervalMs);
  return {
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

/** A plain (not a terminal) stderr gets a progress line at most this often, and only when it changed. */
const PLAIN_PROGRESS_MS = 5_000;

/**
 * Wait for `work`'s result, showing its progress (`line` of its state): one line rewritten in place
 * on a terminal, else a line every few seconds when it changed. Nothing when `show` is false.
 */
export async function followWithProgress<S, R>(work: { state(): Promise<S>; result(): Promise<R> }, line: (state: S) => string, out: CommandOutput, show: boolean): Promise<R> {
  const tty = show && process.stderr.isTTY === true;
  let last = '';
  let lastAt = 0;
  const tick = async (): Promise<void> => {
    const state = await work.state().catch(() => undefined);
    if (state === undefined) return;
    const text = line(state);
    if (tty) process.stderr.write(`\r\x1b[K${text}`);
    else if (text !== last && Date.now() - lastAt >= PLAIN_PROGRESS_MS) {
      out.error(`  … ${text}`);
      lastAt = Date.now();
    }
    last = text;
  };
  const timer = show ? setInterval(() => void tick(), tty ? 250 : 1_000) : undefined;
  try {
    return await work.result();
  } finally {
    if (timer) clearInterval(timer);
    if (tty && last) process.stderr.write('\r\x1b[K');
  }
}
