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
import { median } from './stats';

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
  return { code, commands: figures, modelMedianMs: modelMs.length ? median(modelMs) : 0 };
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
