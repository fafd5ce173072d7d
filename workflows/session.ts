/**
 * The session workflow: initialise the agent (an activity, so its result is recorded), then run one
 * turn per user message until the session ends. The transcript lives here and only grows.
 */
import type { Duration } from '@temporalio/common';
import {
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  log,
  setHandler,
} from '@temporalio/workflow';
import { DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_ITERATIONS } from '../common/defaults';
import { AGENT_INIT_FAILED, MAX_ITERATIONS_EXCEEDED, TURN_FAILED } from '../common/failure-types';
import type { ChatMessage } from '../common/messages';
import type {
  InitializeResult,
  SessionInput,
  SessionResult,
  SessionState,
  TurnResult,
} from '../common/session-types';
import { sessionActivities } from './activity-proxies';
import { endSignal, interruptSignal, messagesQuery, sendUpdate, stateQuery } from './definitions';
import { rootMessage } from './tool-calls';
import { runTurn } from './turn';
import { addUsage, ZERO_USAGE } from './usage';

/** Run an agent session. See `SessionInput`; signals, queries and the `send` update are in definitions.ts. */
export async function agentSession(input: SessionInput): Promise<SessionResult> {
  const maxIterations = validMaxIterations(input.maxIterations);
  const activities = sessionActivities(input.timeouts);
  const transcript: ChatMessage[] = [];
  const state: SessionState = {
    status: 'initializing',
    turn: 0,
    iteration: 0,
    maxIterations,
    runningTools: [],
    usage: ZERO_USAGE,
    messageCount: 0,
  };
  let init: InitializeResult | undefined;
  let busy = false;
  let endRequested = false;
  let currentTurn: CancellationScope | undefined;
  let lastTurn: TurnResult | undefined;

  setHandler(stateQuery, () => ({ ...state, messageCount: transcript.length }));
  setHandler(messagesQuery, (from = 0) => transcript.slice(from));
  setHandler(endSignal, () => {
    endRequested = true;
  });
  setHandler(interruptSignal, (reason?: string) => {
    if (!currentTurn) {
      log.info('Interrupt ignored: no turn is running', { reason });
      return;
    }
    log.info('Interrupting the current turn', { turn: state.turn, reason });
    currentTurn.cancel();
  });

  /** Run a turn in its own cancellable scope so `interrupt` can stop it and the session go on. */
  const runUserTurn = async (message: string): Promise<TurnResult> => {
    busy = true;
    try {
      await condition(() => init !== undefined || state.status === 'failed');
      if (!init) {
        throw ApplicationFailure.nonRetryable(`Agent initialisation failed: ${state.error ?? 'unknown error'}`, AGENT_INIT_FAILED);
      }
      const ready = init;
      state.turn += 1;
      state.iteration = 0;
      const scope = new CancellationScope({ cancellable: true });
      currentTurn = scope;
      const result = await scope.run(() =>
        runTurn(
          {
            activities,
            turn: state.turn,
            transcript,
            tools: ready.tools,
            context: ready.context,
            maxIterations,
            model: input.model,
            observer: {
              onThinking: (iteration) => {
                state.iteration = iteration;
                state.status = 'thinking';
              },
              onTools: (tools) => {
                state.runningTools = tools;
                state.status = tools.length > 0 ? 'executing_tool' : 'thinking';
              },
              onUsage: (usage) => {
                state.usage = addUsage(state.usage, usage);
              },
            },
          },
          message,
        ),
      );
      lastTurn = result;
      const { messages: _messages, usage: _usage, ...summary } = result;
      state.lastTurn = summary;
      state.runningTools = [];
      state.status = result.status === 'interrupted' ? 'interrupted' : 'waiting_for_user';
      return result;
    } finally {
      currentTurn = undefined;
      busy = false;
    }
  };

  setHandler(sendUpdate, runUserTurn, {
    validator: (message: string) => {
      if (typeof message !== 'string' || message.trim() === '') {
        throw new Error('message must be a non-empty string');
      }
      if (busy) throw new Error('busy: a turn is running; wait for it to finish or send interrupt');
      if (endRequested) throw new Error('the session is ending and takes no more messages');
      if (state.status === 'failed') throw new Error(`the session failed: ${state.error ?? 'unknown error'}`);
    },
  });

  try {
    init = await activities.initializeAgent({
      bundlePath: input.bundlePath,
      agentId: input.agentId,
      outputRoots: input.outputRoots,
    });
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
  transcript.push(...init.messages);
  state.agent = init.agent;
  state.status = 'waiting_for_user';
  log.info('Agent initialised', { agent: init.agent.id, systemMessages: init.messages.length });

  if (input.oneShot) {
    if (!input.firstMessage) {
      throw ApplicationFailure.nonRetryable('A one-shot session needs firstMessage', 'LoopwrightBadInput');
    }
    const result = await runUserTurn(input.firstMessage);
    state.status = 'completed';
    return oneShotOutcome(result, state.turn);
  }
  if (input.firstMessage) await runUserTurn(input.firstMessage);

  const endedBy = await waitUntilEnded(
    () => endRequested,
    () => busy,
    () => state.turn,
    (input.idleTimeout ?? DEFAULT_IDLE_TIMEOUT) as Duration,
  );
  await condition(allHandlersFinished);
  state.status = 'completed';
  return { turns: state.turn, lastTurn, usage: state.usage, endedBy };
}

/**
 * Wait for `end` (once no turn runs) or for a quiet period with no new turn. A turn starting
 * restarts the idle timer.
 */
async function waitUntilEnded(
  endRequested: () => boolean,
  busy: () => boolean,
  turnsStarted: () => number,
  idleTimeout: Duration,
): Promise<SessionResult['endedBy']> {
  for (;;) {
    if (endRequested() && !busy()) return 'end_signal';
    const seen = turnsStarted();
    const woke = await condition(() => (endRequested() && !busy()) || turnsStarted() !== seen || busy(), idleTimeout);
    if (!woke) return 'idle_timeout';
    await condition(() => !busy());
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

function validMaxIterations(value: number | undefined): number {
  if (value === undefined) return DEFAULT_MAX_ITERATIONS;
  if (!Number.isInteger(value) || value < 1) {
    throw ApplicationFailure.nonRetryable(`maxIterations must be a positive integer, got ${value}`, 'LoopwrightBadInput');
  }
  return value;
}
