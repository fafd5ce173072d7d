/**
 * Bundle pinning, from workflow code (see common/pins.ts): at the start of every turn after the
 * first, the `checkPins` activity hashes the session's agent files and active skills again; a
 * change is said once, in the turn's result, the session's warnings and the Web UI. Sessions
 * recorded before pinning, and sessions with nothing pinned, schedule nothing. A check that fails
 * (a worker from before pinning) is skipped: pinning only informs.
 */
import { isCancellation, log, patched } from '@temporalio/workflow';
import type { SessionState } from '../../common/session-types';
import type { SessionRuntime } from './session-runtime';
import { rootMessage } from '../turn/tool-calls';

/** Sessions that check their pins at the start of a turn. */
export const PINS_PATCH = 'loopwright-bundle-pins';

/** What changed since the session loaded it and was not said before; recorded in `state`. */
export async function bundleChanges(rt: SessionRuntime, state: SessionState): Promise<string[]> {
  const init = rt.init;
  if (init === undefined || state.turn < 2) return [];
  const skills = (init.context.activeSkills ?? []).filter((s) => s.hash !== undefined);
  if (init.agentPin === undefined && skills.length === 0) return [];
  if (!patched(PINS_PATCH)) return [];
  let changed: string[];
  try {
    changed = (
      await rt.activities.checkPins.executeWithOptions({ summary: `checkPins ${init.agent.id}` }, [
        { ...(init.agentPin ? { agent: init.agentPin } : {}), skills, projectRoot: init.context.projectRoot },
      ])
    ).changed;
  } catch (err) {
    if (isCancellation(err)) throw err;
    log.warn('Checking the agent and skills for changes failed; going on', { error: rootMessage(err) });
    return [];
  }
  // Each version of a change is said once: the session's warnings (carried to later runs) remember it.
  const known = new Set(state.warnings ?? []);
  const fresh = changed.filter((line) => !known.has(line));
  if (fresh.length > 0) {
    state.warnings = [...(state.warnings ?? []), ...fresh];
    state.bundleChanges = [...(state.bundleChanges ?? []), ...fresh];
  }
  return fresh;
}
