/**
 * The durable side of the engine benchmark: a worker with the real activities (openai client
 * against the fake model server) in this process, on the bench's dev server, and one fresh session
 * per turn, so every turn starts from the same transcript and its history holds exactly one turn.
 */
import type { WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils';
import { activityInfo } from '@temporalio/activity';
import { bundleWorkflowCode, type ActivityInboundCallsInterceptor, type WorkerOptions } from '@temporalio/worker';
import { LoopwrightClient, type SessionHandle } from '../../client/session-client';
import type { ChatMessage } from '../../common/messages';
import type { TurnResult } from '../../common/session-types';
import { createWorker, bundlerLogger, WORKFLOWS_PATH } from '../../worker/create-worker';
import type { BenchServer } from './bench-server';
import type { CleanupStack } from './cleanup-stack';
import { readTranscript } from './transcript';

/** Settings of the durable side. */
export interface DurableBenchOptions {
  bundlePath: string;
  agentId: string;
  modelBaseURL: string;
  model: string;
  /** Longest a single turn may take before the benchmark gives up. */
  turnTimeoutMs: number;
  /** Task queue of this worker (default one per bench process; two durable sides need two). */
  taskQueue?: string;
  /** Worker options to try (scripts/profile-turn.ts measures SDK settings with it). */
  workerOptions?: Partial<WorkerOptions>;
}

/** The fields of a turn's result the bench reads (a result's messages are not among them: see `transcript`). */
export type TurnOutcome = Pick<TurnResult, 'turn' | 'success' | 'status' | 'iterations' | 'response' | 'error' | 'usage'>;

/** One timed durable turn. */
export interface DurableTurn {
  /** From sending the message until the `send` update returned the turn's result. */
  ms: number;
  /** CPU this process (the worker) used in that time, in ms. */
  cpuMs: number;
  result: TurnOutcome;
  /** History of the run the bench started (not of later runs), fetched before the session ended. */
  history: History;
  /** That run continued as new: its history then holds only part of the turn. */
  continuedAsNew: boolean;
  /** The session's whole transcript (system messages and the turn), read with the `messages` query. */
  transcript: ChatMessage[];
}

/** The running durable side. */
export interface DurableBench {
  /** Run one turn in a fresh session (started and initialised outside the timed part). */
  runTurn(message: string, maxIterations: number): Promise<DurableTurn>;
  /** How long each `callModelV2` activity ran inside the worker since the last call (ms), clocked by an activity interceptor. */
  takeModelCallTimes(): number[];
}

const TASK_QUEUE = `loopwright-bench-${process.pid}`;

let sharedBundle: ReturnType<typeof bundleWorkflowCode> | undefined;

/** The session workflow bundled from the sources, once per bench run (every in-process Loopwright worker shares it). */
export function benchWorkflowBundle(): ReturnType<typeof bundleWorkflowCode> {
  sharedBundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: bundlerLogger });
  return sharedBundle;
}

/** Start a Loopwright worker in this process on `server`; its shutdown is pushed onto `cleanup`. */
export async function startDurableBench(options: DurableBenchOptions, server: BenchServer, cleanup: CleanupStack): Promise<DurableBench> {
  const [workflowBundle, connection] = await Promise.all([benchWorkflowBundle(), server.nativeConnection()]);
  const taskQueue = options.taskQueue ?? TASK_QUEUE;
  let modelCallTimes: number[] = [];
  const timing: ActivityInboundCallsInterceptor = {
    async execute(input, next) {
      if (activityInfo().activityType !== 'callModelV2') return next(input);
      const started = performance.now();
      try {
        return await next(input);
      } finally {
        modelCallTimes.push(performance.now() - started);
      }
    },
  };
  const worker = await createWorker({
    connection,
    taskQueue,
    workflowBundle,
    activityOptions: { model: { baseURL: options.modelBaseURL, apiKey: 'bench-key', defaultModel: options.model } },
    // The bench runs without tracing, so these are the worker's only activity interceptors.
    overrides: { ...options.workerOptions, interceptors: { activity: [() => ({ inbound: timing })] } },
  });
  const running = worker.run();
  cleanup.push('worker', async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
  });
  const loopwright = new LoopwrightClient(server.client, taskQueue);

  return {
    takeModelCallTimes() {
      const times = modelCallTimes;
      modelCallTimes = [];
      return times;
    },
    async runTurn(message, maxIterations) {
      // A window no turn here reaches: these parts measure the engine and its history, not compaction (the context part does).
      const session = await loopwright.start({ bundlePath: options.bundlePath, agentId: options.agentId, maxIterations, context: { window: 10_000_000 } });
      await waitUntilReady(session, options.turnTimeoutMs);
      const cpuStart = process.cpuUsage();
      const started = performance.now();
      const turn = await withTimeout(session.send(message), options.turnTimeoutMs, 'durable turn');
      const ms = performance.now() - started;
      const cpu = process.cpuUsage(cpuStart);
      const result: TurnOutcome = {
        turn: turn.turn,
        success: turn.success,
        status: turn.status,
        iterations: turn.iterations,
        response: turn.response,
        error: turn.error,
        usage: turn.usage,
      };
      // Read before `end`, so the history holds initialisation and the one turn only. The history
      // is that of the run started here (pinned by its run id): a session that continued as new
      // leaves its later runs out, and says so. On any failure above the session is left running:
      // the dev server is in memory and stops at clean-up.
      const transcript = await withTimeout(
        readTranscript((from) => session.messages(from)),
        options.turnTimeoutMs,
        'messages query',
      );
      const history = await startedRun(loopwright, session).fetchHistory();
      const events = history.events ?? [];
      const continuedAsNew = Boolean(events[events.length - 1]?.workflowExecutionContinuedAsNewEventAttributes);
      await session.end();
      await withTimeout(session.result(), options.turnTimeoutMs, 'session end');
      return { ms, cpuMs: (cpu.user + cpu.system) / 1000, result, history, continuedAsNew, transcript };
    },
  };
}

/** A handle on the first run of `session` (the handle from `start` follows the latest run). */
function startedRun(loopwright: LoopwrightClient, session: SessionHandle) {
  const runId = (session.workflow as Partial<WorkflowHandleWithFirstExecutionRunId>).firstExecutionRunId;
  return runId ? loopwright.client.workflow.getHandle(session.workflowId, runId) : session.workflow;
}

/** Wait until agent initialisation is over, so the timed part is the turn alone. */
export async function waitUntilReady(session: SessionHandle, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await session.state();
    if (state.status === 'waiting_for_user') return;
    if (state.status === 'failed') throw new Error(`bench session failed to initialise: ${state.error ?? 'unknown error'}`);
    if (Date.now() > deadline) throw new Error(`bench session not ready after ${timeoutMs} ms (status ${state.status})`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Reject when `promise` takes longer than `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
