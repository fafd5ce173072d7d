/**
 * One run of a session, as one object: the state its handlers, its turns and its main loop share,
 * and the operations on it — set up (initialise the agent, or take over from the run before), run a
 * turn, snapshot for the state query, decide when to continue as new and hand over. The session
 * workflow (session.ts) creates it, installs the handlers that call its methods, and idles; the
 * behaviour each run decides once, from the patches its history recorded, is fixed in the constructor.
 */
import type { Duration } from '@temporalio/common';
import { ApplicationFailure, CancellationScope, allHandlersFinished, condition, log, metricMeter, patched, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import {
  DEFAULT_IDLE_TIMEOUT,
  DEFAULT_ITERATION_WARNING,
  DEFAULT_MAX_HISTORY_BYTES,
  DEFAULT_MAX_HISTORY_EVENTS,
  DEFAULT_MAX_ITERATIONS,
  DEFAULT_MAX_REPEATED_FAILURES,
  MAX_USER_MESSAGE_BYTES,
} from '../../common/defaults';
import { AGENT_INIT_FAILED, BAD_INPUT, CONTINUED_AS_NEW, TOO_LARGE } from '../../common/failure-types';
import type { InitializeResult, PendingTurn, SessionInput, SessionResult, SessionState, TurnResult } from '../../common/session-types';
import { HashedTranscript, utf8Length } from '../../common/transcript';
import { isLoopToolName } from '../../common/tools';
import { INLINE_READS_PATCH } from '../../common/activity-types';
import { VERIFY_PATCH } from '../../common/verify-types';
import { FILES_HOST_PATCH } from '../../common/files-host';
import { bundleChanges } from './bundle-pins';
import { BUILT_IN_TOOL_SET, refreshSessionTools } from './session-tools';
import { sessionActivities, type SessionActivityStubs } from '../stubs/activity-proxies';
import { carriedTurns, continuedSession, loadCarriedTranscript, RECENT_TURNS } from './carry-over';
import { sessionMemos, type SessionMemos } from './session-memos';
import { excerpt, oneShotOutcome, shortReport, turnSpanEnd } from './session-outcome';
import type { SessionRuntime } from './session-runtime';
import { filesRoute } from './files-wait';
import { searchAttributeUpdater, sessionDetails } from './web-ui';
import { initializeSession } from './session-init';
import { manageContext } from '../context/manage-context';
import { withSpan } from '../tracing/trace-hook';
import { approvalControls } from '../turn/approvals';
import { isPaused, runTurn, type TurnApprovals, type TurnInput, type TurnOutcome, type TurnStart } from '../turn/turn';
import type { TurnExtension } from '../turn/extensions';
import { TurnLimits } from '../turn/turn-limits';
import type { WorkerCopies } from '../turn/inline-reads';
import type { ManagedModel } from '../turn/model-calls';
import type { SessionToolSet } from '../turn/tool-calls';
import { addUsage, ZERO_USAGE } from '../turn/usage';
import { verifyExtension } from '../verify/verify-extension';
import type { SessionVerifier } from '../verify/verify';
import { delegationApprovals, delegationHooks, sessionDelegator, sessionVerifier } from './session-features';
import { delegationExtension, type Delegator } from '../delegation/delegation';
import type { DelegationApprovals } from '../delegation/delegation-approvals';
import { EvalReplay } from '../eval/replay';
import { compactView } from './session-handlers';
import { continueSession, currentBuild, newerBuildCurrent } from './upgrade';
import type { RecordedAction } from '../../common/eval/recording';

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

/** What a run decided once, at its start, from the patches its history recorded (a run recorded before a patch replays without it). */
interface RunFeatures {
  transcriptRef: boolean;
  mayContinueAsNew: boolean;
  localReads: boolean;
  /** The model-call worker keeps the run's tool definitions and runtime context, and runs a reply's reads (workflows/turn/inline-reads.ts). */
  copies: WorkerCopies | undefined;
  humanLoop: boolean;
  searchable: boolean;
  /** Context management, budgets, model settings and reply checks (statuses such as `truncated`). */
  managedContext: boolean;
  /** A run hands the next one only the messages the model's view still needs, and a reference to the rest. */
  carryView: boolean;
  /** Turns no `send` answers leave a mark in history (a memo), for rewind and branch. */
  turnEndMemos: boolean;
  /** Budgets are written to the memo after each turn, so `list` shows them. */
  budgetMemos: boolean;
  /** The verify phase: documents a workflow's checklist checks are verified once saved. */
  verifies: boolean;
}

export class SessionRun implements SessionRuntime {
  readonly state: SessionState;
  readonly transcript = new HashedTranscript();
  readonly activities: SessionActivityStubs;
  readonly limits: TurnLimits;
  init: Omit<InitializeResult, 'messages'> | undefined = undefined;
  toolSet: SessionToolSet = BUILT_IN_TOOL_SET;
  managed: ManagedModel | undefined = undefined;
  verifier: SessionVerifier | undefined = undefined;
  delegationApprovals?: DelegationApprovals;
  delegator?: Delegator;
  ready = false;
  busy = false;
  endRequested: boolean;
  currentTurn: CancellationScope | undefined = undefined;
  continuing = false;
  resumingTurn: number | undefined;
  transcriptLoading: boolean;
  /** `send` found a newer build current: the idle loop hands over to it (see upgradeDue). */
  upgradeRequested = false;
  /** The files host the session's file activities go to, when it names one. */
  readonly filesHost: string | undefined;
  private readonly features: Readonly<RunFeatures>;
  private readonly memos: SessionMemos;
  /** Human in the loop: approvals (absent for runs recorded before it). */
  private readonly approvals: TurnApprovals | undefined;
  /** An eval session's replay of its recording (`input.eval`; no recorded session has one). */
  private readonly replay: EvalReplay | undefined;
  private extensions: TurnExtension[] = [];
  private readonly recentTurns: TurnResult[];
  private pausedTurn: PendingTurn | undefined;
  /** History size when this run was set up: what the run adds is measured from there. */
  private historyBase = { bytes: 0, events: 0 };
  /** Upsert the search attributes that changed (agent and bundle once, status, turns and tokens as they move). */
  private readonly refreshSearchAttributes: () => void;

  constructor(readonly input: SessionInput) {
    const carried = input.continued;
    // Files where they are: file activities go to the workers of the session's files host.
    this.filesHost = input.filesHost !== undefined && patched(FILES_HOST_PATCH) ? input.filesHost : undefined;
    const filesHost = this.filesHost;
    this.activities = sessionActivities(input.timeouts, filesHost ? filesRoute(filesHost, () => this, input.timeouts?.filesWait as Duration | undefined) : undefined);
    this.features = runFeatures(input);
    this.memos = sessionMemos(this.features.turnEndMemos, this.features.budgetMemos);
    this.state = initialState(input);
    this.recentTurns = [...(carried?.recentTurns ?? [])];
    this.endRequested = carried?.endRequested ?? false;
    this.resumingTurn = carried?.pendingTurn?.turn;
    // A run that starts from another's transcript answers "still loading" until it holds it.
    this.transcriptLoading = Boolean(carried || input.branchFrom);
    const rules = this.features.humanLoop
      ? {
          warnAt: input.iterationWarning ?? DEFAULT_ITERATION_WARNING,
          maxRepeatedFailures: input.maxRepeatedFailures ?? DEFAULT_MAX_REPEATED_FAILURES,
          interactive: !input.oneShot,
          loopBreakers: input.loopBreakers !== false,
        }
      : undefined;
    this.limits = new TurnLimits(this.state.maxIterations, rules, carried?.pendingTurn, (limit) => {
      this.state.maxIterations = limit;
    });
    this.delegationApprovals = delegationApprovals(this);
    this.replay = input.eval
      ? new EvalReplay(input.eval, () => this.toolSet.tools, {
          interrupt: () => this.currentTurn?.cancel(),
          extend: (n) => void this.limits.extend(n),
          raiseBudget: (change) => {
            if (!this.managed) return false;
            this.managed.budgets.raise(change);
            this.refreshDetails();
            return true;
          },
        })
      : undefined;
    const approvals = this.features.humanLoop
      ? approvalControls({
          input,
          state: this.state,
          variables: () => this.init?.context.variables ?? {},
          context: () => this.init?.context,
          tools: () => this.toolSet.tools,
          refreshDetails: this.refreshDetails,
          ...delegationHooks(this),
        })
      : undefined;
    // An eval session decides approvals as recorded instead of waiting for a person.
    this.approvals = approvals && this.replay ? this.replay.approvals(approvals) : approvals;
    this.refreshSearchAttributes = this.features.searchable ? searchAttributeUpdater(input, this.state) : () => undefined;
  }

  /** Show the session's details in the Web UI (its live "current details", in markdown; never whole contents). */
  readonly refreshDetails = (): void => setCurrentDetails(sessionDetails(this.snapshot()));

  /** The `state` query's answer: the state with the transcript's, context's and budgets' figures. */
  readonly snapshot = (): SessionState => ({
    ...this.state,
    messageCount: this.transcript.length,
    transcriptBytes: this.transcript.bytes,
    ...(this.managed ? { context: this.managed.context.state(this.transcript) } : {}),
    ...(this.managed?.budgets.active ? { budget: this.managed.budgets.state() } : {}),
    ...(this.verifier ? { verify: this.verifier.view() } : {}),
  });

  /** `turn` set: that turn goes on in the next run. Unset: nothing was accepted; send again. */
  continuedFailure(turn?: number): ApplicationFailure {
    return ApplicationFailure.create({
      type: CONTINUED_AS_NEW,
      message:
        turn === undefined
          ? 'The session is moving to a new run; the message was not taken, send it again'
          : `Turn ${turn} goes on in the session's next run; collect its result with the awaitTurn update`,
      nonRetryable: true,
      details: [turn === undefined ? {} : { turn }],
    });
  }

  /** The result of `turn`, while this run keeps it. */
  finishedTurn(turn: number): TurnResult | undefined {
    return this.recentTurns.find((t) => t.turn === turn);
  }

  /** True when this run's history grew past its limits (or the server suggests a new run and it grew enough). */
  shouldContinueAsNew(): boolean {
    if (!this.features.mayContinueAsNew) return false;
    const info = workflowInfo();
    const bytes = info.historySize - this.historyBase.bytes;
    const events = info.historyLength - this.historyBase.events;
    const limits = this.input.continueAsNew;
    if (bytes >= (limits?.maxHistoryBytes ?? DEFAULT_MAX_HISTORY_BYTES) || events >= (limits?.maxHistoryEvents ?? DEFAULT_MAX_HISTORY_EVENTS)) return true;
    return info.continueAsNewSuggested && (bytes >= SUGGESTED_MIN_BYTES || events >= SUGGESTED_MIN_EVENTS);
  }

  /**
   * True when the session should move to the deployment's newer current build now: it is between
   * turns (nothing runs, no turn waits to be resumed) and, when this run itself came from such a
   * move, it has taken a turn since (so a move that lands on the same build cannot repeat). Read
   * only where a recorded event woke the run (a turn's end, an accepted `send`, the idle loop's
   * own wake-ups), never in a wait's condition: the server also sets the flag on workflow tasks that
   * history keeps without an event to replay (a refused update), and replay must decide the same.
   */
  upgradeDue(): boolean {
    if (this.busy || this.pausedTurn || this.resumingTurn !== undefined || this.replay) return false;
    if (this.input.continued?.upgradedFrom !== undefined && this.state.turn === this.input.continued.turn) return false;
    return newerBuildCurrent();
  }

  /**
   * Initialise the agent (an activity, so its result is recorded), or take over the run before's
   * agent, tools, view and transcript; then the context management, the turn's extensions, and ready.
   */
  async setup(): Promise<void> {
    const { input, activities, transcript, state } = this;
    const carried = input.continued;
    if (!carried && input.firstMessage !== undefined && utf8Length(input.firstMessage) > MAX_USER_MESSAGE_BYTES) {
      throw ApplicationFailure.nonRetryable(`firstMessage is ${utf8Length(input.firstMessage)} bytes, over the limit of ${MAX_USER_MESSAGE_BYTES} bytes`, TOO_LARGE);
    }
    const manage = (): Promise<ManagedModel> => manageContext(input, activities, transcript, this.init!, carried, () => state.usage.totalTokens, this.refreshDetails);
    if (carried) {
      this.init = carried.init;
      await refreshSessionTools(this);
      // The carried view needs no transcript: the state query shows it while the transcript pages in.
      if (this.features.managedContext && carried.context) this.managed = await manage();
      await loadCarriedTranscript(activities, carried, transcript);
      this.transcriptLoading = false;
    } else {
      this.init = await initializeSession(this);
      log.info('Agent initialised', { agent: this.init.agent.id, systemMessages: transcript.length });
    }
    const filesHost = this.filesHost;
    if (filesHost && this.init.context.filesHost !== filesHost) this.init = { ...this.init, context: { ...this.init.context, filesHost } };
    if (this.features.managedContext && !this.managed) this.managed = await manage();
    state.agent = this.init.agent;
    if (this.features.verifies) this.verifier = sessionVerifier(this, carried?.verify);
    this.delegator = sessionDelegator(this);
    this.extensions = [
      ...(this.verifier ? [verifyExtension(this.verifier)] : []),
      ...(this.delegator ? [delegationExtension(this.delegator)] : []),
      // Last: delegation runs its own calls; the replay answers the rest it can from the recording.
      ...(this.replay ? [this.replay.extension()] : []),
    ];
    state.status = 'waiting_for_user';
    this.ready = true;
    this.refreshDetails();
    this.refreshSearchAttributes();
    // What this run adds is measured from here: a carried transcript is not growth.
    this.historyBase = { bytes: workflowInfo().historySize, events: workflowInfo().historyLength };
  }

  /**
   * The turn this run starts with, if any: the one the run before handed over, or the first
   * message. A one-shot session ends with it; `undefined` when the session goes on to idle.
   */
  async firstTurn(): Promise<SessionResult | undefined> {
    const { input } = this;
    if (this.replay) return this.scripted(this.replay);
    const carried = input.continued;
    let start: TurnStart | undefined;
    if (carried?.pendingTurn) start = { resume: carried.pendingTurn };
    else if (!carried && input.oneShot) {
      if (!input.firstMessage) throw ApplicationFailure.nonRetryable('A one-shot session needs firstMessage', BAD_INPUT);
      start = { message: input.firstMessage };
    } else if (!carried && input.firstMessage) start = { message: input.firstMessage };
    if (!start) return undefined;
    const result = await this.runTurn(start);
    if ('resume' in start) this.resumingTurn = undefined;
    if (!result) return this.handOver();
    this.memos.markTurnEnd(result);
    if (!input.oneShot) return undefined;
    this.state.status = 'completed';
    this.refreshSearchAttributes();
    return oneShotOutcome(result, this.state.turn, this.state.warnings);
  }

  /**
   * An eval session: resume the turn the run before handed over, then send itself the recording's
   * next messages one turn at a time (each turn's recorded calls and approvals loaded first, by an
   * activity on the files host), and end after the last. Each turn's whole summary goes into the
   * turn-end memo, where the eval reads it.
   */
  private async scripted(replay: EvalReplay): Promise<SessionResult> {
    const { input, state, activities } = this;
    const script = input.eval!.script;
    const pending = input.continued?.pendingTurn;
    if (pending) {
      replay.startTurn(await activities.loadEvalTurn({ script, turn: pending.turn }), input.continued?.replay);
      const result = await this.runTurn({ resume: pending });
      this.resumingTurn = undefined;
      if (!result) return this.handOver();
      this.memos.turnSummary(result);
    }
    for (;;) {
      if (this.endRequested) break;
      if (this.shouldContinueAsNew()) return this.handOver();
      const next = await activities.loadEvalTurn({ script, turn: state.turn + 1 });
      if (!next) break;
      replay.startTurn(next);
      // What a person did while the recorded session waited before this turn (a budget raised, a compaction).
      for (const { index, action } of replay.beforeTurn()) replay.settle(index, await this.actBeforeTurn(action));
      // The answer to the model's pending question becomes that call's tool result, as with `send`.
      const answers = state.pendingQuestion;
      delete state.pendingQuestion;
      const result = await this.runTurn(answers ? { message: next.message, answers } : { message: next.message });
      if (!result) return this.handOver();
      this.memos.turnSummary(result);
    }
    return this.end('script');
  }

  /** An eval session does again what a person did between two recorded turns; why it could not, when it could not. */
  private async actBeforeTurn(action: RecordedAction): Promise<string | undefined> {
    const { managed } = this;
    if (!managed) return 'the candidate session has no context management or budgets';
    if (action.kind === 'budget') {
      if (!action.change) return 'the recorded budget change is unreadable';
      managed.budgets.raise(action.change);
      return undefined;
    }
    if (action.kind !== 'compact') return `a ${action.kind} between turns has nothing to act on`;
    this.busy = true;
    try {
      await compactView(this, managed);
    } finally {
      this.busy = false;
    }
    this.refreshDetails();
    return undefined;
  }

  /** Wait for messages (each `send` runs its turn) until the session ends, idles out or hands over to a new run. */
  async idle(): Promise<SessionResult> {
    const idleTimeout = (this.input.idleTimeout ?? DEFAULT_IDLE_TIMEOUT) as Duration;
    const { state } = this;
    for (;;) {
      if (this.endRequested && !this.busy) break;
      if (this.pausedTurn) return this.handOver();
      // A newer build is current: the session moves there now, between turns (see upgrade.ts).
      if (!this.busy && (this.shouldContinueAsNew() || this.upgradeRequested || this.upgradeDue())) return this.handOver();
      const seen = state.turn;
      const woke = await condition(
        () => (this.endRequested && !this.busy) || this.pausedTurn !== undefined || state.turn !== seen || this.busy || (!this.busy && (this.shouldContinueAsNew() || this.upgradeRequested)),
        idleTimeout,
        { summary: `idle timeout: the session ends after ${String(idleTimeout)} without a message` },
      );
      if (!woke) return this.end('idle_timeout');
      await condition(() => !this.busy || this.pausedTurn !== undefined);
    }
    return this.end('end_signal');
  }

  /** Run (or resume) a turn in its own cancellable scope so `interrupt` can stop it and the session go on; undefined when it was handed over. */
  async runTurn(start: TurnStart): Promise<TurnResult | undefined> {
    this.busy = true;
    try {
      // Ready once initialised: the agent loaded (or the carried transcript paged in) and, for
      // managed sessions, the context window known.
      await condition(() => this.ready || this.state.status === 'failed');
      if (!this.init) throw ApplicationFailure.nonRetryable(`Agent initialisation failed: ${this.state.error ?? 'unknown error'}`, AGENT_INIT_FAILED);
      let changes: string[] = [];
      if ('message' in start) {
        this.state.turn += 1;
        // What changed on disk since the session loaded it (said once; the session keeps what it loaded).
        changes = await bundleChanges(this, this.state);
        this.beginTurn();
      } else this.limits.resume(start.resume);
      const scope = new CancellationScope({ cancellable: true });
      this.currentTurn = scope;
      const outcome = await withSpan('loopwright.turn', this.spanAttributes(start), () => scope.run(() => runTurn(this.turnInput(this.init!), start)), turnSpanEnd);
      this.state.runningTools = [];
      if (isPaused(outcome)) {
        this.pausedTurn = outcome.paused;
        this.continuing = true;
        return undefined;
      }
      return this.turnEnded(outcome, changes);
    } finally {
      this.currentTurn = undefined;
      this.busy = false;
    }
  }

  /** A new turn (numbered): a fresh limit, thinking. */
  private beginTurn(): void {
    this.state.iteration = 0;
    this.limits.beginTurn();
    this.state.status = 'thinking';
    this.refreshSearchAttributes();
  }

  /** A span when tracing is on (see trace-hook.ts); the activities the turn schedules are its children. */
  private spanAttributes(start: TurnStart): Record<string, string | number | boolean> {
    const { input, state } = this;
    return {
      'loopwright.session_id': workflowInfo().workflowId,
      'loopwright.turn': state.turn,
      'loopwright.agent': input.agentId,
      'loopwright.run': state.run,
      ...(input.model ? { 'gen_ai.request.model': input.model } : {}),
      ...('resume' in start ? { 'loopwright.resumed': true } : {}),
    };
  }

  /** What the turn gets from its session. */
  private turnInput(ready: Omit<InitializeResult, 'messages'>): TurnInput {
    const { input, state, features } = this;
    return {
      activities: this.activities,
      turn: state.turn,
      transcript: this.transcript,
      tools: input.loopBreakers === false ? ready.tools.filter((t) => !isLoopToolName(t.function.name)) : ready.tools,
      context: ready.context,
      toolSet: this.toolSet,
      limits: this.limits,
      extensions: this.extensions,
      loopBreakers: features.humanLoop && input.loopBreakers !== false,
      model: input.model,
      transcriptRef: features.transcriptRef,
      localReads: features.localReads,
      // An eval session's reads go through its replay (answered from the recording), never inline.
      ...(features.copies ? { copies: features.copies, inlineReads: input.inlineReads !== false && !this.replay } : {}),
      ...(this.approvals ? { approvals: this.approvals } : {}),
      ...(this.managed ? { managed: this.managed } : {}),
      shouldPause: () => this.shouldContinueAsNew(),
      observer: {
        onContext: (context) => {
          if (this.init) this.init = { ...this.init, context };
        },
        onThinking: (iteration) => {
          state.iteration = iteration;
          state.status = 'thinking';
          this.refreshDetails();
        },
        onTools: (tools) => {
          state.runningTools = tools;
          state.status = tools.length > 0 ? 'executing_tool' : 'thinking';
          // Details are read between activations only: when the tools are done, the next model call
          // (onThinking) or the turn's end refreshes them in this same activation.
          if (tools.length > 0) this.refreshDetails();
        },
        onUsage: (usage) => {
          state.usage = addUsage(state.usage, usage);
        },
      },
    };
  }

  /** A finished turn: kept for `awaitTurn`, summarised in the state, counted, and the memo's budgets written. */
  private turnEnded(outcome: TurnOutcome, changes: string[]): TurnResult {
    const { state } = this;
    if (outcome.question) state.pendingQuestion = outcome.question;
    metricMeter.createCounter('loopwright_turns', 'turns', 'Turns by how they ended').add(1, { status: outcome.status });
    if (changes.length > 0) outcome.bundleChanges = changes;
    this.recentTurns.push(outcome);
    if (this.recentTurns.length > RECENT_TURNS) this.recentTurns.shift();
    const { messageRange: _range, usage: _usage, toolCalls: _calls, ...summary } = outcome;
    state.lastTurn = { ...summary, response: excerpt(summary.response), ...(summary.verification ? { verification: shortReport(summary.verification) } : {}) };
    state.status = outcome.status === 'interrupted' ? 'interrupted' : 'waiting_for_user';
    this.refreshDetails();
    this.refreshSearchAttributes();
    this.memos.budgets(this.managed);
    return outcome;
  }

  /** Continue as new: the next run gets the transcript, counters, the unfinished turn, the view and budgets. */
  async handOver(): Promise<never> {
    this.continuing = true;
    await condition(allHandlersFinished);
    const { state, transcript, input } = this;
    // Between turns, a hand-over also moves the session to a newer current build; a turn under way finishes on this one.
    const upgrade = this.upgradeRequested || this.upgradeDue();
    const next = continuedSession(this, workflowInfo().runId, this.pausedTurn, carriedTurns(this.recentTurns), this.features.carryView);
    if (upgrade) next.upgradedFrom = currentBuild() ?? '';
    // An eval session's turn handed over mid-way goes on with the recorded calls it used (no recorded session has one).
    if (this.replay && this.pausedTurn) next.replay = this.replay.carry();
    log.info('Continuing as new', {
      run: state.run,
      historyBytes: workflowInfo().historySize,
      historyEvents: workflowInfo().historyLength,
      transcriptMessages: transcript.length,
      pendingTurn: this.pausedTurn?.turn,
      ...(upgrade ? { upgradingFrom: next.upgradedFrom } : {}),
    });
    const { firstMessage: _first, continued: _previous, ...settings } = input;
    return continueSession({ ...settings, continued: next }, upgrade);
  }

  /** The session completes once every handler has answered. */
  private async end(endedBy: SessionResult['endedBy']): Promise<SessionResult> {
    await condition(allHandlersFinished);
    this.state.status = 'completed';
    this.refreshSearchAttributes();
    return { turns: this.state.turn, lastTurn: this.recentTurns.at(-1), usage: this.state.usage, endedBy };
  }
}

/** The patches a run asks for before any other command, in the order recorded histories have them. */
function runFeatures(input: SessionInput): RunFeatures {
  const transcriptRef = patched(TRANSCRIPT_REF_PATCH);
  const mayContinueAsNew = patched(CONTINUE_AS_NEW_PATCH);
  const localReads = patched(LOCAL_READS_PATCH);
  const copies: WorkerCopies | undefined = localReads && transcriptRef && patched(INLINE_READS_PATCH) ? {} : undefined;
  const humanLoop = patched(HUMAN_LOOP_PATCH);
  const searchable = input.searchAttributes === true && patched(SEARCH_ATTRIBUTES_PATCH);
  const managedContext = patched(MANAGED_CONTEXT_PATCH);
  const turnEndMemos = patched(TURN_END_MEMO_PATCH);
  const carryView = patched(CARRY_VIEW_PATCH);
  const budgetMemos = patched(BUDGET_MEMO_PATCH);
  const verifies = patched(VERIFY_PATCH) && input.verify?.enabled !== false;
  return { transcriptRef, mayContinueAsNew, localReads, copies, humanLoop, searchable, managedContext, turnEndMemos, carryView, budgetMemos, verifies };
}

/** A run's state at its start: counters, the question and warnings the run before carried. */
function initialState(input: SessionInput): SessionState {
  const carried = input.continued;
  return {
    status: 'initializing',
    turn: carried?.turn ?? 0,
    iteration: carried?.pendingTurn?.iterations ?? 0,
    maxIterations: input.maxIterations ?? DEFAULT_MAX_ITERATIONS,
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
}
