/**
 * Runs the real `loopwright` command (`node bin/loopwright.js ...`) as a child process for the
 * end-to-end tests, with an environment that names the test's own Temporal server, task queue and
 * fake model, and nothing inherited that could point it elsewhere.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';

/** The repository's command-line entry point. */
export const BIN = path.resolve(__dirname, '../../bin/loopwright.js');

/** The repository root (the working folder of commands that take repo-relative paths). */
export const REPO_ROOT = path.resolve(__dirname, '../..');

/** What one command invocation did. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit. */
  ms: number;
}

/** A command running in the background. */
export interface RunningCli {
  /** The process, to signal it or write to its standard input (with `stdin: 'pipe'`). */
  child: ChildProcess;
  /** Output captured so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves when the process exits. */
  done: Promise<CliResult>;
  /** Kill it if still running (used only in clean-up). */
  kill(): void;
}

/** Settings the command reads from its environment. */
export interface CliEnv {
  TEMPORAL_ADDRESS: string;
  OPENAI_BASE_URL: string;
  LOOPWRIGHT_TASK_QUEUE: string;
  /** A temp folder, so no command can fall back to the repository's own `.loopwright`. */
  LOOPWRIGHT_STATE_DIR: string;
}

/** The parent's environment without any Temporal, model or Loopwright setting, plus `env`. */
export function cliEnvironment(env: CliEnv): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(TEMPORAL_|OPENAI_|LOOPWRIGHT_)/.test(key)) continue;
    base[key] = value;
  }
  return { ...base, ...env, OPENAI_API_KEY: 'test' };
}

/** Start `loopwright <args>` in the background. */
export function startCli(args: string[], env: NodeJS.ProcessEnv, options: { cwd?: string; timeoutMs?: number; stdin?: 'ignore' | 'pipe' } = {}): RunningCli {
  const started = Date.now();
  const child = spawn(process.execPath, [BIN, ...args], {
    // Not the repository by default, so a relative path never resolves into it by accident.
    cwd: options.cwd ?? os.tmpdir(),
    env,
    stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const timeoutMs = options.timeoutMs ?? 60_000;
  // A hung command must fail its test, not the whole run; the kill shows up as a signal.
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
  });
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    done,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** Run `loopwright <args>` to completion. */
export function runCli(args: string[], env: NodeJS.ProcessEnv, options: { cwd?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return startCli(args, env, options).done;
}

/** One line for a failed expectation: the command, its exit and its output. */
export function describeRun(args: string[], result: CliResult): string {
  return `loopwright ${args.join(' ')} -> exit ${result.code ?? result.signal} in ${result.ms} ms\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}
