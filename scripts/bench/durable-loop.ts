/**
 * The durable side of the engine benchmark: a dev server on free loopback ports, a worker with the
 * real activities (openai client against the fake model server), and one fresh session per turn,
 * so every turn starts from the same transcript and its history holds exactly one turn.
 */
import { Client, Connection } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, NativeConnection } from '@temporalio/worker';
import { startDevServer } from '../../client/server/dev-server';
import { LoopwrightClient, type SessionHandle } from '../../client/session-client';
import type { TurnResult } from '../../common/session-types';
import { createWorker, bundlerLogger, WORKFLOWS_PATH } from '../../worker/create-worker';
import type { CleanupStack } from './cleanup-stack';

/** Settings of the durable side. */
export interface DurableBenchOptions {
  bundlePath: string;
  agentId: string;
  modelBaseURL: string;
  model: string;
  /** Longest a single turn may take before the benchmark gives up. */
  turnTimeoutMs: number;
}

/** One timed durable turn. */
export interface DurableTurn {
  /** From sending the message until the `send` update returned the turn's result. */
  ms: number;
  result: TurnResult;
  history: History;
}

/** The running durable side. */
export interface DurableBench {
  /** Temporal CLI that runs the dev server. */
  cliPath: string;
  /** Run one turn in a fresh session (started and initialised outside the timed part). */
  runTurn(message: string, maxIterations: number): Promise<DurableTurn>;
}

const TASK_QUEUE = `loopwright-bench-${process.pid}`;

/** Start server, worker and clients; their shutdown is pushed onto `cleanup`. */
export async function startDurableBench(options: DurableBenchOptions, cleanup: CleanupStack): Promise<DurableBench> {
  const [server, workflowBundle] = await Promise.all([
    startDevServer({ port: 0, ui: false, ip: '127.0.0.1' }),
    bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: bundlerLogger }),
  ]);
  cleanup.push('dev server', () => server.stop());
  const connection = await Connection.connect({
    address: server.address,
    // A history page of a long turn is bigger than gRPC's default 4 MB; the server's own limit is 50 MB.
    channelArgs: { 'grpc.max_receive_message_length': 64 * 1024 * 1024 },
  });
  cleanup.push('client connection', () => connection.close());
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  cleanup.push('worker connection', () => nativeConnection.close());
  const worker = await createWorker({
    connection: nativeConnection,
    taskQueue: TASK_QUEUE,
    workflowBundle,
    activityOptions: { model: { baseURL: options.modelBaseURL, apiKey: 'bench-key', defaultModel: options.model } },
  });
  const running = worker.run();
  cleanup.push('worker', async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
  });
  const loopwright = new LoopwrightClient(new Client({ connection }), TASK_QUEUE);

  return {
    cliPath: server.cliPath,
    async runTurn(message, maxIterations) {
      const session = await loopwright.start({ bundlePath: options.bundlePath, agentId: options.agentId, maxIterations });
      await waitUntilReady(session, options.turnTimeoutMs);
      const started = performance.now();
      const result = await withTimeout(session.send(message), options.turnTimeoutMs, 'durable turn');
      const ms = performance.now() - started;
      // Fetched before `end`, so the history holds initialisation and the one turn only. On any
      // failure above the session is left running: the dev server is in memory and stops at clean-up.
      const history = await session.workflow.fetchHistory();
      await session.end();
      await withTimeout(session.result(), options.turnTimeoutMs, 'session end');
      return { ms, result, history };
    },
  };
}

/** Wait until agent initialisation is over, so the timed part is the turn alone. */
async function waitUntilReady(session: SessionHandle, timeoutMs: number): Promise<void> {
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
