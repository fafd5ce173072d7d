import { spawn } from 'node:child_process';

/** Outcome of a finished child process, with everything it printed. */
export interface CapturedRun {
  /** Exit code, or null when a signal ended it. */
  code: number | null;
  /** The signal that ended it, if any (a timeout ends it with SIGKILL). */
  signal: NodeJS.Signals | null;
  /** stdout and stderr interleaved as they arrived. */
  output: string;
  /** True when the run was ended for exceeding its time limit. */
  timedOut: boolean;
}

/**
 * Runs a command to completion with a time limit, capturing its output instead of printing it,
 * so that installers stay quiet on success and can quote the output on failure.
 */
export function runCaptured(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs: number },
): Promise<CapturedRun> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let timedOut = false;
    const child = spawn(command, args, {
      env: options.env,
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', (error) => {
      // Spawn failures (ENOENT, EACCES) arrive here instead of as an exit code.
      clearTimeout(timer);
      resolve({ code: null, signal: null, output: `${error.message}\n`, timedOut });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output: Buffer.concat(chunks).toString('utf8'), timedOut });
    });
  });
}

/** Last `lines` non-empty lines of a text, for error messages. */
export function tail(text: string, lines = 20): string {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(-lines)
    .join('\n');
}
