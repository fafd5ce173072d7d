/**
 * Start-up of the `loopwright` command as a user meets it: `--help` (no server), and `status` and
 * `send` of a one-iteration turn against a warm server, with a worker already polling in another
 * process and the zero-latency fake model. Each command runs as a fresh `node bin/loopwright.js`
 * process, so its figure includes loading the code (compiled `dist/` when built, ts-node otherwise)
 * and connecting; the bench reports which of the two ran.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { LoopwrightClient } from '../../client/session-client';
import type { BenchServer } from './bench-server';
import { benchTurnMessage } from './bench-responder';
import { median, summarize, type SampleSummary } from './stats';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const BIN = path.join(ROOT, 'bin', 'loopwright.js');

/** What the bench measured for one command. */
export interface StartupCommandFigures {
  command: string;
  runs: number;
  medianSeconds: number;
  minSeconds: number;
  maxSeconds: number;
}

/** The start-up part of the report. */
export interface StartupFigures {
  /** `dist` when the command ran compiled code, `ts-node` when it compiled TypeScript on the fly. */
  code: 'dist' | 'ts-node';
  commands: StartupCommandFigures[];
  /** Median time the model took per call during the `send` runs (the fake model's own latency). */
  modelMedianMs: number;
  /** A one-shot 10-iteration session: `loopwright run --once` as a fresh process against the client API in this process. */
  oneShot: { iterations: number; runs: number; cli: SampleSummary; api: SampleSummary; ratio: number };
}

export interface StartupInput {
  server: BenchServer;
  taskQueue: string;
  bundlePath: string;
  agentId: string;
  file: string;
  runs: number;
  progress: (line: string) => void;
}

/** Time `--help`, `status` and `send` (one iteration) `runs` times each, after one warm-up run. */
export async function measureStartup(input: StartupInput): Promise<StartupFigures> {
  const code = fs.existsSync(path.join(ROOT, 'dist', 'client', 'cli.js')) ? 'dist' : 'ts-node';
  const loopwright = new LoopwrightClient(input.server.client, input.taskQueue);
  const session = await loopwright.start({ bundlePath: input.bundlePath, agentId: input.agentId, maxIterations: 5 });
  const env = { ...process.env, TEMPORAL_ADDRESS: input.server.address, LOOPWRIGHT_TASK_QUEUE: input.taskQueue, NO_COLOR: '1' };
  const message = benchTurnMessage(1, input.file);
  const commands: Array<{ label: string; args: string[] }> = [
    { label: 'loopwright --help', args: ['--help'] },
    { label: 'loopwright status <id>', args: ['status', session.workflowId] },
    { label: 'loopwright send <id> (1 iteration)', args: ['send', session.workflowId, message] },
  ];
  const figures: StartupCommandFigures[] = [];
  for (const { label, args } of commands) {
    input.progress(`startup: ${label} x ${input.runs}`);
    const times: number[] = [];
    for (let i = 0; i <= input.runs; i++) {
      const started = performance.now();
      await run(process.execPath, [BIN, ...args], { env, cwd: ROOT, timeout: 60_000 });
      if (i > 0) times.push((performance.now() - started) / 1000);
    }
    figures.push({ command: label, runs: times.length, medianSeconds: median(times), minSeconds: Math.min(...times), maxSeconds: Math.max(...times) });
  }
  const modelMs = await modelCallTimes(loopwright, session.workflowId);
  await session.end();
  const oneShot = await measureOneShot(input, loopwright, env);
  return { code, commands: figures, modelMedianMs: modelMs.length ? median(modelMs) : 0, oneShot };
}

/** Turns of the one-shot comparison. */
const ONE_SHOT_ITERATIONS = 10;

/**
 * The same one-shot session both ways, alternating, after one warm-up each: `loopwright run <bundle>
 * <agent> <message> --once --json` as a fresh process (start-up, bundle check, connection, the
 * session, its reply), and `start` with the message and `result()` through the client API in this
 * process, connected already. Both are served by the worker already polling.
 */
async function measureOneShot(input: StartupInput, loopwright: LoopwrightClient, env: NodeJS.ProcessEnv): Promise<StartupFigures['oneShot']> {
  const message = benchTurnMessage(ONE_SHOT_ITERATIONS, input.file);
  const cli: number[] = [];
  const api: number[] = [];
  input.progress(`startup: run --once against the client API, ${ONE_SHOT_ITERATIONS} iterations x ${input.runs}`);
  for (let i = 0; i <= input.runs; i++) {
    let started = performance.now();
    const { stdout } = await run(process.execPath, [BIN, 'run', input.bundlePath, input.agentId, message, '--once', '--json', '--max-iterations', String(ONE_SHOT_ITERATIONS)], {
      env,
      cwd: ROOT,
      timeout: 60_000,
    });
    const cliMs = performance.now() - started;
    expectTurn('run --once', JSON.parse(stdout.trim().split('\n').pop()!) as { success?: boolean; iterations?: number });

    started = performance.now();
    const session = await loopwright.start({ bundlePath: input.bundlePath, agentId: input.agentId, maxIterations: ONE_SHOT_ITERATIONS, firstMessage: message, oneShot: true });
    const result = await session.result();
    const apiMs = performance.now() - started;
    expectTurn('client API', result.lastTurn ?? {});
    if (i === 0) continue;
    cli.push(cliMs);
    api.push(apiMs);
  }
  return { iterations: ONE_SHOT_ITERATIONS, runs: cli.length, cli: summarize(cli), api: summarize(api), ratio: median(cli) / median(api) };
}

/** A one-shot turn that did not run all its iterations would make the comparison meaningless. */
function expectTurn(what: string, turn: { success?: boolean; iterations?: number }): void {
  if (turn.success !== true || turn.iterations !== ONE_SHOT_ITERATIONS) {
    throw new Error(`${what}: expected a successful turn of ${ONE_SHOT_ITERATIONS} iterations, got ${JSON.stringify(turn)}`);
  }
}

/** How long each model-call activity of the session took, from scheduled to completed (ms). */
async function modelCallTimes(loopwright: LoopwrightClient, workflowId: string): Promise<number[]> {
  const history = await loopwright.client.workflow.getHandle(workflowId).fetchHistory();
  const scheduled = new Map<string, number>();
  const out: number[] = [];
  for (const event of history.events ?? []) {
    const at = Number(event.eventTime?.seconds ?? 0) * 1000 + Math.floor((event.eventTime?.nanos ?? 0) / 1e6);
    const s = event.activityTaskScheduledEventAttributes;
    if (s && /callModel/.test(s.activityType?.name ?? '')) scheduled.set(String(event.eventId), at);
    const c = event.activityTaskCompletedEventAttributes;
    if (c && scheduled.has(String(c.scheduledEventId))) out.push(at - scheduled.get(String(c.scheduledEventId))!);
  }
  return out;
}
