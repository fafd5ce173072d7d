/**
 * Setting up context management and budgets for one run of a session.
 */
import { log, patched } from '@temporalio/workflow';
import { DEFAULT_MAX_CONTINUATIONS } from '../../common/defaults';
import type { ContinuedSession, InitializeResult, SessionInput } from '../../common/session-types';
import type { HashedTranscript } from '../../common/transcript';
import type { SessionActivityStubs } from '../stubs/activity-proxies';
import { Budgets } from './budgets';
import { ContextManager } from './context-manager';
import type { ManagedModel } from '../turn/model-calls';

/** Cached prompt tokens priced apart (common/model-cost.ts): a run recorded before prices every prompt token as input. */
export const CACHE_PRICING_PATCH = 'loopwright-cache-pricing';

/**
 * Context management and budgets of a session: the window (the session's, else the server's, else
 * the default), the model's view carried from the previous run, and the budgets raised so far.
 */
export async function manageContext(
  input: SessionInput,
  activities: SessionActivityStubs,
  transcript: HashedTranscript,
  init: Omit<InitializeResult, 'messages'>,
  carried: ContinuedSession | undefined,
  sessionTokens: () => number,
  refreshDetails: () => void,
): Promise<ManagedModel> {
  const settings = input.modelSettings ?? {};
  const head = carried?.context?.view.head ?? Math.min(transcript.length, countLeadingSystem(transcript));
  const context = new ContextManager(input.context ?? {}, settings, head, carried?.context);
  if (!carried && context.windowUnknown) {
    // Named in the Web UI's event list like every other activity of a session.
    const described = await activities.describeModel.executeWithOptions({ summary: `describeModel ${input.model ?? 'default model'} · context window` }, [
      { ...(input.model !== undefined ? { model: input.model } : {}) },
    ]);
    if (described.contextWindow !== null && Number.isInteger(described.contextWindow) && described.contextWindow > 0) {
      context.setWindow(described.contextWindow, `server: ${described.source}`);
    } else {
      log.info('Context window unknown; using the default', { source: described.source, window: context.window });
    }
  }
  log.info('Context window', { window: context.window, source: context.windowSource, tools: init.tools.length });
  return {
    context,
    budgets: new Budgets(input.budget ?? {}, sessionTokens, carried?.budget, () => patched(CACHE_PRICING_PATCH)),
    settings,
    fallbackModels: input.fallbackModels ?? [],
    maxContinuations: input.maxContinuations ?? DEFAULT_MAX_CONTINUATIONS,
    onCompaction: () => refreshDetails(),
  };
}

/** Messages at the start of the transcript that are system messages (the prompt and what critical actions loaded). */
function countLeadingSystem(transcript: HashedTranscript): number {
  let n = 0;
  while (n < transcript.length && transcript.messages[n]!.role === 'system') n += 1;
  return n;
}
