/**
 * The session workflow: initialise the agent (an activity, so its result is recorded), then run one
 * turn per user message until the session ends. The transcript lives here and only grows. Before a
 * run's history gets large it continues as new — between turns, or between two iterations of a long
 * turn — carrying the transcript, counters and the unfinished turn; the workflow id stays the same.
 */
import type { Duration } from '@temporalio/common';
import {
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  metricMeter,
  patched,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  DEFAULT_IDLE_TIMEOUT,
  DEFAULT_MAX_CONTINUATIONS,
  DEFAULT_MAX_HISTORY_BYTES,
  DEFAULT_MAX_HISTORY_EVENTS,
  DEFAULT_MAX_ITERATIONS,
  MAX_USER_MESSAGE_BYTES,
} from '../common/defaults';
import { AGENT_INIT_FAILED, BAD_INPUT, BUSY, SESSION_ENDING, SESSION_FAILED, CONTINUED_AS_NEW, TOO_LARGE } from '../common/failure-types';
import type { BudgetChange, ContinuedSession, InitializeResult, PendingTurn, SessionInput, SessionResult, SessionState, TurnResult } from '../common/session-types';
import { CARRY_INLINE_BYTES, HashedTranscript, TRANSCRIPT_PAGE_BYTES, utf8Length } from '../common/transcript';
import { sessionInputProblem } from '../common/session-input-schema';
import { isLoopToolName } from '../common/tool-names';
import { sessionActivities } from './activity-proxies';
import { approvalControls } from './approvals';
import { Budgets } from './budgets';
import { carriedTurns, loadCarriedTranscript, RECENT_TURNS } from './carry-over';
import { ContextManager } from './context-manager';
import {
  awaitTurnUpdate,
  budgetUpdate,
  compactUpdate,
  extendUpdate,
  endSignal,
  interruptSignal,
  messagesQuery,
  sendUpdate,
  stateQuery,
  transcriptPageQuery,
} from './definitions';
import type { ManagedModel } from './model-calls';
import { excerpt, oneShotOutcome, turnSpanEnd } from './session-outcome';
import { rootMessage } from './tool-calls';
import { withSpan } from './trace-hook';
import { isPaused, runTurn, type TurnControls, type TurnStart } from './turn';
import { addUsage, ZERO_USAGE } from './usage';
import { searchAttributeUpdater, sessionDetails } from './web-ui';

/** Patch ids: behaviour added after sessions were already recorded (see test/fixtures/histories). */
const TRANSCRIPT_REF_PATCH = 'loopwright-transcript-ref';
const CONTINUE_AS_NEW_PATCH = 'loopwright-continue-as-new';
const LOCAL_READS_PATCH = 'loopwright-local-reads';
const HUMAN_LOOP_PATCH = 'loopwright-human-loop';
const SEARCH_ATTRIBUTES_PATCH = 'loopwright-search-attributes';
const MANAGED_CONTEXT_PATCH = 'loopwright-managed-context';

/** With the server's own suggestion alone, a run continues as new only once it added this much (so a large carried transcript cannot loop). */
const SUGGESTED_MIN_BYTES = 1024 * 1024;
const SUGGESTED_MIN_EVENTS = 1_000;


/** Run an agent session. See `SessionInput`; signals, queries and updates are in definitions.ts. */
export async function agentSession(input: SessionInput): Promise<SessionResult> {
  const problem = sessionInputProblem(input);
  if (problem) throw ApplicationFailure.nonRetryable(`Invalid session input: ${problem}`, BAD_INPUT);
  const carried = input.continued;
  // The input checker above has vouched for every value read here.
  const maxIterations = input.maxIterations ?? DEFAULT_MAX_ITERATIONS;
  const limits = {
    maxHistoryBytes: input.continueAsNew?.maxHistoryBytes ?? DEFAULT_MAX_HISTORY_BYTES,
    maxHistoryEvents: input.continueAsNew?.maxHistoryEvents ?? DEFAULT_MAX_HISTORY_EVENTS,
  };
  const activities = sessionActivities(input.timeouts);
  // Decided once, at the start of a run: a run recorded before a patch replays without it.
  const transcriptRef = patched(TRANSCRIPT_REF_PATCH);
  const mayContinueAsNew = patched(CONTINUE_AS_NEW_PATCH);
  const localReads = patched(LOCAL_READS_PATCH);
  const humanLoop = patched(HUMAN_LOOP_PATCH);
  const searchable = input.searchAttributes === true && patched(SEARCH_ATTRIBUTES_PATCH);
  // Context management, budgets, model settings and reply checks (statuses such as `truncated`).
  const managedContext = patched(MANAGED_CONTEXT_PATCH);
  const transcript = new HashedTranscript();
  const state: SessionState = {
    status: 'initializing',
    turn: carried?.turn ?? 0,
    iteration: carried?.pendingTurn?.iterations ?? 0,
    maxIterations,
    runningTools: [],
    pendingApprovals: [],
    ...(carried?.pendingQuestion ? { pendingQuestion: carried.pendingQuestion } : {}),
    ...(carried?.warnings ? { warnings: carried.warnings } : {}),
    usage: carried?.usage ?? ZERO_USAGE,
    messageCount: 0,
    transcriptBytes: 0,
    run: carried?.run ?? 1,
    ...(carried?.lastTurn ? { lastTurn: carried.lastTurn } : {}),
  };
  let init: Omit<InitializeResult, 'messages'> | undefined;
  let busy = false;
  let endRequested = carried?.endRequested ?? false;
  let currentTurn: CancellationScope | undefined;
  const recentTurns: TurnResult[] = [...(carried?.recentTurns ?? [])];
  /** Set when this run hands over to the next one; waiting handlers then tell their clients so. */
  let continuing = false;
  let pausedTurn: PendingTurn | undefined;
  let historyBase = { bytes: 0, events: 0 };

  const shouldContinueAsNew = (): boolean => {
    if (!mayContinueAsNew) return false;
    const info = workflowInfo();
    const bytes = info.historySize - historyBase.bytes;
    const events = info.historyLength - historyBase.events;
    if (bytes >= limits.maxHistoryBytes || events >= limits.maxHistoryEvents) return true;
    return info.continueAsNewSuggested && (bytes >= SUGGESTED_MIN_BYTES || events >= SUGGESTED_MIN_EVENTS);
  };
  /** `turn` set: that turn goes on in the next run. Unset: nothing was accepted; send again. */
  const continuedFailure = (turn?: number): ApplicationFailure =>
    ApplicationFailure.create({
      type: CONTINUED_AS_NEW,
      message:
        turn === undefined
          ? 'The session is moving to a new run; the message was not taken, send it again'
          : `Turn ${turn} goes on in the session's next run; collect its result with the awaitTurn update`,
      nonRetryable: true,
      details: [turn === undefined ? {} : { turn }],
    });
  /** The turn carried over from the previous run, until it has finished here. */
  let resumingTurn = carried?.pendingTurn?.turn;
  const finishedTurn = (turn: number): TurnResult | undefined => recentTurns.find((t) => t.turn === turn);

  /** Upsert the search attributes that changed (agent and bundle once, status, turns and tokens as they move). */
  const refreshSearchAttributes = searchable ? searchAttributeUpdater(input, state) : () => undefined;
  /** The Web UI's live "current details" of the session, in markdown; never whole contents. */
  const refreshDetails = (): void => setCurrentDetails(sessionDetails(snapshot()));
  /** Context management and budgets, once the agent is initialised (sessions recorded before them have none). */
  let managed: ManagedModel | undefined;
  /** The `state` query's answer: the state with the transcript's, context's and budgets' figures. */
  const snapshot = (): SessionState => ({
    ...state,
    messageCount: transcript.length,
    transcriptBytes: transcript.bytes,
    ...(managed ? { context: managed.context.state(transcript) } : {}),
    ...(managed?.budgets.active ? { budget: managed.budgets.state() } : {}),
  });

  // Human in the loop: approvals, the turn's (extendable) limit, the model's pending question.
  let turnLimit = carried?.pendingTurn?.maxIterations ?? maxIterations;
  const controls: TurnControls | undefined = humanLoop
    ? approvalControls({ input, state, limit: () => turnLimit, variables: () => init?.context.variables ?? {}, refreshDetails })
    : undefined;
  setHandler(
    extendUpdate,
    (n: number | null) => {
      turnLimit += n ?? maxIterations;
      state.maxIterations = turnLimit;
      return turnLimit;
    },
    {
      validator: (n: number | null) => {
        if (n !== undefined && n !== null && (!Number.isInteger(n) || n < 1 || n > 10_000)) throw ApplicationFailure.nonRetryable(`n must be a whole number from 1 to 10000, got ${String(n)}`, BAD_INPUT);
        if (!busy && resumingTurn === undefined) throw ApplicationFailure.nonRetryable('No turn is running to extend; after a turn stopped at its limit, send "continue"', BAD_INPUT);
      },
      description: "Raise the running turn's iteration limit by n (default: the session's limit)",
    },
  );

  setHandler(stateQuery, snapshot, {
    description: 'Where the session stands: status, turn, iteration, running tools, pending approvals, tokens, run',
  });
  setHandler(messagesQuery, (from = 0) => {
    if (transcript.bytesBetween(Math.max(0, from)) > TRANSCRIPT_PAGE_BYTES) {
      throw new Error(`The transcript from message ${from} is over ${TRANSCRIPT_PAGE_BYTES} bytes; read it in pages with the transcriptPage query`);
    }
    return transcript.slice(from);
  }, { description: 'The transcript from an index, for small transcripts (use transcriptPage otherwise)' });
  setHandler(transcriptPageQuery, (from, maxBytes, to) => {
    if (!Number.isInteger(from) || from < 0) throw new Error(`from must be a whole number >= 0, got ${String(from)}`);
    const cap = Math.min(maxBytes ?? TRANSCRIPT_PAGE_BYTES, TRANSCRIPT_PAGE_BYTES);
    return transcript.page(from, cap, to ?? transcript.length);
  }, { description: 'A page of the transcript: messages from `from` (to `to`), at most maxBytes (1 MB), with the total and the chain hash' });
  setHandler(endSignal, () => {
    endRequested = true;
  }, { description: 'Complete the session after the current turn (at once when idle)' });
  setHandler(interruptSignal, (reason?: string) => {
    if (!currentTurn) {
      log.info('Interrupt ignored: no turn is running', { reason });
      return;
    }
    log.info('Interrupting the current turn', { turn: state.turn, reason });
    currentTurn.cancel();
  }, { description: 'Cancel the model or tool call in flight; the turn ends interrupted and the session waits for the next message' });
  setHandler(
    compactUpdate,
    async () => {
      busy = true;
      try {
        const record = await managed!.context.compact({
          reason: 'requested',
          force: true,
          turn: state.turn,
          transcript,
          tools: init!.tools,
          activities,
          ...(input.model !== undefined ? { model: input.model } : {}),
          onUsage: (usage) => {
            state.usage = addUsage(state.usage, usage);
            managed!.budgets.record(usage, input.model);
          },
        });
        refreshDetails();
        return record ?? null;
      } finally {
        busy = false;
      }
    },
    {
      validator: () => {
        if (!managed || !init) throw ApplicationFailure.nonRetryable('This session has no context management (it started before it existed, or is still initialising)', BAD_INPUT);
        if (busy || resumingTurn !== undefined) throw ApplicationFailure.nonRetryable('busy: a turn is running; compact once it has finished', BUSY);
        if (continuing) throw continuedFailure();
      },
      description: "Compact the model's view of the transcript now: prune old tool results, summarise the oldest exchanges",
    },
  );
  setHandler(
    budgetUpdate,
    (change: BudgetChange) => {
      managed!.budgets.raise(change);
      refreshDetails();
      return managed!.budgets.state();
    },
    {
      validator: (change: BudgetChange) => {
        if (!managed) throw ApplicationFailure.nonRetryable('This session has no budgets (it started before they existed, or is still initialising)', BAD_INPUT);
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

  /** Run (or resume) a turn in its own cancellable scope so `interrupt` can stop it and the session go on. */
  const runSessionTurn = async (start: TurnStart): Promise<TurnResult | undefined> => {
    busy = true;
    try {
      // Ready once initialised, and (for managed sessions) once the context window is known.
      await condition(() => (init !== undefined && (managed !== undefined || !managedContext)) || state.status === 'failed');
      if (!init) {
        throw ApplicationFailure.nonRetryable(`Agent initialisation failed: ${state.error ?? 'unknown error'}`, AGENT_INIT_FAILED);
      }
      const ready = init;
      if ('message' in start) {
        state.turn += 1;
        state.iteration = 0;
        turnLimit = maxIterations;
        state.maxIterations = turnLimit;
        state.status = 'thinking';
        refreshSearchAttributes();
      }
      const scope = new CancellationScope({ cancellable: true });
      currentTurn = scope;
      // A span when tracing is on (see trace-hook.ts); the activities the turn schedules are its children.
      const spanAttributes = {
        'loopwright.session_id': workflowInfo().workflowId,
        'loopwright.turn': state.turn,
        'loopwright.agent': input.agentId,
        'loopwright.run': state.run,
        ...(input.model ? { 'gen_ai.request.model': input.model } : {}),
        ...('resume' in start ? { 'loopwright.resumed': true } : {}),
      };
      const outcome = await withSpan('loopwright.turn', spanAttributes, () =>
        scope.run(() =>
          runTurn(
            {
              activities,
              turn: state.turn,
              transcript,
              tools: input.loopBreakers === false ? ready.tools.filter((t) => !isLoopToolName(t.function.name)) : ready.tools,
              context: ready.context,
              maxIterations,
              model: input.model,
              transcriptRef,
              localReads,
              controls,
              ...(managed ? { managed } : {}),
              shouldPause: shouldContinueAsNew,
              observer: {
                onThinking: (iteration) => {
                  state.iteration = iteration;
                  state.status = 'thinking';
                  refreshDetails();
                },
                onTools: (tools) => {
                  state.runningTools = tools;
                  state.status = tools.length > 0 ? 'executing_tool' : 'thinking';
                  refreshDetails();
                },
                onUsage: (usage) => {
                  state.usage = addUsage(state.usage, usage);
                },
              },
            },
            start,
          ),
        ),
        turnSpanEnd,
      );
      state.runningTools = [];
      if (isPaused(outcome)) {
        pausedTurn = outcome.paused;
        continuing = true;
        return undefined;
      }
      if (outcome.question) {
        state.pendingQuestion = outcome.question;
      }
      metricMeter.createCounter('loopwright_turns', 'turns', 'Turns by how they ended').add(1, { status: outcome.status });
      recentTurns.push(outcome);
      if (recentTurns.length > RECENT_TURNS) recentTurns.shift();
      const { messageRange: _range, usage: _usage, toolCalls: _calls, ...summary } = outcome;
      state.lastTurn = { ...summary, response: excerpt(summary.response) };
      state.status = outcome.status === 'interrupted' ? 'interrupted' : 'waiting_for_user';
      refreshDetails();
      refreshSearchAttributes();
      return outcome;
    } finally {
      currentTurn = undefined;
      busy = false;
    }
  };

  setHandler(
    sendUpdate,
    async (message: string) => {
      // The answer to the model's pending question becomes that call's tool result.
      const answers = state.pendingQuestion;
      delete state.pendingQuestion;
      const result = await runSessionTurn(answers ? { message, answers } : { message });
      if (!result) throw continuedFailure(state.turn);
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
        if (continuing) throw continuedFailure();
        if (endRequested) throw ApplicationFailure.nonRetryable('the session is ending and takes no more messages', SESSION_ENDING);
        if (state.status === 'failed') {
          throw ApplicationFailure.nonRetryable(`the session failed: ${state.error ?? 'unknown error'}`, SESSION_FAILED);
        }
        if (busy || resumingTurn !== undefined) {
          throw ApplicationFailure.nonRetryable('busy: a turn is running; wait for it to finish or send interrupt', BUSY);
        }
      },
    },
  );

  setHandler(
    awaitTurnUpdate,
    async (turn: number) => {
      await condition(() => finishedTurn(turn) !== undefined || continuing);
      const result = finishedTurn(turn);
      if (result) return result;
      throw continuedFailure(turn);
    },
    {
      description: 'Wait for turn n to finish (in this run or an earlier one) and return its result',
      validator: (turn: number) => {
        if (!Number.isInteger(turn) || turn < 1) throw ApplicationFailure.nonRetryable(`turn must be a positive whole number, got ${String(turn)}`, BAD_INPUT);
        if (finishedTurn(turn)) return;
        if (turn > state.turn) throw ApplicationFailure.nonRetryable(`turn ${turn} has not started (the session is at turn ${state.turn})`, BAD_INPUT);
        if (turn < state.turn || !(busy || resumingTurn === turn)) {
          throw ApplicationFailure.nonRetryable(`the result of turn ${turn} is no longer kept (the session keeps the last ${RECENT_TURNS})`, BAD_INPUT);
        }
        if (continuing) throw continuedFailure(turn);
      },
    },
  );

  if (!carried && input.firstMessage !== undefined && utf8Length(input.firstMessage) > MAX_USER_MESSAGE_BYTES) {
    throw ApplicationFailure.nonRetryable(
      `firstMessage is ${utf8Length(input.firstMessage)} bytes, over the limit of ${MAX_USER_MESSAGE_BYTES} bytes`,
      TOO_LARGE,
    );
  }
  if (carried) {
    init = carried.init;
    await loadCarriedTranscript(activities, carried, transcript);
  } else {
    try {
      const result = await activities.initializeAgent({
        bundlePath: input.bundlePath,
        agentId: input.agentId,
        outputRoots: input.outputRoots,
        ...(input.projectRoot !== undefined ? { projectRoot: input.projectRoot } : {}),
        ...(input.allowBroadProjectRoot ? { allowBroadProjectRoot: true } : {}),
        ...(input.allowSecretFiles ? { allowSecretFiles: true } : {}),
        ...(input.allowHardLinks ? { allowHardLinks: true } : {}),
        ...(input.strict ? { strict: true } : {}),
      });
      const { messages, warnings, ...rest } = result;
      if (input.branchFrom) {
        // A branch starts from the other session's conversation, its opening messages included.
        await loadCarriedTranscript(
          activities,
          { fromRunId: input.branchFrom.runId, fromWorkflowId: input.branchFrom.workflowId, transcript: { count: input.branchFrom.to, hash: input.branchFrom.hash } },
          transcript,
        );
        state.turn = input.branchFrom.turns;
      } else {
        transcript.push(...messages);
      }
      init = rest;
      if (warnings && warnings.length > 0) state.warnings = warnings;
    } catch (err) {
      state.status = 'failed';
      state.error = rootMessage(err);
      throw ApplicationFailure.create({
        type: AGENT_INIT_FAILED,
        message: `Agent initialisation failed: ${state.error}`,
        nonRetryable: true,
        cause: err instanceof Error ? err : undefined,
      });
    }
    log.info('Agent initialised', { agent: init.agent.id, systemMessages: transcript.length });
  }
  if (managedContext) managed = await manageContext(input, activities, transcript, init, carried, () => state.usage.totalTokens, refreshDetails);
  state.agent = init.agent;
  state.status = 'waiting_for_user';
  refreshDetails();
  refreshSearchAttributes();
  // What this run adds is measured from here: a carried transcript is not growth.
  historyBase = { bytes: workflowInfo().historySize, events: workflowInfo().historyLength };

  const handOver = async (): Promise<never> => {
    continuing = true;
    await condition(allHandlersFinished);
    const ready = init!;
    const next: ContinuedSession = {
      fromRunId: workflowInfo().runId,
      run: state.run + 1,
      init: ready,
      transcript: {
        count: transcript.length,
        hash: transcript.hashAt(),
        bytes: transcript.bytes,
        ...(transcript.bytes <= CARRY_INLINE_BYTES ? { messages: transcript.slice() } : {}),
      },
      turn: state.turn,
      usage: state.usage,
      ...(state.lastTurn ? { lastTurn: state.lastTurn } : {}),
      endRequested,
      ...(pausedTurn ? { pendingTurn: pausedTurn } : {}),
      recentTurns: carriedTurns(recentTurns),
      ...(state.pendingQuestion ? { pendingQuestion: state.pendingQuestion } : {}),
      ...(state.warnings ? { warnings: state.warnings } : {}),
      ...(managed ? { context: managed.context.carry(), budget: managed.budgets.carry() } : {}),
    };
    log.info('Continuing as new', {
      run: state.run,
      historyBytes: workflowInfo().historySize,
      historyEvents: workflowInfo().historyLength,
      transcriptMessages: transcript.length,
      pendingTurn: pausedTurn?.turn,
    });
    const { firstMessage: _first, continued: _previous, ...settings } = input;
    return continueAsNew<typeof agentSession>({ ...settings, continued: next });
  };

  if (carried?.pendingTurn) {
    const result = await runSessionTurn({ resume: carried.pendingTurn });
    resumingTurn = undefined;
    if (!result) return handOver();
    if (input.oneShot) {
      state.status = 'completed';
      refreshSearchAttributes();
      return oneShotOutcome(result, state.turn);
    }
  } else if (!carried && input.oneShot) {
    if (!input.firstMessage) {
      throw ApplicationFailure.nonRetryable('A one-shot session needs firstMessage', BAD_INPUT);
    }
    const result = await runSessionTurn({ message: input.firstMessage });
    if (!result) return handOver();
    state.status = 'completed';
    refreshSearchAttributes();
    return oneShotOutcome(result, state.turn);
  } else if (!carried && input.firstMessage) {
    const result = await runSessionTurn({ message: input.firstMessage });
    if (!result) return handOver();
  }

  const idleTimeout = (input.idleTimeout ?? DEFAULT_IDLE_TIMEOUT) as Duration;
  for (;;) {
    if (endRequested && !busy) break;
    if (pausedTurn) return handOver();
    if (!busy && shouldContinueAsNew()) return handOver();
    const seen = state.turn;
    const woke = await condition(
      () => (endRequested && !busy) || pausedTurn !== undefined || state.turn !== seen || busy || (!busy && shouldContinueAsNew()),
      idleTimeout,
      { summary: `idle timeout: the session ends after ${String(idleTimeout)} without a message` },
    );
    if (!woke) {
      await condition(allHandlersFinished);
      state.status = 'completed';
      refreshSearchAttributes();
      return { turns: state.turn, lastTurn: recentTurns.at(-1), usage: state.usage, endedBy: 'idle_timeout' };
    }
    await condition(() => !busy || pausedTurn !== undefined);
  }
  await condition(allHandlersFinished);
  state.status = 'completed';
  refreshSearchAttributes();
  return { turns: state.turn, lastTurn: recentTurns.at(-1), usage: state.usage, endedBy: 'end_signal' };
}

/**
 * Context management and budgets of a session: the window (the session's, else the server's, else
 * the default), the model's view carried from the previous run, and the budgets raised so far.
 */
async function manageContext(
  input: SessionInput,
  activities: ReturnType<typeof sessionActivities>,
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
    const described = await activities.describeModel({ ...(input.model !== undefined ? { model: input.model } : {}) });
    if (described.contextWindow !== null && Number.isInteger(described.contextWindow) && described.contextWindow > 0) {
      context.setWindow(described.contextWindow, `server: ${described.source}`);
    } else {
      log.info('Context window unknown; using the default', { source: described.source, window: context.window });
    }
  }
  log.info('Context window', { window: context.window, source: context.windowSource, tools: init.tools.length });
  return {
    context,
    budgets: new Budgets(input.budget ?? {}, sessionTokens, carried?.budget),
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
