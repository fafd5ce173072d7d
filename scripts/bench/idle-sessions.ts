/**
 * Idle sessions: many sessions started, initialised and waiting for a message, all on one worker
 * in a child process; then the worker's memory and its CPU time while nothing happens. A session
 * counts as ready once its history shows the first activity (agent initialisation) completed and a
 * workflow task after it completed: read from the server (a long poll on the history), so waiting
 * costs the worker nothing.
 */
import type { Client, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';
import { LoopwrightClient } from '../../client/session-client';
import { tracingSettingsFromEnv } from '../../worker/tracing';
import { resolveWorkerSizing } from '../../worker/worker-sizing';
import type { BenchServer } from './bench-server';
import { workerFacts, type WorkerFacts } from './concurrency';
import { mapWithLimit, range, sleep } from './pool';
import type { BenchWorkerProcess } from './worker-process';

/** What the idle part needs. */
export interface IdleInput {
  server: BenchServer;
  worker: BenchWorkerProcess;
  taskQueue: string;
  bundlePath: string;
  agentId: string;
  sessions: number;
  /** Sessions being started (and waited for) at once. */
  startParallelism: number;
  /** How long the worker is watched at rest. */
  restSeconds: number;
  /** Sessions asked for their state after the rest (a sample, so most stay untouched). */
  stateSample: number;
  progress(line: string): void;
}

/** The figures of the idle part. */
export interface IdleFigures {
  worker: WorkerFacts;
  sessions: number;
  startParallelism: number;
  /** From the first start until every session was ready. */
  rampMs: number;
  sessionsPerSecond: number;
  /** Worker CPU while the sessions were started and initialised. */
  rampWorkerCpuMs: number;
  /** The dev server's CPU over the same time (it also answers the bench's history polls). */
  rampServerCpuMs?: number;
  restSeconds: number;
  /** Worker CPU over the rest period, and as a share of one core. */
  restWorkerCpuMs: number;
  restCpuPercentOfCore: number;
  /** The dev server's CPU over the same rest period (absent when the SDK ran it in the bench's process). */
  restServerCpuMs?: number;
  /** Worker RSS after the rest period, its peak, and the growth per session over its RSS at start. */
  workerRssBytes: number;
  workerPeakRssBytes: number;
  rssPerSessionBytes: number;
  /** Sessions the worker keeps cached (its sizing, from the environment it was given). */
  cachedSessions: number;
  /** Of the sampled sessions, how many answered the state query with waiting_for_user. */
  stateSample: { asked: number; waitingForUser: number; ms: number };
}

/** Goal for the worker's RSS with 10,000 idle sessions. */
export const IDLE_RSS_TARGET_BYTES = 2 ** 30;

const READY_TIMEOUT_MS = 120_000;
/** Bound on the history long polls per session (each returns at least one new event, or after the server's poll timeout). */
const MAX_HISTORY_CALLS = 200;

/** Start the sessions, wait until all are idle, then watch the worker at rest. */
export async function measureIdleSessions(input: IdleInput, rssAtStartBytes: number): Promise<IdleFigures> {
  const loopwright = new LoopwrightClient(input.server.client, input.taskQueue);
  const ids: string[] = [];
  const cpuBefore = input.worker.cpuMs();
  const serverCpuBefore = input.server.cpuMs();
  const started = performance.now();
  let ready = 0;
  let lastReport = started;
  await mapWithLimit(range(input.sessions), input.startParallelism, async (i) => {
    const session = await loopwright.start({
      bundlePath: input.bundlePath,
      agentId: input.agentId,
      workflowId: `bench-idle-${process.pid}-${i}`,
    });
    ids.push(session.workflowId);
    const runId = (session.workflow as Partial<WorkflowHandleWithFirstExecutionRunId>).firstExecutionRunId;
    await waitUntilInitialised(input.server.client, session.workflowId, runId);
    ready++;
    if (performance.now() - lastReport > 10_000) {
      lastReport = performance.now();
      input.worker.assertAlive();
      input.progress(`idle: ${ready}/${input.sessions} sessions ready after ${((lastReport - started) / 1000).toFixed(0)} s`);
    }
  });
  const rampMs = performance.now() - started;
  const rampWorkerCpuMs = input.worker.cpuMs() - cpuBefore;
  const serverCpuAfter = input.server.cpuMs();

  input.progress(`idle: ${input.sessions} sessions waiting; watching the worker for ${input.restSeconds} s`);
  const restStarted = performance.now();
  const restCpuBefore = input.worker.cpuMs();
  const restServerCpuBefore = input.server.cpuMs();
  await sleep(input.restSeconds * 1000);
  const restWorkerCpuMs = input.worker.cpuMs() - restCpuBefore;
  const restServerCpuAfter = input.server.cpuMs();
  const restMs = performance.now() - restStarted;
  const memory = input.worker.memory();

  const sample = sampleOf(ids, input.stateSample);
  const sampleStarted = performance.now();
  const states = await mapWithLimit(sample, 10, (id) => loopwright.session(id).state());
  return {
    worker: workerFacts(input.worker, rssAtStartBytes),
    sessions: input.sessions,
    startParallelism: input.startParallelism,
    rampMs,
    sessionsPerSecond: input.sessions / (rampMs / 1000),
    rampWorkerCpuMs,
    ...(serverCpuBefore !== undefined && serverCpuAfter !== undefined ? { rampServerCpuMs: serverCpuAfter - serverCpuBefore } : {}),
    restSeconds: restMs / 1000,
    restWorkerCpuMs,
    restCpuPercentOfCore: (restWorkerCpuMs / restMs) * 100,
    ...(restServerCpuBefore !== undefined && restServerCpuAfter !== undefined ? { restServerCpuMs: restServerCpuAfter - restServerCpuBefore } : {}),
    workerRssBytes: memory.rssBytes,
    workerPeakRssBytes: memory.peakRssBytes,
    rssPerSessionBytes: (memory.rssBytes - rssAtStartBytes) / input.sessions,
    cachedSessions: (() => {
      const env = { ...process.env, ...input.worker.env };
      return resolveWorkerSizing({}, env, { traced: tracingSettingsFromEnv(env) !== undefined }).cachedSessions;
    })(),
    stateSample: {
      asked: sample.length,
      waitingForUser: states.filter((s) => s.status === 'waiting_for_user').length,
      ms: performance.now() - sampleStarted,
    },
  };
}

/**
 * Follow the session's history with long polls (`waitNewEvent`: the server answers when new events
 * arrive) until initialisation is over; throws when the session failed or took too long.
 */
export async function waitUntilInitialised(client: Client, workflowId: string, runId: string | undefined, timeoutMs = READY_TIMEOUT_MS): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  const events: temporal.api.history.v1.IHistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  for (let calls = 0; calls < MAX_HISTORY_CALLS; calls++) {
    const response = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId, runId },
      nextPageToken,
      waitNewEvent: true,
      skipArchival: true,
    });
    events.push(...(response.history?.events ?? []));
    const verdict = initialisation({ events });
    if (verdict === 'done') return;
    if (verdict !== 'pending') throw new Error(`idle session ${workflowId} did not initialise: ${verdict}`);
    if (performance.now() > deadline) throw new Error(`idle session ${workflowId} not initialised after ${timeoutMs} ms`);
    nextPageToken = response.nextPageToken?.length ? response.nextPageToken : undefined;
    if (!nextPageToken) throw new Error(`idle session ${workflowId}: its history ended before initialisation was over`);
  }
  throw new Error(`idle session ${workflowId} not initialised after ${MAX_HISTORY_CALLS} history calls`);
}

/** 'done' once an activity completed and a later workflow task completed; 'pending'; or what went wrong. */
export function initialisation(history: History): 'done' | 'pending' | string {
  let activityDone = false;
  for (const event of history.events ?? []) {
    if (event.activityTaskFailedEventAttributes) return 'its first activity failed';
    if (event.activityTaskTimedOutEventAttributes) return 'its first activity timed out';
    if (event.workflowExecutionFailedEventAttributes) return 'the workflow failed';
    if (event.workflowExecutionTerminatedEventAttributes) return 'the workflow was terminated';
    if (event.workflowExecutionCompletedEventAttributes) return 'the workflow completed';
    if (event.activityTaskCompletedEventAttributes) activityDone = true;
    else if (activityDone && event.workflowTaskCompletedEventAttributes) return 'done';
  }
  return 'pending';
}

/** Up to `count` ids spread evenly over `ids`. */
function sampleOf(ids: readonly string[], count: number): string[] {
  if (ids.length <= count) return [...ids];
  const step = ids.length / count;
  return range(count).map((i) => ids[Math.floor(i * step)]!);
}
