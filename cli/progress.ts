/**
 * Shows what a session is doing while a turn runs, by polling the `state` query: the iteration and
 * the tool running now. Only changes are printed.
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
