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
  workflowInfo,
} from '@temporalio/workflow';
import {
  DEFAULT_IDLE_TIMEOUT,
  DEFAULT_MAX_HISTORY_BYTES,
  DEFAULT_MAX_HISTORY_EVENTS,
  DEFAULT_MAX_ITERATIONS,
  MAX_USER_MESSAGE_BYTES,
} from '../../common/defaults';
import { bundleChanges } from './bundle-pins';
import { AGENT_INIT_FAILED, BAD_INPUT, CONTINUED_AS_NEW, TOO_LARGE } from '../../common/failure-types';
import type { PendingTurn, SessionInput, SessionResult, SessionState, TurnResult } from '../../common/session-types';
import { HashedTranscript, utf8Length } from '../../common/transcript';
import { sessionInputProblem } from '../../common/session-input-schema';
import { isLoopToolName } from '../../common/tools';
import { BUILT_IN_TOOL_SET, installToolHandlers, refreshSessionTools } from './session-tools';
import { sessionActivities } from './activity-proxies';
import { approvalControls } from '../turn/approvals';
import { carriedTurns, continuedSession, loadCarriedTranscript, RECENT_TURNS } from './carry-over';
import { installControlHandlers, installTurnHandlers } from './session-handlers';
import { sessionMemos } from './session-memos';
import { manageContext } from '../context/manage-context';
import { excerpt, oneShotOutcome, shortReport, turnSpanEnd } from './session-outcome';
import type { SessionRuntime } from './session-runtime';
import { withSpan } from '../tracing/trace-hook';
import { isPaused, runTurn, type TurnControls, type TurnStart } from '../turn/turn';
import type { WorkerCopies } from '../turn/inline-reads';
import { INLINE_READS_PATCH } from '../../common/activity-types';
import { VERIFY_PATCH } from '../../common/verify-types';
import { sessionVerifier } from '../verify/verify-session';
import { FILES_HOST_PATCH } from '../../common/files-host';
import { filesRoute } from './files-wait';
import { addUsage, ZERO_USAGE } from '../turn/usage';
import { searchAttributeUpdater, sessionDetails } from './web-ui';
import { initializeSession } from './session-init';
import { delegationApprovals, delegationHooks, sessionDelegator } from '../delegation/delegation-session';

/** Patch ids: behaviour added after sessions were already recorded (see test/fixtures/histories). */
const TRANSCRIPT_REF_PATCH = 'loopwright-transcript-ref';
const CONTINUE_AS_NEW_PATCH = 'loopwright-continue-as-new';
const LOCAL_READS_PATCH = 'loopwright-local-reads';
const HUMAN_LOOP_PATCH = 'loopwright-human-loop';
const SEARCH_ATTRIBUTES_PATCH = 'loopwright-search-attributes';
const MANAGED_CONTEXT_PATCH = 'loopwright-managed-context';
const TURN_END_MEMO_PATCH = 'loopwright-turn-end-memo';
const CARRY_VIEW_PATCH = 'loopwright-carry-view';
const BUDGET_MEMO_PATCH = 'loopwright-budget-memo';

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
  // Files where they are: file activities go to the workers of the session's files host.
  const filesHost = input.filesHost !== undefined && patched(FILES_HOST_PATCH) ? input.filesHost : undefined;
  const activities = sessionActivities(input.timeouts, filesHost ? filesRoute(filesHost, () => rt, input.timeouts?.filesWait as Duration | undefined) : undefined);
  // Decided once, at the start of a run: a run recorded before a patch replays without it.
  const transcriptRef = patched(TRANSCRIPT_REF_PATCH);
  const mayContinueAsNew = patched(CONTINUE_AS_NEW_PATCH);
  const localReads = patched(LOCAL_READS_PATCH);
  // The model-call worker keeps the run's tool definitions and runtime context, and runs a reply's
  // reads in the model call (inline reads, unless the session turns them off): workflows/turn/inline-reads.ts.
  const copies: WorkerCopies | undefined = localReads && transcriptRef && patched(INLINE_READS_PATCH) ? {} : undefined;
  const humanLoop = patched(HUMAN_LOOP_PATCH);
  const searchable = input.searchAttributes === true && patched(SEARCH_ATTRIBUTES_PATCH);
  // Context management, budgets, model settings and reply checks (statuses such as `truncated`).
  const managedContext = patched(MANAGED_CONTEXT_PATCH);
  // Turns no `send` answers leave a mark in history (a memo), for rewind and branch.
  const turnEndMemos = patched(TURN_END_MEMO_PATCH);
  // A run hands the next one only the messages the model's view still needs, and a reference to the rest.
  const carryView = patched(CARRY_VIEW_PATCH);
  // Budgets are written to the memo after each turn, so `list` shows them.
  const memos = sessionMemos(turnEndMemos, patched(BUDGET_MEMO_PATCH));
  // The verify phase: documents a workflow's checklist checks are verified once saved.
  const verifies = patched(VERIFY_PATCH) && input.verify?.enabled !== false;
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
  const recentTurns: TurnResult[] = [...(carried?.recentTurns ?? [])];
  const rt: SessionRuntime = {
    input,
    state,
    transcript,
    activities,
    maxIterations,
    init: undefined,
    toolSet: BUILT_IN_TOOL_SET,
    managed: undefined,
    verifier: undefined,
    ready: false,
    busy: false,
    endRequested: carried?.endRequested ?? false,
    currentTurn: undefined,
    continuing: false,
    resumingTurn: carried?.pendingTurn?.turn,
    // A run that starts from another's transcript answers "still loading" until it holds it.
    transcriptLoading: Boolean(carried || input.branchFrom),
    turnLimit: carried?.pendingTurn?.maxIterations ?? maxIterations,
    refreshDetails: () => setCurrentDetails(sessionDetails(snapshot())),
    continuedFailure: (turn) => continuedFailure(turn),
  };
  rt.delegationApprovals = delegationApprovals(rt);
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
  const finishedTurn = (turn: number): TurnResult | undefined => recentTurns.find((t) => t.turn === turn);

  /** Upsert the search attributes that changed (agent and bundle once, status, turns and tokens as they move). */
  const refreshSearchAttributes = searchable ? searchAttributeUpdater(input, state) : () => undefined;
  /** The Web UI's live "current details" of the session, in markdown; never whole contents. */
  const refreshDetails = rt.refreshDetails;
  /** The `state` query's answer: the state with the transcript's, context's and budgets' figures. */
  const snapshot = (): SessionState => ({
    ...state,
    messageCount: transcript.length,
    transcriptBytes: transcript.bytes,
    ...(rt.managed ? { context: rt.managed.context.state(transcript) } : {}),
    ...(rt.managed?.budgets.active ? { budget: rt.managed.budgets.state() } : {}),
    ...(rt.verifier ? { verify: rt.verifier.view() } : {}),
  });

  // Human in the loop: approvals, the turn's (extendable) limit, the model's pending question.
  const controls: TurnControls | undefined = humanLoop
    ? approvalControls({ input, state, limit: () => rt.turnLimit, variables: () => rt.init?.context.variables ?? {}, tools: () => rt.toolSet.tools, refreshDetails, ...delegationHooks(rt) })
    : undefined;
  installControlHandlers(rt, snapshot);
  installToolHandlers(rt);

  /** Run (or resume) a turn in its own cancellable scope so `interrupt` can stop it and the session go on. */
  const runSessionTurn = async (start: TurnStart): Promise<TurnResult | undefined> => {
    rt.busy = true;
    try {
      // Ready once initialised: the agent loaded (or the carried transcript paged in) and, for
      // managed sessions, the context window known.
      await condition(() => rt.ready || state.status === 'failed');
      if (!rt.init) {
        throw ApplicationFailure.nonRetryable(`Agent initialisation failed: ${state.error ?? 'unknown error'}`, AGENT_INIT_FAILED);
      }
      const ready = rt.init;
      let changes: string[] = [];
      if ('message' in start) {
        state.turn += 1;
        // What changed on disk since the session loaded it (said once; the session keeps what it loaded).
        changes = await bundleChanges(rt, state);
        state.iteration = 0;
        rt.turnLimit = maxIterations;
        state.maxIterations = rt.turnLimit;
        state.status = 'thinking';
        refreshSearchAttributes();
      }
      const scope = new CancellationScope({ cancellable: true });
      rt.currentTurn = scope;
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
              toolSet: rt.toolSet,
              maxIterations,
              model: input.model,
              transcriptRef,
              localReads,
              ...(copies ? { copies, inlineReads: input.inlineReads !== false } : {}),
              controls,
              ...(rt.managed ? { managed: rt.managed } : {}),
              ...(rt.verifier ? { verifier: rt.verifier } : {}),
              ...(rt.delegator ? { delegator: rt.delegator } : {}),
              shouldPause: shouldContinueAsNew,
              observer: {
                onContext: (context) => {
                  if (rt.init) rt.init = { ...rt.init, context };
                },
                onThinking: (iteration) => {
                  state.iteration = iteration;
                  state.status = 'thinking';
                  refreshDetails();
                },
                onTools: (tools) => {
                  state.runningTools = tools;
                  state.status = tools.length > 0 ? 'executing_tool' : 'thinking';
                  // Details are read between activations only: when the tools are done, the next
                  // model call (onThinking) or the turn's end refreshes them in this same activation.
                  if (tools.length > 0) refreshDetails();
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
        rt.continuing = true;
        return undefined;
      }
      if (outcome.question) {
        state.pendingQuestion = outcome.question;
      }
      metricMeter.createCounter('loopwright_turns', 'turns', 'Turns by how they ended').add(1, { status: outcome.status });
      if (changes.length > 0) outcome.bundleChanges = changes;
      recentTurns.push(outcome);
      if (recentTurns.length > RECENT_TURNS) recentTurns.shift();
      const { messageRange: _range, usage: _usage, toolCalls: _calls, ...summary } = outcome;
      state.lastTurn = { ...summary, response: excerpt(summary.response), ...(summary.verification ? { verification: shortReport(summary.verification) } : {}) };
      state.status = outcome.status === 'interrupted' ? 'interrupted' : 'waiting_for_user';
      refreshDetails();
      refreshSearchAttributes();
      memos.budgets(rt.managed);
      return outcome;
    } finally {
      rt.currentTurn = undefined;
      rt.busy = false;
    }
  };

  installTurnHandlers(rt, runSessionTurn, finishedTurn);

  if (!carried && input.firstMessage !== undefined && utf8Length(input.firstMessage) > MAX_USER_MESSAGE_BYTES) {
    throw ApplicationFailure.nonRetryable(
      `firstMessage is ${utf8Length(input.firstMessage)} bytes, over the limit of ${MAX_USER_MESSAGE_BYTES} bytes`,
      TOO_LARGE,
    );
  }
  if (carried) {
    rt.init = carried.init;
    await refreshSessionTools(rt);
    // The carried view needs no transcript: the state query shows it while the transcript pages in.
    if (managedContext && carried.context) rt.managed = await manageContext(input, activities, transcript, rt.init, carried, () => state.usage.totalTokens, refreshDetails);
    await loadCarriedTranscript(activities, carried, transcript);
    rt.transcriptLoading = false;
  } else {
    rt.init = await initializeSession(rt);
    log.info('Agent initialised', { agent: rt.init.agent.id, systemMessages: transcript.length });
  }
  if (filesHost && rt.init.context.filesHost !== filesHost) rt.init = { ...rt.init, context: { ...rt.init.context, filesHost } };
  if (managedContext && !rt.managed) rt.managed = await manageContext(input, activities, transcript, rt.init, carried, () => state.usage.totalTokens, refreshDetails);
  state.agent = rt.init.agent;
  if (verifies) rt.verifier = sessionVerifier(rt, carried?.verify);
  rt.delegator = sessionDelegator(rt);
  state.status = 'waiting_for_user';
  rt.ready = true;
  refreshDetails();
  refreshSearchAttributes();
  // What this run adds is measured from here: a carried transcript is not growth.
  historyBase = { bytes: workflowInfo().historySize, events: workflowInfo().historyLength };

  const handOver = async (): Promise<never> => {
    rt.continuing = true;
    await condition(allHandlersFinished);
    const next = continuedSession(rt, workflowInfo().runId, pausedTurn, carriedTurns(recentTurns), carryView);
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
    rt.resumingTurn = undefined;
    if (!result) return handOver();
    memos.markTurnEnd(result);
    if (input.oneShot) {
      state.status = 'completed';
      refreshSearchAttributes();
      return oneShotOutcome(result, state.turn, state.warnings);
    }
  } else if (!carried && input.oneShot) {
    if (!input.firstMessage) {
      throw ApplicationFailure.nonRetryable('A one-shot session needs firstMessage', BAD_INPUT);
    }
    const result = await runSessionTurn({ message: input.firstMessage });
    if (!result) return handOver();
    memos.markTurnEnd(result);
    state.status = 'completed';
    refreshSearchAttributes();
    return oneShotOutcome(result, state.turn, state.warnings);
  } else if (!carried && input.firstMessage) {
    const result = await runSessionTurn({ message: input.firstMessage });
    if (!result) return handOver();
    memos.markTurnEnd(result);
  }

  const idleTimeout = (input.idleTimeout ?? DEFAULT_IDLE_TIMEOUT) as Duration;
  for (;;) {
    if (rt.endRequested && !rt.busy) break;
    if (pausedTurn) return handOver();
    if (!rt.busy && shouldContinueAsNew()) return handOver();
    const seen = state.turn;
    const woke = await condition(
      () => (rt.endRequested && !rt.busy) || pausedTurn !== undefined || state.turn !== seen || rt.busy || (!rt.busy && shouldContinueAsNew()),
      idleTimeout,
      { summary: `idle timeout: the session ends after ${String(idleTimeout)} without a message` },
    );
    if (!woke) {
      await condition(allHandlersFinished);
      state.status = 'completed';
      refreshSearchAttributes();
      return { turns: state.turn, lastTurn: recentTurns.at(-1), usage: state.usage, endedBy: 'idle_timeout' };
    }
    await condition(() => !rt.busy || pausedTurn !== undefined);
  }
  await condition(allHandlersFinished);
  state.status = 'completed';
  refreshSearchAttributes();
  return { turns: state.turn, lastTurn: recentTurns.at(-1), usage: state.usage, endedBy: 'end_signal' };
}
