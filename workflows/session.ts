/**
 * The session workflow: initialise the agent (an activity, so its result is recorded), then run one
 * turn per user message until the session ends. The transcript lives here and only grows. Before a
 * run's history gets large it continues as new — between turns, or between two iterations of a long
 * turn — carrying the transcript, counters and the unfinished turn; the workflow id stays the same.
 */
import type { Duration } from '@temporalio/common';
import type { ChatMessage, ToolCall } from '../common/messages';
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
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  DEFAULT_IDLE_TIMEOUT,
  DEFAULT_MAX_HISTORY_BYTES,
  DEFAULT_MAX_HISTORY_EVENTS,
  DEFAULT_MAX_ITERATIONS,
  MAX_USER_MESSAGE_BYTES,
} from '../common/defaults';
import {
  AGENT_INIT_FAILED,
  BAD_INPUT,
  BUSY,
  SESSION_ENDING,
  SESSION_FAILED,
  CONTINUED_AS_NEW,
  MAX_ITERATIONS_EXCEEDED,
  TOO_LARGE,
  TRANSCRIPT_MISMATCH,
  TURN_FAILED,
} from '../common/failure-types';
import type {
  ApprovalPolicy,
  ContinuedSession,
  InitializeResult,
  PendingApproval,
  PendingTurn,
  SessionInput,
  SessionResult,
  SessionState,
  TurnResult,
} from '../common/session-types';
import {
  CARRY_INLINE_BYTES,
  HashedTranscript,
  TRANSCRIPT_PAGE_BYTES,
  utf8Length,
} from '../common/transcript';
import { sessionInputProblem } from '../common/session-input-schema';
import { AGENT_ATTRIBUTE, BUNDLE_ATTRIBUTE, STATUS_ATTRIBUTE, TOKENS_ATTRIBUTE, TURNS_ATTRIBUTE } from '../common/search-attributes';
import { sessionActivities, type SessionActivityStubs } from './activity-proxies';
import {
  approveUpdate,
  awaitTurnUpdate,
  denyUpdate,
  extendUpdate,
  endSignal,
  interruptSignal,
  messagesQuery,
  sendUpdate,
  stateQuery,
  transcriptPageQuery,
} from './definitions';
import { rootMessage } from './tool-calls';
import { type SpanEnd, withSpan } from './trace-hook';
import { type ApprovalDecision, isPaused, type PausedTurn, runTurn, type TurnControls, type TurnOutcome, type TurnStart } from './turn';
import { isLoopToolName } from '../common/tool-names';
import { addUsage, ZERO_USAGE } from './usage';

/** Patch ids: behaviour added after sessions were already recorded (see test/fixtures/histories). */
const TRANSCRIPT_REF_PATCH = 'loopwright-transcript-ref';
const CONTINUE_AS_NEW_PATCH = 'loopwright-continue-as-new';
const LOCAL_READS_PATCH = 'loopwright-local-reads';
const HUMAN_LOOP_PATCH = 'loopwright-human-loop';
const SEARCH_ATTRIBUTES_PATCH = 'loopwright-search-attributes';

/** Results of this many latest turns travel to the next run, for clients collecting them there. */
const RECENT_TURNS = 8;

/** With the server's own suggestion alone, a run continues as new only once it added this much (so a large carried transcript cannot loop). */
const SUGGESTED_MIN_BYTES = 1024 * 1024;
const SUGGESTED_MIN_EVENTS = 1_000;

/** Longest reply kept in `state.lastTurn` (the whole reply is in the transcript and the turn's result). */
const LAST_TURN_EXCERPT = 4_000;

/** Carried turn results stay this small in total; larger replies travel as `responseOmitted` (the client reads them from the transcript). */
const CARRIED_TURNS_BYTES = 64 * 1024;

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
  let indexed = '';
  const refreshSearchAttributes = (): void => {
    if (!searchable) return;
    const key = `${state.status}|${state.turn}|${state.usage.totalTokens}`;
    if (key === indexed) return;
    indexed = key;
    upsertSearchAttributes([
      { key: AGENT_ATTRIBUTE, value: input.agentId },
      { key: BUNDLE_ATTRIBUTE, value: input.bundlePath.split(/[\\/]/).filter(Boolean).pop() ?? input.bundlePath },
      { key: STATUS_ATTRIBUTE, value: state.status },
      { key: TURNS_ATTRIBUTE, value: state.turn },
      { key: TOKENS_ATTRIBUTE, value: state.usage.totalTokens },
    ]);
  };

  /** The Web UI's live "current details" of the session, in markdown; never whole contents. */
  const refreshDetails = (): void => {
    const lines = [
      `**${state.status.replace(/_/g, ' ')}** · turn ${state.turn} · iteration ${state.iteration}/${state.maxIterations} · run ${state.run} · ${state.usage.totalTokens} tokens`,
    ];
    if (state.agent) lines.push(`agent: ${state.agent.name} (${state.agent.title})`);
    for (const tool of state.runningTools) lines.push(`running: \`${tool.name}\`${tool.detail ? ` ${tool.detail}` : ''}`);
    for (const p of state.pendingApprovals) lines.push(`waiting for approval: \`${p.tool}\` ${p.path ?? ''} (call ${p.callId})`);
    if (state.pendingQuestion) lines.push(`question for the user: ${state.pendingQuestion.question.slice(0, 200)}`);
    if (state.lastTurn?.response) lines.push(`last reply: ${state.lastTurn.response.replace(/\s+/g, ' ').slice(0, 200)}`);
    if (state.error) lines.push(`error: ${state.error}`);
    setCurrentDetails(lines.join('\n\n'));
  };

  // Human in the loop: approvals, the turn's (extendable) limit, the model's pending question.
  const approval = approvalSettings(input);
  const decisions = new Map<string, ApprovalDecision>();
  let turnLimit = carried?.pendingTurn?.maxIterations ?? maxIterations;
  const controls: TurnControls | undefined = humanLoop
    ? {
        limit: () => turnLimit,
        warnAt: input.iterationWarning ?? 0.8,
        maxRepeatedFailures: input.maxRepeatedFailures ?? 3,
        loopBreakers: input.loopBreakers !== false,
        interactive: !input.oneShot,
        needsApproval: (call) => policyCovers(approval.policy, call.function.name),
        requestApproval: async (call) => {
          const pending: PendingApproval = { callId: call.id, tool: call.function.name, ...previewOf(call, init?.context.variables ?? {}), since: Date.now() };
          state.pendingApprovals = [...state.pendingApprovals, pending];
          state.status = 'waiting_for_approval';
          refreshDetails();
          try {
            let answered = true;
            if (approval.timeout !== undefined) answered = await condition(() => decisions.has(call.id), approval.timeout as Duration);
            else await condition(() => decisions.has(call.id));
            if (!answered) return { approved: approval.onTimeout === 'approve', reason: `no answer within ${approval.timeout}` };
            return decisions.get(call.id)!;
          } finally {
            state.pendingApprovals = state.pendingApprovals.filter((p) => p.callId !== call.id);
            if (state.pendingApprovals.length === 0 && state.status === 'waiting_for_approval') state.status = 'executing_tool';
          }
        },
      }
    : undefined;
  const decide = (approved: boolean, callId?: string, reason?: string): string[] => {
    const ids = callId === undefined ? state.pendingApprovals.map((p) => p.callId) : [callId];
    for (const id of ids) decisions.set(id, { approved, ...(reason ? { reason } : {}) });
    return ids;
  };
  const checkPending = (callId?: string): void => {
    if (state.pendingApprovals.length === 0) throw ApplicationFailure.nonRetryable('No tool call is waiting for approval', BAD_INPUT);
    if (callId !== undefined && !state.pendingApprovals.some((p) => p.callId === callId)) {
      throw ApplicationFailure.nonRetryable(`No tool call ${callId} is waiting for approval (waiting: ${state.pendingApprovals.map((p) => p.callId).join(', ')})`, BAD_INPUT);
    }
  };
  setHandler(approveUpdate, (callId: string | null) => decide(true, callId ?? undefined), {
    validator: (callId: string | null) => checkPending(callId ?? undefined),
    description: 'Let a tool call waiting for approval run (all waiting calls when no call id is given)',
  });
  setHandler(denyUpdate, (callId: string | null, reason?: string) => decide(false, callId ?? undefined, reason), {
    validator: (callId: string | null, _reason?: string) => checkPending(callId ?? undefined),
    description: 'Refuse a tool call waiting for approval, with a reason the model sees',
  });
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

  setHandler(stateQuery, () => ({ ...state, messageCount: transcript.length, transcriptBytes: transcript.bytes }), {
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

  /** Run (or resume) a turn in its own cancellable scope so `interrupt` can stop it and the session go on. */
  const runSessionTurn = async (start: TurnStart): Promise<TurnResult | undefined> => {
    busy = true;
    try {
      await condition(() => init !== undefined || state.status === 'failed');
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

function approvalSettings(input: SessionInput): { policy: ApprovalPolicy; timeout: string | undefined; onTimeout: 'approve' | 'deny' } {
  return { policy: input.approval?.policy ?? 'none', timeout: input.approval?.timeout, onTimeout: input.approval?.onTimeout ?? 'deny' };
}

/** Whether `policy` makes a call of `tool` wait for a human yes. */
function policyCovers(policy: ApprovalPolicy, tool: string): boolean {
  if (policy === 'none') return false;
  if (policy === 'all') return true;
  if (policy === 'writes') return tool === 'save_output';
  return policy.includes(tool);
}

/** Path (with known variables filled in) and a short preview of a call, for the person approving it. */
function previewOf(call: ToolCall, variables: Record<string, string>): { path?: string; preview: string } {
  let args: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(call.function.arguments);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
  } catch {
    // Shown as it came.
  }
  const raw = args.file_path ?? args.workflow_path;
  // One pass over {name} placeholders; unknown ones stay as written (the tool resolves them fully).
  const path = typeof raw === 'string' ? raw.replace(/\{([A-Za-z0-9_-]+)\}/g, (whole, name: string) => variables[name] ?? whole) : undefined;
  const content = typeof args.content === 'string' ? args.content : undefined;
  const preview = content !== undefined
    ? `${utf8Length(content)} bytes: ${content.slice(0, 200)}${content.length > 200 ? '…' : ''}`
    : call.function.arguments.slice(0, 200);
  return { ...(path !== undefined ? { path } : {}), preview };
}

function excerpt(response: string | null): string | null {
  return response !== null && response.length > LAST_TURN_EXCERPT ? `${response.slice(0, LAST_TURN_EXCERPT)}…` : response;
}

/** The latest turn results, newest kept whole first, replies dropped once they would pass the budget. */
function carriedTurns(turns: TurnResult[]): TurnResult[] {
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
async function loadCarriedTranscript(
  activities: SessionActivityStubs,
  carried: { fromRunId: string; fromWorkflowId?: string; transcript: { count: number; hash: string; messages?: ChatMessage[] } },
  transcript: HashedTranscript,
): Promise<void> {
  const expected = carried.transcript;
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

/** A one-shot session returns its turn, or fails with a stable type carrying the partial result. */
function oneShotOutcome(result: TurnResult, turns: number): SessionResult {
  if (result.status === 'max_iterations') {
    throw ApplicationFailure.create({
      type: MAX_ITERATIONS_EXCEEDED,
      message: result.error ?? 'Agent execution exceeded maximum iterations',
      nonRetryable: true,
      details: [result],
    });
  }
  if (result.status === 'failed') {
    throw ApplicationFailure.create({
      type: TURN_FAILED,
      message: `The turn failed: ${result.error ?? 'unknown error'}`,
      nonRetryable: true,
      details: [result],
    });
  }
  return { turns, lastTurn: result, usage: result.usage, endedBy: 'one_shot' };
}

/** What the `loopwright.turn` span records when the turn ends (or pauses for the next run). */
function turnSpanEnd(outcome: TurnOutcome | PausedTurn): SpanEnd {
  if (isPaused(outcome)) return { attributes: { 'loopwright.status': 'paused', 'loopwright.iterations': outcome.paused.iterations } };
  return {
    attributes: {
      'loopwright.status': outcome.status,
      'loopwright.iterations': outcome.iterations,
      'loopwright.tool_calls': outcome.toolCalls,
      'gen_ai.usage.input_tokens': outcome.usage.promptTokens,
      'gen_ai.usage.output_tokens': outcome.usage.completionTokens,
    },
    ...(outcome.status === 'failed' ? { error: outcome.error ?? 'the turn failed' } : {}),
  };
}
