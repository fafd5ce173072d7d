/**
 * What one run of a session hands the next when it continues as new: the latest turn results
 * (within a byte budget) and the transcript, inline or paged over from the previous run and checked
 * by its chain hash.
 */
import { ApplicationFailure, workflowInfo } from '@temporalio/workflow';
import { TRANSCRIPT_MISMATCH } from '../../common/failure-types';
import type { ContinuedSession, PendingTurn, TurnResult } from '../../common/session-types';
import { CONTINUED_SESSION_VERSION } from '../../common/continued-types';
import type { ChatMessage } from '../../common/messages';
import { CARRY_INLINE_BYTES, type HashedTranscript, TRANSCRIPT_PAGE_BYTES, type TranscriptGap, utf8Length } from '../../common/transcript';
import type { SessionActivityStubs } from '../stubs/activity-proxies';
import type { SessionRuntime } from './session-runtime';

/** Results of this many latest turns travel to the next run, for clients collecting them there. */
export const RECENT_TURNS = 8;

/** Carried turn results stay this small in total; larger replies travel as `responseOmitted` (the client reads them from the transcript). */
const CARRIED_TURNS_BYTES = 64 * 1024;

/** The latest turn results, newest kept whole first, replies dropped once they would pass the budget. */
export function carriedTurns(turns: TurnResult[]): TurnResult[] {
  let budget = CARRIED_TURNS_BYTES;
  return turns
    .slice()
    .reverse()
    .map((turn) => {
      const bytes = utf8Length(turn.response ?? '');
      if (bytes <= budget) {
        budget -= bytes;
        return turn;
      }
      return { ...turn, response: null, responseOmitted: true as const };
    })
    .reverse();
}

/**
 * Fill this run's transcript with the one the previous run handed over: inline, or page by page
 * through an activity that queries the previous run. The chain hash proves it arrived whole.
 */
export async function loadCarriedTranscript(
  activities: SessionActivityStubs,
  carried: { fromRunId: string; fromWorkflowId?: string; transcript: { count: number; hash: string; messages?: ChatMessage[]; gap?: TranscriptGap; head?: ChatMessage[] } },
  transcript: HashedTranscript,
): Promise<void> {
  const expected = carried.transcript;
  if (expected.gap) transcript.startWithGap(expected.head ?? [], expected.gap.to, expected.gap.hash);
  if (expected.messages) {
    transcript.push(...expected.messages);
  } else {
    const workflowId = carried.fromWorkflowId ?? workflowInfo().workflowId;
    while (transcript.length < expected.count) {
      const page = await activities.loadTranscriptPage({
        workflowId,
        runId: carried.fromRunId,
        from: transcript.length,
        to: expected.count,
        maxBytes: TRANSCRIPT_PAGE_BYTES,
      });
      if (page.messages.length === 0) break;
      transcript.push(...page.messages);
    }
  }
  if (transcript.length !== expected.count || transcript.hashAt() !== expected.hash) {
    throw ApplicationFailure.create({
      type: TRANSCRIPT_MISMATCH,
      message: `The transcript carried from run ${carried.fromRunId} does not match: ${transcript.length} messages with hash ${transcript.hashAt()}, expected ${expected.count} with hash ${expected.hash}`,
      nonRetryable: true,
    });
  }
}

/** What run `runId` hands the next one: the transcript (inline when small), counters, the unfinished turn, the view and budgets. */
export function continuedSession(rt: SessionRuntime, runId: string, pendingTurn: PendingTurn | undefined, recentTurns: TurnResult[], carryView: boolean): ContinuedSession {
  const { state, transcript } = rt;
  const gap = carryView ? carriedGap(rt, pendingTurn) : undefined;
  const from = gap ? gap.to : 0;
  const bytes = transcript.bytesBetween(from);
  return {
    version: CONTINUED_SESSION_VERSION,
    fromRunId: runId,
    run: state.run + 1,
    init: rt.init!,
    transcript: {
      count: transcript.length,
      hash: transcript.hashAt(),
      bytes,
      ...(gap ? { gap, head: transcript.slice(0, gap.from) } : {}),
      ...(bytes <= CARRY_INLINE_BYTES ? { messages: transcript.slice(from) } : {}),
    },
    turn: state.turn,
    usage: state.usage,
    ...(state.lastTurn ? { lastTurn: state.lastTurn } : {}),
    endRequested: rt.endRequested,
    ...(pendingTurn ? { pendingTurn } : {}),
    recentTurns,
    ...(state.pendingQuestion ? { pendingQuestion: state.pendingQuestion } : {}),
    ...(state.warnings ? { warnings: state.warnings } : {}),
    ...(rt.managed ? { context: rt.managed.context.carry(), budget: rt.managed.budgets.carry() } : {}),
    ...(rt.verifier?.carry() ? { verify: rt.verifier.carry() } : {}),
  };
}

/**
 * The messages the next run need not hold: those between the view's head and the first message the
 * view (or the unfinished turn) still uses. Undefined when there are none.
 */
function carriedGap(rt: SessionRuntime, pendingTurn: PendingTurn | undefined): TranscriptGap | undefined {
  const view = rt.managed?.context.view;
  if (!view) return undefined;
  const { transcript } = rt;
  const to = Math.min(view.from, pendingTurn?.firstIndex ?? Infinity, transcript.length);
  if (to <= view.head) return undefined;
  return { from: view.head, to, hash: transcript.hashAt(to) };
}
