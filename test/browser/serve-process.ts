/**
 * `loopwright serve` as a process of its own, for the browser tests and the bench: started on a
 * given port (so a test can kill it mid-turn and start another on the same one) and ready once its
 * API answers.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { BIN } from '../e2e/cli-runner';

/** A `loopwright serve` process. */
export interface ServeProcess {
  readonly url: string;
  output(): string;
  /** Kill it (SIGKILL: a crash, not a shutdown) and wait for the exit. */
  kill(): Promise<void>;
}

/** Start `loopwright serve` on `port` and wait until its API answers. */
export async function startServe(env: NodeJS.ProcessEnv, port: number, timeoutMs = 60_000): Promise<ServeProcess> {
  const child: ChildProcess = spawn(process.execPath, [BIN, 'serve', '--host', '127.0.0.1', '--port', String(port), '--no-worker'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`loopwright serve exited early (${child.exitCode ?? child.signalCode}):\n${output}`);
    const ok = await fetch(`${url}/api/health`).then(
      (res) => res.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() - started > timeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`loopwright serve did not answer within ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    output: () => output,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
