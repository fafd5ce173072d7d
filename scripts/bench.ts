/**
 * `npm run bench`: the figures the issues ask for, on this machine.
 *
 *   1. engine overhead per iteration: a scripted 10- and 50-iteration turn through the durable loop
 *      (dev server, worker, real activities) against the same turn in a plain in-process loop, both
 *      against the zero-latency fake model server;
 *   2. the history each durable turn leaves (events, bytes), and its growth when the tool reads a
 *      10 KB file: the baseline for the history-growth problem;
 *   3. bundle runtime: agent initialisation, read_file and execute_workflow on the example bundle.
 *
 * Prints tables, or one JSON object with `--json`. Everything listens on 127.0.0.1 only, stops by
 * itself (a deadline bounds the whole run) and is cleaned up, also on Ctrl-C.
 */
import OpenAI from 'openai';
import { TOOL_DEFINITIONS } from '../activities/tools/definitions';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { startFakeOpenAI } from './fake-openai/server';
import { benchResponder } from './bench/bench-responder';
import { EXAMPLE_AGENT, LARGE_FILE, prepareBenchBundle, SMALL_FILE } from './bench/bench-bundle';
import { measureBundleRuntime } from './bench/bundle-runtime';
import { CleanupStack } from './bench/cleanup-stack';
import { startDurableBench } from './bench/durable-loop';
import { measureEngineOverhead, type EngineBenchInput } from './bench/engine-overhead';
import { formatReport, machineInfo, type BenchReport } from './bench/report';

/** The whole run stops (and cleans up) after this long, whatever happens. */
const DEADLINE_MS = 5 * 60_000;
/** One turn, including a slow 50-iteration one on a loaded machine. */
const TURN_TIMEOUT_MS = 60_000;
/** Model name both loops send (the fake server accepts any). */
const MODEL = 'loopwright-bench-model';
const RUNS = 5;
const WARMUP = 1;

async function main(json: boolean, cleanup: CleanupStack): Promise<void> {
  const started = performance.now();
  const progress = (line: string) => process.stderr.write(`bench: ${line}\n`);
  // Workers log every iteration at INFO; at that level the log itself would be benchmarked. Core's
  // own warnings (payload size limits, which the 10 KB turn reaches) are forwarded to this logger,
  // which writes to stderr: printed to stdout by Core, they would break `--json`.
  Runtime.install({
    logger: new DefaultLogger('WARN', (entry) =>
      process.stderr.write(`bench: ${entry.level.toLowerCase()}: ${entry.message} ${compactMeta(entry.meta)}\n`),
    ),
    telemetryOptions: { logging: { forward: {}, filter: { core: 'WARN', other: 'ERROR' } } },
  });

  const bundle = prepareBenchBundle(cleanup);
  progress('bundle runtime (initializeAgent, read_file, execute_workflow)');
  const { timings, agent } = await measureBundleRuntime(bundle.bundlePath, EXAMPLE_AGENT, {
    initRuns: 200,
    readRuns: 500,
    workflowRuns: 200,
  });

  progress('starting the fake model server, the dev server and a worker');
  const fake = await startFakeOpenAI({ responder: benchResponder });
  cleanup.push('fake model server', () => fake.close());
  const durable = await startDurableBench(
    { bundlePath: bundle.bundlePath, agentId: EXAMPLE_AGENT, modelBaseURL: fake.baseURL, model: MODEL, turnTimeoutMs: TURN_TIMEOUT_MS },
    cleanup,
  );
  const input: EngineBenchInput = {
    durable,
    openai: new OpenAI({ apiKey: 'bench-key', baseURL: fake.baseURL, maxRetries: 0, timeout: TURN_TIMEOUT_MS }),
    model: MODEL,
    systemMessages: agent.messages,
    tools: TOOL_DEFINITIONS,
    context: agent.context,
    progress,
  };

  const engine = [];
  for (const iterations of [10, 50]) {
    engine.push(await measureEngineOverhead(input, { iterations, file: SMALL_FILE, runs: RUNS, warmup: WARMUP }));
    fake.reset(); // forget recorded requests; the responder goes with them
    fake.setResponder(benchResponder);
  }
  const growth = await measureEngineOverhead(input, { iterations: 50, file: LARGE_FILE, runs: 1, warmup: 0 });

  const report: BenchReport = {
    machine: machineInfo(durable.cliPath),
    engine,
    growth,
    bundle: timings,
    totalSeconds: (performance.now() - started) / 1000,
  };
  const files = { smallFileBytes: bundle.smallFileBytes, largeFileBytes: bundle.largeFileBytes };
  process.stdout.write(json ? `${JSON.stringify({ ...report, files }, null, 2)}\n` : `${formatReport(report)}\n`);
}

/** A log entry's fields on one line, without the ones that are always empty here. */
function compactMeta(meta: Record<string, unknown> | undefined): string {
  const fields = Object.entries(meta ?? {}).filter(([key, value]) => value !== undefined && key !== 'sdkComponent');
  return fields.map(([key, value]) => `${key}=${typeof value === 'object' ? JSON.stringify(value) : String(value)}`).join(' ');
}

function run(): void {
  const args = process.argv.slice(2);
  const unknown = args.filter((a) => a !== '--json');
  if (unknown.length > 0) {
    process.stderr.write(`bench: unknown argument ${unknown[0]} (usage: bench.ts [--json])\n`);
    process.exit(2);
  }
  const cleanup = new CleanupStack();
  const finish = async (code: number, message?: string) => {
    if (message) process.stderr.write(`bench: ${message}\n`);
    const failures = await cleanup.run();
    for (const failure of failures) process.stderr.write(`bench: clean-up failed: ${failure}\n`);
    // Open handles of the Temporal runtime would keep the process alive; the work is done.
    process.exit(failures.length > 0 && code === 0 ? 1 : code);
  };
  const deadline = setTimeout(() => void finish(1, `stopped: the run took longer than ${DEADLINE_MS / 1000} s`), DEADLINE_MS);
  process.once('SIGINT', () => void finish(130, 'interrupted'));
  process.once('SIGTERM', () => void finish(143, 'terminated'));
  main(args.includes('--json'), cleanup).then(
    () => {
      clearTimeout(deadline);
      void finish(0);
    },
    (err: unknown) => {
      clearTimeout(deadline);
      void finish(1, err instanceof Error ? (err.stack ?? err.message) : String(err));
    },
  );
}

run();
