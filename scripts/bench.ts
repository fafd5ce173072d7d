/**
 * `npm run bench`: the figures the issues ask for, on this machine. Eight parts, all on one dev
 * server (in memory, 127.0.0.1), run in this order; `--only <part>[,<part>]` runs some of them:
 *
 *   engine       engine overhead per iteration: a scripted 10- and 50-iteration turn through the
 *                durable loop (worker in this process, real activities) against the same turn in a
 *                plain in-process loop and against a bare one-activity workflow loop, all against
 *                the zero-latency fake model server; plus bundle runtime timings (agent
 *                initialisation, read_file, execute_workflow on the example bundle);
 *   history      the history one durable turn leaves (10 and 50 iterations, small and 10 KB reads)
 *                and its size against the session's transcript;
 *   context      a 100-turn session reading a 10 KB file per turn, over an 8,192-token window with
 *                compaction and over a window it never reaches: prompt tokens per turn, the largest
 *                prompt against the window, compactions and what their summaries cost;
 *   cache        the provider's prompt cache: a 25-turn session reading 12 KB per turn, worker in
 *                this process, `anthropic:` against the tests' caching Messages fake with a window
 *                that makes it compact about twice: the share of prompt tokens read from the cache
 *                from turn 3, its cost against the same calls priced without the cache (breakpoints
 *                cannot be switched off), each compaction's recorded cache cost; then the same
 *                session with `responses:` against the Responses fake (scripts/bench/prompt-cache.ts).
 *                On 2026-11-27 (2 cores): 91.6 % read from the cache from turn 3, cost 20.8 % of the
 *                same calls uncached, compactions in turns 12 and 21 costing 36,168 and 33,204
 *                cached tokens (responses: 91.5 %, 19.2 %);
 *   concurrency  10, 100 and 1,000 sessions at once against a model with 200 ms per call, served by
 *                one worker in a child process: wall time, throughput, worker CPU and memory;
 *   idle         10,000 (`--idle-sessions`) initialised sessions waiting for a message on one
 *                worker in a child process (with its default cache, or `--idle-cache N`): its
 *                memory, and its CPU at rest. Takes several minutes on two cores; the report says how long;
 *   startup      `loopwright --help`, `status` and `send` (one iteration) as fresh processes against
 *                the warm server, with a worker polling in a child process;
 *   mcp          echo calls to server-everything over stdio, through one SDK client and through the
 *                worker's MCP pool, without Temporal (scripts/bench/mcp.ts); then inside sessions:
 *                20-iteration turns calling a custom `echo` tool against ones calling the MCP
 *                `everything__echo`, worker in this process (scripts/bench/mcp-session.ts);
 *   stream       live output (scripts/bench/stream.ts): a reader's first character of a streamed reply,
 *                and the history and CPU of streamed one-reply turns against unstreamed ones.
 *   batch        a batch (agentBatch) of 1,000 one-shot sessions of one zero-latency model call each, on
 *                one and then two worker processes: sessions per second, worker and server CPU per
 *                session (scripts/bench/batch.ts).
 *   delegation   a child session per delegated task (delegate_task), and per subagent (run_subagent,
 *                one after another and all in one reply), against the same work in the parent:
 *                time and history per task (scripts/bench/delegation.ts).
 *   browser      the chat app in headless Debian chromium against `loopwright serve` (a process of its
 *                own): first reply text in the page after the model server sends it (scripts/bench/browser.ts).
 *   serve        `loopwright serve`'s event streams (a process of its own): events per second to 100
 *                clients of one session, live and resuming, and its RSS with 1,000 open streams
 *                (scripts/bench/serve.ts).
 *                Skipped, saying so, where no chromium is installed.
 *   eval         a recorded 10-turn session replayed by an eval against the same turns run live: the
 *                eval's cost per recorded turn, its fixed cost per recording (scripts/bench/eval.ts).
 *   skills       Agent Skills discovery of 50 generated skills and the catalog's tokens against every
 *                SKILL.md body up front (scripts/bench/skills.ts). Needs no server: it runs first,
 *                and `--only skills` starts none.
 *   sandbox      a command's start-up cost in the bubblewrap sandbox (`true` through runSandboxed)
 *                against spawning it directly, the secret-file scan alone, and a PEP 723 script by
 *                `uv run` in the sandbox against `python3` directly (scripts/bench/sandbox.ts).
 *                Needs no server either, and bwrap and uv (`npm run setup`).
 *   cluster      (only with `--only cluster`: it brings up servers of its own and takes 30-35 minutes)
 *                10,000 idle and 1,000 active sessions across 4 worker processes, on the PostgreSQL-backed
 *                cluster of scripts/cluster and then on a file-backed dev server: sessions started per
 *                second, CPU at rest, turns per second, turn latency p50/p99 at a 200 ms model, worker
 *                and server CPU per iteration, database growth per session (scripts/bench/cluster-scale.ts).
 *                Needs the cluster's server built (scripts/setup-cluster.sh).
 *
 * Prints tables, or one JSON object with `--json`. Everything listens on 127.0.0.1 only, stops by
 * itself (a deadline bounds the whole run) and is cleaned up, also on Ctrl-C.
 */
import OpenAI from 'openai';
import { parseArgs } from 'node:util';
import { TOOL_DEFINITIONS } from '../common/tool-definitions';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { startFakeOpenAI, type FakeOpenAI } from '../fake-model/server';
import { startBareBench } from './bench/bare-loop';
import { benchResponder, delayedBenchResponder } from './bench/bench-responder';
import { EXAMPLE_AGENT, LARGE_FILE, prepareBenchBundle, SMALL_FILE } from './bench/bench-bundle';
import { startBenchServer } from './bench/bench-server';
import { startModelProcess } from './bench/model-process';
import { measureBundleRuntime } from './bench/bundle-runtime';
import { CleanupStack } from './bench/cleanup-stack';
import { measureConcurrency } from './bench/concurrency';
import { measureContextWindow } from './bench/context-window';
import { startDurableBench, type DurableBench } from './bench/durable-loop';
import { measureEngineOverhead, type EngineBenchInput } from './bench/engine-overhead';
import { measureHistoryTurns } from './bench/history-turns';
import { measureIdleSessions } from './bench/idle-sessions';
import { formatReport, machineInfo, PARTS, type BenchPart, type BenchReport } from './bench/report';
import { measureStartup } from './bench/startup';
import { measureMcpOverhead } from './bench/mcp';
import { measureMcpSession } from './bench/mcp-session';
import { measureStream } from './bench/stream';
import { measureBatch } from './bench/batch';
import { measureBatchKill } from './bench/batch-kill';
import { measureBrowser } from './bench/browser';
import { measureServe } from './bench/serve';
import { measureDelegation } from './bench/delegation';
import { measureEval } from './bench/eval';
import { formatSkills, measureSkills, type SkillsFigures } from './bench/skills';
import { formatSandbox, measureSandbox, type SandboxFigures } from './bench/sandbox';
import { measurePromptCache } from './bench/prompt-cache';
import { startWorkerProcess } from './bench/worker-process';
import { formatClusterScale, measureClusterScale, type ClusterScaleFigures } from './bench/cluster-scale';

/** The whole run stops (and cleans up) after this long, whatever happens. */
const DEADLINE_MS = 25 * 60_000;
/** One turn, including a slow 50-iteration one on a loaded machine. */
const TURN_TIMEOUT_MS = 60_000;
/** Model name both loops send (the fake server accepts any). */
const MODEL = 'loopwright-bench-model';
const RUNS = 5;
/** Start-up part: runs of each command. */
const STARTUP_RUNS = 5;
const WARMUP = 1;

/** Concurrency part: sessions at once per level, model calls per turn and latency per call. */
const CONCURRENCY_LEVELS = [10, 100, 1000];
const CONCURRENCY_ITERATIONS = 5;
const MODEL_LATENCY_MS = 200;
const CONCURRENCY_WARMUP_SESSIONS = 10;
/** Sessions being started at once (concurrency and idle parts). */
const START_PARALLELISM = 50;
/** Settings for the child workers; the worker honours them (or will soon): the report shows what was asked. */
const WORKER_SLOTS_ENV = { LOOPWRIGHT_ACTIVITY_SLOTS: '2000', LOOPWRIGHT_MAX_CACHED_SESSIONS: '2000' };

/** Idle part defaults. */
const IDLE_SESSIONS = 10_000;
const IDLE_REST_SECONDS = 30;
const IDLE_STATE_SAMPLE = 20;
/**
 * The idle worker runs with the worker's default cache (LOOPWRIGHT_MAX_CACHED_SESSIONS, 1,000) unless
 * `--idle-cache` names one. A cached session costs the worker about 0.4 MB, so caching all 10,000
 * would not fit the default V8 heap; evicted sessions are replayed when they next get a message.
 */
const IDLE_CACHED_SESSIONS = 0;

/** The skills part: outside PARTS, since it needs no dev server (the other parts share one). */
const SKILLS_PART = 'skills';
/** The sandbox part: outside PARTS too, no dev server. */
const SANDBOX_PART = 'sandbox';
/** The cluster part: outside PARTS, with servers of its own; only when asked for by name. */
const CLUSTER_PART = 'cluster';
/** The cluster part's own bound: two servers, 11,000 sessions each, on two cores. */
const CLUSTER_DEADLINE_MS = 120 * 60_000;

interface Options {
  json: boolean;
  parts: BenchPart[];
  skills: boolean;
  sandbox: boolean;
  cluster: boolean;
  clusterIdle: number;
  clusterActive: number;
  levels: number[];
  idleSessions: number;
  idleSeconds: number;
  idleCache: number;
}

async function main(options: Options, cleanup: CleanupStack): Promise<void> {
  const started = performance.now();
  const progress = (line: string) => process.stderr.write(`bench: ${line}\n`);
  // Workers log every iteration at INFO; at that level the log itself would be benchmarked. Core's
  // own warnings (payload size limits, which the 10 KB turn reaches) are forwarded to this logger,
  // which writes to stderr: printed to stdout by Core, they would break `--json`.
  Runtime.install({
    logger: new DefaultLogger('WARN', (entry) => process.stderr.write(`bench: ${entry.level.toLowerCase()}: ${entry.message} ${compactMeta(entry.meta)}\n`)),
    telemetryOptions: { logging: { forward: {}, filter: { core: 'WARN', other: 'ERROR' } } },
  });

  let skills: SkillsFigures | undefined;
  if (options.skills) {
    const partStarted = performance.now();
    skills = await measureSkills({ progress });
    progress(`skills took ${((performance.now() - partStarted) / 1000).toFixed(1)} s`);
  }
  let sandbox: SandboxFigures | undefined;
  if (options.sandbox) {
    const partStarted = performance.now();
    sandbox = await measureSandbox({ progress });
    progress(`sandbox took ${((performance.now() - partStarted) / 1000).toFixed(1)} s`);
  }
  let cluster: ClusterScaleFigures | undefined;
  if (options.cluster) {
    const partStarted = performance.now();
    const bundle = prepareBenchBundle(cleanup);
    cluster = await measureClusterScale(
      {
        bundlePath: bundle.bundlePath,
        agentId: EXAMPLE_AGENT,
        file: SMALL_FILE,
        model: MODEL,
        idleSessions: options.clusterIdle,
        activeSessions: options.clusterActive,
        workers: 4,
        iterations: 3,
        modelLatencyMs: MODEL_LATENCY_MS,
        restSeconds: IDLE_REST_SECONDS,
        startParallelism: START_PARALLELISM,
        progress,
      },
      cleanup,
    );
    progress(`cluster took ${((performance.now() - partStarted) / 1000).toFixed(1)} s`);
  }
  const serverless = { ...(skills ? { skills } : {}), ...(sandbox ? { sandbox } : {}), ...(cluster ? { cluster } : {}) };
  const serverlessText = [skills ? formatSkills(skills) : '', sandbox ? formatSandbox(sandbox) : '', cluster ? formatClusterScale(cluster) : ''].filter(Boolean).join('\n\n');
  if (options.parts.length === 0) {
    process.stdout.write(options.json ? `${JSON.stringify(serverless, null, 2)}\n` : `${serverlessText}\n`);
    return;
  }

  const bundle = prepareBenchBundle(cleanup);
  const wants = (part: BenchPart) => options.parts.includes(part);
  progress(`starting the dev server (parts: ${options.parts.join(', ')})`);
  const server = await startBenchServer(cleanup);
  const report: BenchReport = { machine: machineInfo(server.cliPath), parts: options.parts, partSeconds: {}, totalSeconds: 0 };
  const timed = async (part: BenchPart, fn: () => Promise<void>) => {
    if (!wants(part)) return;
    const partStarted = performance.now();
    await fn();
    report.partSeconds[part] = (performance.now() - partStarted) / 1000;
  };

  // The zero-latency model and the in-process Loopwright worker serve the engine and history parts.
  let fast: { fake: FakeOpenAI; durable: DurableBench } | undefined;
  const fastSide = async () => {
    if (fast) return fast;
    const fake = await startFakeOpenAI({ responder: benchResponder });
    cleanup.push('fake model server', () => fake.close());
    progress('starting a Loopwright worker in this process');
    const durable = await startDurableBench({ bundlePath: bundle.bundlePath, agentId: EXAMPLE_AGENT, modelBaseURL: fake.baseURL, model: MODEL, turnTimeoutMs: TURN_TIMEOUT_MS }, server, cleanup);
    return (fast = { fake, durable });
  };

  await timed('engine', async () => {
    progress('bundle runtime (initializeAgent, read_file, execute_workflow)');
    const { timings, agent } = await measureBundleRuntime(bundle.bundlePath, EXAMPLE_AGENT, { initRuns: 200, readRuns: 500, workflowRuns: 200 });
    report.bundle = timings;
    // The model server runs in a process of its own here, so this process's CPU is the loop's alone.
    progress('starting the model server in a process of its own');
    const model = await startModelProcess(cleanup);
    progress('starting a Loopwright worker in this process');
    const durable = await startDurableBench(
      { bundlePath: bundle.bundlePath, agentId: EXAMPLE_AGENT, modelBaseURL: model.baseURL, model: MODEL, turnTimeoutMs: TURN_TIMEOUT_MS, taskQueue: `loopwright-bench-engine-${process.pid}` },
      server,
      cleanup,
    );
    progress('starting the bare-loop worker in this process');
    const bare = await startBareBench(server, cleanup);
    const input: EngineBenchInput = {
      durable,
      bare,
      openai: new OpenAI({ apiKey: 'bench-key', baseURL: model.baseURL, maxRetries: 0, timeout: TURN_TIMEOUT_MS }),
      modelServerCpuMs: model.cpuMs,
      model: MODEL,
      systemMessages: agent.messages,
      tools: TOOL_DEFINITIONS,
      context: agent.context,
      progress,
    };
    report.engine = [];
    for (const iterations of [10, 50]) {
      report.engine.push(await measureEngineOverhead(input, { iterations, file: SMALL_FILE, runs: RUNS, warmup: WARMUP }));
    }
  });

  await timed('history', async () => {
    const { fake, durable } = await fastSide();
    const shapes = [10, 50].flatMap((iterations) => [SMALL_FILE, LARGE_FILE].map((file) => ({ iterations, file })));
    report.history = await measureHistoryTurns(durable, shapes, progress);
    resetFake(fake);
  });

  await timed('context', async () => {
    report.context = await measureContextWindow(server, bundle.bundlePath, EXAMPLE_AGENT, LARGE_FILE, cleanup, progress);
  });

  await timed('cache', async () => {
    report.cache = await measurePromptCache({ server, bundlePath: bundle.bundlePath, agentId: EXAMPLE_AGENT, progress }, cleanup);
  });

  await timed('concurrency', async () => {
    const slow = await startFakeOpenAI({ responder: delayedBenchResponder(MODEL_LATENCY_MS) });
    cleanup.push('slow fake model server', () => slow.close());
    const taskQueue = `loopwright-bench-concurrency-${process.pid}`;
    progress('concurrency: starting a worker process');
    const worker = await startWorkerProcess({ temporalAddress: server.address, taskQueue, modelBaseURL: slow.baseURL, model: MODEL, env: WORKER_SLOTS_ENV }, cleanup);
    const rssAtStart = worker.memory().rssBytes;
    report.concurrency = await measureConcurrency(
      {
        server,
        worker,
        taskQueue,
        bundlePath: bundle.bundlePath,
        agentId: EXAMPLE_AGENT,
        file: SMALL_FILE,
        iterations: CONCURRENCY_ITERATIONS,
        modelLatencyMs: MODEL_LATENCY_MS,
        startParallelism: START_PARALLELISM,
        // Recorded requests would pile up over thousands of calls; nothing here reads them.
        beforeLevel: () => resetFake(slow, delayedBenchResponder(MODEL_LATENCY_MS)),
        progress,
      },
      options.levels,
      CONCURRENCY_WARMUP_SESSIONS,
      rssAtStart,
    );
    await worker.stop();
  });

  await timed('idle', async () => {
    // Idle sessions make no model calls; the worker still needs a model setting to start.
    const fake = fast?.fake ?? (await startIdleFake(cleanup));
    const taskQueue = `loopwright-bench-idle-${process.pid}`;
    progress('idle: starting a worker process');
    const worker = await startWorkerProcess(
      {
        temporalAddress: server.address,
        taskQueue,
        modelBaseURL: fake.baseURL,
        model: MODEL,
        env: options.idleCache > 0 ? { LOOPWRIGHT_MAX_CACHED_SESSIONS: String(options.idleCache) } : {},
      },
      cleanup,
    );
    const rssAtStart = worker.memory().rssBytes;
    report.idle = await measureIdleSessions(
      {
        server,
        worker,
        taskQueue,
        bundlePath: bundle.bundlePath,
        agentId: EXAMPLE_AGENT,
        sessions: options.idleSessions,
        startParallelism: START_PARALLELISM,
        restSeconds: options.idleSeconds,
        stateSample: IDLE_STATE_SAMPLE,
        progress,
      },
      rssAtStart,
    );
    // The sessions are left waiting: the in-memory dev server goes away at clean-up, with them.
    await worker.stop();
  });

  await timed('startup', async () => {
    const fake = fast?.fake ?? (await startIdleFake(cleanup));
    const taskQueue = `loopwright-bench-startup-${process.pid}`;
    progress('startup: starting a worker process');
    const worker = await startWorkerProcess({ temporalAddress: server.address, taskQueue, modelBaseURL: fake.baseURL, model: MODEL, env: {} }, cleanup);
    report.startup = await measureStartup({
      server,
      taskQueue,
      bundlePath: bundle.bundlePath,
      agentId: EXAMPLE_AGENT,
      file: SMALL_FILE,
      runs: STARTUP_RUNS,
      progress,
    });
    await worker.stop();
  });

  await timed('mcp', async () => {
    const pool = await measureMcpOverhead({ progress });
    const mcpSession = { server, bundlePath: bundle.bundlePath, agentId: EXAMPLE_AGENT, model: MODEL, turnTimeoutMs: TURN_TIMEOUT_MS, progress };
    report.mcp = { ...pool, session: await measureMcpSession(mcpSession, cleanup) };
  });

  await timed('stream', async () => {
    const streamOptions = { server, bundlePath: bundle.bundlePath, agentId: EXAMPLE_AGENT, model: MODEL, turnTimeoutMs: TURN_TIMEOUT_MS, progress };
    report.stream = await measureStream(streamOptions, cleanup);
  });

  await timed('delegation', async () => {
    report.delegation = await measureDelegation({ server, model: MODEL, turnTimeoutMs: TURN_TIMEOUT_MS, progress }, cleanup);
  });

  await timed('batch', async () => {
    const batchOptions = { server, bundlePath: bundle.bundlePath, agentId: EXAMPLE_AGENT, model: MODEL, progress };
    report.batch = { ...(await measureBatch(batchOptions, cleanup)), kill: await measureBatchKill(batchOptions, cleanup) };
  });

  await timed('browser', async () => {
    report.browser = await measureBrowser({ server, bundlePath: bundle.bundlePath, agentId: EXAMPLE_AGENT, model: MODEL, turnTimeoutMs: TURN_TIMEOUT_MS, progress }, cleanup);
  });

  await timed('serve', async () => {
    report.serve = await measureServe({ server, bundlePath: bundle.bundlePath, agentId: EXAMPLE_AGENT, file: SMALL_FILE, model: MODEL, turnTimeoutMs: TURN_TIMEOUT_MS, progress }, cleanup);
  });

  await timed('eval', async () => {
    report.eval = await measureEval({ server, model: MODEL, turnTimeoutMs: TURN_TIMEOUT_MS, progress }, cleanup);
  });

  report.totalSeconds = (performance.now() - started) / 1000;
  const files = { smallFileBytes: bundle.smallFileBytes, largeFileBytes: bundle.largeFileBytes };
  const serverlessBlock = serverlessText ? `\n\n${serverlessText}` : '';
  process.stdout.write(options.json ? `${JSON.stringify({ ...report, files, ...serverless }, null, 2)}\n` : `${formatReport(report)}${serverlessBlock}\n`);
}

/** Forget the recorded requests (the responder goes with them, so it is set again). */
function resetFake(fake: FakeOpenAI, responder = benchResponder): void {
  fake.reset();
  fake.setResponder(responder);
}

async function startIdleFake(cleanup: CleanupStack): Promise<FakeOpenAI> {
  const fake = await startFakeOpenAI({ responder: benchResponder });
  cleanup.push('fake model server', () => fake.close());
  return fake;
}

/** A log entry's fields on one line, without the ones that are always empty here. */
function compactMeta(meta: Record<string, unknown> | undefined): string {
  const fields = Object.entries(meta ?? {}).filter(([key, value]) => value !== undefined && key !== 'sdkComponent');
  return fields.map(([key, value]) => `${key}=${typeof value === 'object' ? JSON.stringify(value) : String(value)}`).join(' ');
}

const USAGE =
  `usage: bench.ts [--json] [--only ${[...PARTS, SKILLS_PART, SANDBOX_PART, CLUSTER_PART].join('|')}[,...]] [--levels 10,100,1000]` +
  ' [--idle-sessions 10000] [--idle-seconds 30] [--idle-cache N (default: the worker sizing)] [--cluster-idle 10000] [--cluster-active 1000]';

/** Parse the command line; exits with status 2 and the usage on anything unexpected. */
function parseOptions(argv: string[]): Options {
  const fail = (message: string): never => {
    process.stderr.write(`bench: ${message}\n${USAGE}\n`);
    process.exit(2);
  };
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        json: { type: 'boolean', default: false },
        only: { type: 'string', multiple: true },
        levels: { type: 'string' },
        'idle-sessions': { type: 'string' },
        'idle-seconds': { type: 'string' },
        'idle-cache': { type: 'string' },
        'cluster-idle': { type: 'string' },
        'cluster-active': { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    return fail(err instanceof Error ? err.message : String(err));
  }
  const only = (values.only ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  for (const part of only) if (!(PARTS as readonly string[]).includes(part) && part !== SKILLS_PART && part !== SANDBOX_PART && part !== CLUSTER_PART) fail(`unknown part ${part}`);
  const count = (name: string, raw: string | undefined, fallback: number, min: number) => {
    if (raw === undefined) return fallback;
    const value = Number(raw);
    return Number.isInteger(value) && value >= min ? value : fail(`--${name} must be a whole number >= ${min}, got "${raw}"`);
  };
  const levels = values.levels === undefined ? CONCURRENCY_LEVELS : values.levels.split(',').map((v) => count('levels', v, 0, 1));
  return {
    json: values.json ?? false,
    parts: only.length === 0 ? [...PARTS] : PARTS.filter((p) => only.includes(p)),
    skills: only.length === 0 || only.includes(SKILLS_PART),
    sandbox: only.length === 0 || only.includes(SANDBOX_PART),
    cluster: only.includes(CLUSTER_PART),
    clusterIdle: count('cluster-idle', values['cluster-idle'], IDLE_SESSIONS, 0),
    clusterActive: count('cluster-active', values['cluster-active'], 1000, 1),
    levels,
    idleSessions: count('idle-sessions', values['idle-sessions'], IDLE_SESSIONS, 1),
    idleSeconds: count('idle-seconds', values['idle-seconds'], IDLE_REST_SECONDS, 1),
    idleCache: count('idle-cache', values['idle-cache'], IDLE_CACHED_SESSIONS, 0),
  };
}

function run(): void {
  const options = parseOptions(process.argv.slice(2));
  const cleanup = new CleanupStack();
  const finish = async (code: number, message?: string) => {
    if (message) process.stderr.write(`bench: ${message}\n`);
    const failures = await cleanup.run();
    for (const failure of failures) process.stderr.write(`bench: clean-up failed: ${failure}\n`);
    // Open handles of the Temporal runtime would keep the process alive; the work is done.
    process.exit(failures.length > 0 && code === 0 ? 1 : code);
  };
  const deadlineMs = options.cluster ? DEADLINE_MS + CLUSTER_DEADLINE_MS : DEADLINE_MS;
  const deadline = setTimeout(() => void finish(1, `stopped: the run took longer than ${deadlineMs / 1000} s`), deadlineMs);
  process.once('SIGINT', () => void finish(130, 'interrupted'));
  process.once('SIGTERM', () => void finish(143, 'terminated'));
  main(options, cleanup).then(
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
