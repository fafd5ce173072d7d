/**
 * The engine part's zero-latency model server in a process of its own, so that the bench process's
 * CPU during a turn is the loop's alone (the durable worker's, or the plain loop's), not the fake
 * server's too. `model-process-main.ts` is the child; this module starts and stops it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { CleanupStack } from './cleanup-stack';
import { sleep } from './pool';
import { processCpuMs } from './proc-stats';

/** The running child. */
export interface ModelProcess {
  baseURL: string;
  /** CPU the child has used so far (ms); undefined where /proc cannot tell. */
  cpuMs(): number | undefined;
}

const MAIN = path.join(__dirname, 'model-process-main.ts');

/** Start the child (ts-node, transpile only) and wait for its base URL; its stop goes onto `cleanup`. */
export async function startModelProcess(cleanup: CleanupStack, timeoutMs = 60_000): Promise<ModelProcess> {
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', MAIN], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output = `${output}${d.toString()}`.slice(-8000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  cleanup.push('model server process', () => stop(child, exited));
  const started = Date.now();
  for (;;) {
    const match = /^listening (\S+)$/m.exec(output);
    if (match) return { baseURL: match[1]!, cpuMs: () => processCpuMs(child.pid!) };
    if (child.exitCode !== null) throw new Error(`model server process exited (${child.exitCode}):\n${output}`);
    if (Date.now() - started > timeoutMs) throw new Error(`model server process did not start within ${timeoutMs} ms:\n${output}`);
    await sleep(20);
  }
}

async function stop(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(5000)]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}
