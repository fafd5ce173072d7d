/**
 * The floor of a durable loop on this machine: bare-workflow.ts (one trivial activity per
 * iteration, in sequence) on the bench's dev server, run by its own worker on its own task queue in
 * this process. Timed as a whole (start to result, like a durable turn from send to result) and per
 * iteration (between the starts of consecutive activities, clocked in this process).
 */
import { activityInfo } from '@temporalio/activity';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { bundlerLogger } from '../../worker/create-worker';
import type { BareActivities } from './bare-workflow';
import type { BenchServer } from './bench-server';
import type { CleanupStack } from './cleanup-stack';
import { withTimeout } from './durable-loop';
import { measureTimeline, type TimelineFigures } from './history-timeline';
import { median, summarize, type SampleSummary } from './stats';

/** Figures of `runs` bare loops of `iterations` activities. */
export interface BareFigures {
  iterations: number;
  runs: number;
  warmup: number;
  /** Start of the workflow until its result, per run. */
  loop: SampleSummary;
  /** Median loop / iterations: comparable with a durable turn's ms per iteration. */
  perIteration: number;
  /** Start of one activity to the start of the next, over all runs' iterations. */
  iterationIntervals: SampleSummary;
  /** CPU of this process per iteration (ms), from start to result: the bare worker's (the durable one is idle meanwhile). */
  cpuPerIteration: number;
  /** Where the last run's time went, from its event times (as for a durable turn). */
  timeline?: TimelineFigures;
}

/** The running bare worker. */
export interface BareBench {
  /** One loop of `iterations` activities: its time (start..result) and the activity-to-activity intervals. */
  runOnce(iterations: number): Promise<BareRun>;
}

/** One bare loop. */
export interface BareRun {
  ms: number;
  intervals: number[];
  cpuMs: number;
  timeline: TimelineFigures;
}

/** Figures of bare loops run one at a time (interleaved with other work). */
export function bareFigures(iterations: number, runs: BareRun[], warmup: number): BareFigures {
  const loops = runs.map((r) => r.ms);
  return {
    iterations,
    runs: runs.length,
    warmup,
    loop: summarize(loops),
    perIteration: median(loops) / iterations,
    iterationIntervals: summarize(runs.flatMap((r) => r.intervals)),
    cpuPerIteration: runs.reduce((sum, r) => sum + r.cpuMs, 0) / (runs.length * iterations),
    ...(runs.length > 0 ? { timeline: runs[runs.length - 1]!.timeline } : {}),
  };
}

const TASK_QUEUE = `loopwright-bench-bare-${process.pid}`;
const RUN_TIMEOUT_MS = 60_000;

/** Bundle bare-workflow.ts, start its worker on `server`; its shutdown goes onto `cleanup`. */
export async function startBareBench(server: BenchServer, cleanup: CleanupStack): Promise<BareBench> {
  /** Activity start times (performance.now) per workflow id. */
  const ticks = new Map<string, number[]>();
  const activities: BareActivities = {
    async tick(i) {
      const at = performance.now();
      const id = activityInfo().workflowExecution?.workflowId ?? '';
      let times = ticks.get(id);
      if (!times) ticks.set(id, (times = []));
      times.push(at);
      return i + 1;
    },
  };
  const [workflowBundle, connection] = await Promise.all([bundleWorkflowCode({ workflowsPath: require.resolve('./bare-workflow'), logger: bundlerLogger }), server.nativeConnection()]);
  const worker = await Worker.create({ connection, taskQueue: TASK_QUEUE, workflowBundle, activities });
  const running = worker.run();
  cleanup.push('bare worker', async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
  });

  let counter = 0;
  const runOnce = async (iterations: number): Promise<BareRun> => {
    const workflowId = `bench-bare-${process.pid}-${++counter}`;
    const cpu = process.cpuUsage();
    const started = performance.now();
    const handle = await server.client.workflow.start('bareLoop', { taskQueue: TASK_QUEUE, workflowId, args: [iterations] });
    const sum = await withTimeout(handle.result() as Promise<number>, RUN_TIMEOUT_MS, 'bare loop');
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const times = ticks.get(workflowId) ?? [];
    ticks.delete(workflowId);
    const expected = (iterations * (iterations + 1)) / 2;
    if (sum !== expected || times.length !== iterations) {
      throw new Error(`bare loop: expected ${iterations} activities (sum ${expected}), got ${times.length} (sum ${sum})`);
    }
    const timeline = measureTimeline(await handle.fetchHistory(), true);
    return { ms, intervals: times.slice(1).map((t, i) => t - times[i]!), cpuMs: (used.user + used.system) / 1000, timeline };
  };
  return {
    runOnce,
  };
}
