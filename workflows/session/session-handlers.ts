/**
 * The session's handlers: `send` and `awaitTurn`, the state and transcript queries, the end and
 * interrupt signals, and the updates that adjust a session (extend, compact, budget). They read and
 * change the session through its runtime object.
 */
import { ApplicationFailure, condition, log, setHandler } from '@temporalio/workflow';
import { MAX_USER_MESSAGE_BYTES } from '../../common/defaults';
import { BAD_INPUT, BUSY, SESSION_ENDING, SESSION_FAILED, TOO_LARGE } from '../../common/failure-types';
import type { BudgetChange, BudgetState, SessionState, TurnResult } from '../../common/session-types';
import { TRANSCRIPT_PAGE_BYTES, utf8Length } from '../../common/transcript';
import { RECENT_TURNS } from './carry-over';
import {
  TRANSCRIPT_LOADING,
  awaitTurnUpdate,
  budgetUpdate,
  compactUpdate,
  endSignal,
  extendUpdate,
  interruptSignal,
  messagesQuery,
  sendUpdate,
  stateQuery,
  transcriptPageQuery,
} from '../../common/contract/session-definitions';
import type { TurnStart } from '../turn/turn';
import type { ManagedModel } from '../turn/model-calls';
import type { SessionRuntime } from './session-runtime';
import { addUsage } from '../turn/usage';

/** What the handlers call on the session's run (session-run.ts). */
export interface HandledRun extends SessionRuntime {
  /** The `state` query's answer. */
  snapshot(): SessionState;
  /** Run (or resume) a turn; undefined when it goes on in the next run. */
  runTurn(start: TurnStart): Promise<TurnResult | undefined>;
  /** The result of `turn`, while the run keeps it. */
  finishedTurn(turn: number): TurnResult | undefined;
  /** The session is between turns and a newer build is current: it moves there before taking a message. */
  upgradeDue(): boolean;
  /** Set by `send` when the session is to move to the newer current build now. */
  upgradeRequested: boolean;
}

/** Install the handlers that inspect and adjust a session: extend, state, transcript, end, interrupt, compact, budget. */
export function installControlHandlers(rt: HandledRun): void {
  setHandler(extendUpdate, (n: number | null) => rt.limits.extend(n), {
    validator: (n: number | null) => {
      if (n !== undefined && n !== null && (!Number.isInteger(n) || n < 1 || n > 10_000))
        throw ApplicationFailure.nonRetryable(`n must be a whole number from 1 to 10000, got ${String(n)}`, BAD_INPUT);
      if (!rt.busy && rt.resumingTurn === undefined) throw ApplicationFailure.nonRetryable('No turn is running to extend; after a turn stopped at its limit, send "continue"', BAD_INPUT);
    },
    description: "Raise the running turn's iteration limit by n (default: the session's limit)",
  });

  setHandler(stateQuery, () => rt.snapshot(), {
    description: 'Where the session stands: status, turn, iteration, running tools, pending approvals, tokens, run',
  });
  setHandler(
    messagesQuery,
    (from = 0) => {
      if (rt.transcriptLoading) throw new Error(TRANSCRIPT_LOADING);
      const gap = rt.transcript.gap;
      if (gap && from < gap.to) throw new Error(`Messages ${gap.from}-${gap.to - 1} are held by the run this one continued from; read the transcript with the transcriptPage query`);
      if (rt.transcript.bytesBetween(Math.max(0, from)) > TRANSCRIPT_PAGE_BYTES) {
        throw new Error(`The transcript from message ${from} is over ${TRANSCRIPT_PAGE_BYTES} bytes; read it in pages with the transcriptPage query`);
      }
      return rt.transcript.slice(from);
    },
    { description: 'The transcript from an index, for small transcripts (use transcriptPage otherwise)' },
  );
  setHandler(
    transcriptPageQuery,
    (from, maxBytes, to) => {
      if (!Number.isInteger(from) || from < 0) throw new Error(`from must be a whole number >= 0, got ${String(from)}`);
      if (rt.transcriptLoading) throw new Error(TRANSCRIPT_LOADING);
      // Messages this run does not hold stand in the run it continued from.
      const gap = rt.transcript.gap;
      if (gap && rt.transcript.inGap(from))
        return { from, messages: [], total: rt.transcript.length, hash: rt.transcript.hashAt(gap.to), earlier: { runId: rt.input.continued!.fromRunId, to: gap.to } };
      const cap = Math.min(maxBytes ?? TRANSCRIPT_PAGE_BYTES, TRANSCRIPT_PAGE_BYTES);
      return rt.transcript.page(from, cap, to ?? rt.transcript.length);
    },
    { description: 'A page of the transcript: messages from `from` (to `to`), at most maxBytes (384 KB), with the total and the chain hash' },
  );
  setHandler(
    endSignal,
    () => {
      rt.endRequested = true;
    },
    { description: 'Complete the session after the current turn (at once when idle)' },
  );
  setHandler(
    interruptSignal,
    (reason?: string) => {
      if (!rt.currentTurn) {
        log.info('Interrupt ignored: no turn is running', { reason });
        return;
      }
      log.info('Interrupting the current turn', { turn: rt.state.turn, reason });
      rt.currentTurn.cancel();
    },
    { description: 'Cancel the model or tool call in flight; the turn ends interrupted and the session waits for the next message' },
  );
}

/** Install the updates that adjust the model's context and budgets: compact and budget. */
export function installContextHandlers(rt: HandledRun): void {
  setHandler(
    compactUpdate,
    async () => {
      rt.busy = true;
      try {
        // No await once the session is ready: recorded histories replay with the same commands in the same order.
        const managed = rt.ready && rt.managed ? rt.managed : await whenReady(rt, 'context management');
        const record = await compactView(rt, managed);
        rt.refreshDetails();
        return record ?? null;
      } finally {
        rt.busy = false;
      }
    },
    {
      validator: () => {
        if (rt.ready && !rt.managed) throw ApplicationFailure.nonRetryable('This session has no context management (it started before it existed)', BAD_INPUT);
        if (rt.busy || rt.resumingTurn !== undefined) throw ApplicationFailure.nonRetryable('busy: a turn is running; compact once it has finished', BUSY);
        if (rt.continuing) throw rt.continuedFailure();
      },
      description: "Compact the model's view of the transcript now: prune old tool results, summarise the oldest exchanges",
    },
  );
  setHandler(
    budgetUpdate,
    (change: BudgetChange) => {
      const raise = (managed: ManagedModel): BudgetState => {
        managed.budgets.raise(change);
        rt.refreshDetails();
        return managed.budgets.state();
      };
      // At once when the session is ready (as recorded histories have it); else once it is.
      return rt.ready && rt.managed ? raise(rt.managed) : whenReady(rt, 'budgets').then(raise);
    },
    {
      validator: (change: BudgetChange) => {
        if (rt.ready && !rt.managed) throw ApplicationFailure.nonRetryable('This session has no budgets (it started before they existed)', BAD_INPUT);
        const c = (change ?? {}) as Record<string, unknown>;
        const known = ['turnTokens', 'sessionTokens', 'sessionCost'];
        const unknown = Object.keys(c).find((k) => !known.includes(k));
        if (unknown !== undefined) throw ApplicationFailure.nonRetryable(`${unknown}: unknown budget (known: ${known.join(', ')})`, BAD_INPUT);
        for (const key of known) {
          const v = c[key];
          if (v === undefined) continue;
          const whole = key !== 'sessionCost';
          if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || (whole && !Number.isInteger(v))) {
            throw ApplicationFailure.nonRetryable(`${key}: expected a ${whole ? 'whole ' : ''}number above 0, got ${String(v)}`, BAD_INPUT);
          }
        }
        if (known.every((k) => c[k] === undefined)) throw ApplicationFailure.nonRetryable('Name a budget to raise: turnTokens, sessionTokens or sessionCost', BAD_INPUT);
      },
      description: 'Raise the token and cost budgets by the given amounts (the running turn too)',
    },
  );
}

/** Install `send` and `awaitTurn`: a turn per message, and the result of a turn by number. */
export function installTurnHandlers(rt: HandledRun): void {
  setHandler(
    sendUpdate,
    async (message: string) => {
      // A newer build is current: the run hands over to it instead of taking a turn, and the client
      // sends the message again there. Decided here, in the accepted update (recorded), not in the
      // validator: a refused update leaves no trace in history, so replay could not decide the same.
      if (rt.upgradeDue()) {
        rt.upgradeRequested = true;
        throw rt.continuedFailure();
      }
      // The answer to the model's pending question becomes that call's tool result.
      const answers = rt.state.pendingQuestion;
      delete rt.state.pendingQuestion;
      const result = await rt.runTurn(answers ? { message, answers } : { message });
      if (!result) throw rt.continuedFailure(rt.state.turn);
      return result;
    },
    {
      description: 'Run one turn for a user message and return its result (refused when empty, too large, busy or ending)',
      validator: (message: string) => {
        if (typeof message !== 'string' || message.trim() === '') {
          throw ApplicationFailure.nonRetryable('message must be a non-empty string', BAD_INPUT);
        }
        const bytes = utf8Length(message);
        if (bytes > MAX_USER_MESSAGE_BYTES) {
          throw ApplicationFailure.nonRetryable(
            `The message is ${bytes} bytes, over the limit of ${MAX_USER_MESSAGE_BYTES} bytes; send a shorter message or put the text in a file the agent can read`,
            TOO_LARGE,
          );
        }
        if (rt.input.eval) throw ApplicationFailure.nonRetryable('an eval session sends itself the messages of its recording and takes none', BAD_INPUT);
        if (rt.continuing) throw rt.continuedFailure();
        if (rt.endRequested) throw ApplicationFailure.nonRetryable('the session is ending and takes no more messages', SESSION_ENDING);
        if (rt.state.status === 'failed') {
          throw ApplicationFailure.nonRetryable(`the session failed: ${rt.state.error ?? 'unknown error'}`, SESSION_FAILED);
        }
        if (rt.busy || rt.resumingTurn !== undefined) {
          throw ApplicationFailure.nonRetryable('busy: a turn is running; wait for it to finish or send interrupt', BUSY);
        }
      },
    },
  );

  setHandler(
    awaitTurnUpdate,
    async (turn: number) => {
      await condition(() => rt.finishedTurn(turn) !== undefined || rt.continuing);
      const result = rt.finishedTurn(turn);
      if (result) return result;
      throw rt.continuedFailure(turn);
    },
    {
      description: 'Wait for turn n to finish (in this run or an earlier one) and return its result',
      validator: (turn: number) => {
        if (!Number.isInteger(turn) || turn < 1) throw ApplicationFailure.nonRetryable(`turn must be a positive whole number, got ${String(turn)}`, BAD_INPUT);
        if (rt.finishedTurn(turn)) return;
        if (turn > rt.state.turn) throw ApplicationFailure.nonRetryable(`turn ${turn} has not started (the session is at turn ${rt.state.turn})`, BAD_INPUT);
        if (turn < rt.state.turn || !(rt.busy || rt.resumingTurn === turn)) {
          throw ApplicationFailure.nonRetryable(`the result of turn ${turn} is no longer kept (the session keeps the last ${RECENT_TURNS})`, BAD_INPUT);
        }
        if (rt.continuing) throw rt.continuedFailure(turn);
      },
    },
  );
}

/** Compact the model's view now, as asked (the `compact` update; an eval session replaying one between turns). */
export function compactView(rt: SessionRuntime, managed: ManagedModel): ReturnType<ManagedModel['context']['compact']> {
  return managed.context.compact({
    reason: 'requested',
    force: true,
    turn: rt.state.turn,
    transcript: rt.transcript,
    tools: rt.init!.tools,
    activities: rt.activities,
    ...(rt.input.model !== undefined ? { model: rt.input.model } : {}),
    onUsage: (usage) => {
      rt.state.usage = addUsage(rt.state.usage, usage);
      managed.budgets.record(usage, rt.input.model);
    },
  });
}

/** The session's context management and budgets, once it is initialised (an update that arrives while it starts waits). */
async function whenReady(rt: SessionRuntime, what: string): Promise<ManagedModel> {
  await condition(() => rt.ready || rt.state.status === 'failed');
  if (!rt.managed) throw ApplicationFailure.nonRetryable(`This session has no ${what} (it started before they existed, or failed to start)`, BAD_INPUT);
  return rt.managed;
}
