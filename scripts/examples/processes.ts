/**
 * Child processes of the examples runner: an example program, `loopwright worker`, `loopwright
 * serve`, the web page's server. Output is kept (and shown when something fails); a process can be
 * waited for until it prints a line, run to its end with a deadline, or stopped.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

/** The repository root. */
export const REPO = path.resolve(__dirname, '../..');

/** The repository's `loopwright` command. */
export const BIN = path.join(REPO, 'bin', 'loopwright.js');

/** A running child process and what it printed so far. */
export interface Child {
  readonly process: ChildProcess;
  /** stdout and stderr, interleaved as they arrived. */
  output(): string;
  /** Resolves with the first line that matches, rejects when the process exits first or after `timeoutMs`. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<string>;
  /** Resolves with the exit code (a signal gives null) once the process has exited. */
  readonly exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after 5 s; resolves once it has exited. */
  stop(): Promise<void>;
}

/** Start `command args` with `env` (nothing else of this process's environment is added). */
export function start(command: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string }): Child {
  const child = spawn(command, args, { cwd: options.cwd ?? REPO, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer): void => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<number | null>((resolve) => {
    child.once('error', (error) => {
      output += `\n${error.message}\n`;
      resolve(null);
    });
    child.once('close', (code) => resolve(code));
  });
  let ended = false;
  void exited.then(() => {
    ended = true;
    for (const listener of listeners) listener();
  });
  return {
    process: child,
    output: () => output,
    exited,
    waitForLine: (pattern, timeoutMs) =>
      new Promise<string>((resolve, reject) => {
        const check = (): void => {
          const line = output.split('\n').find((l) => pattern.test(l));
          if (line !== undefined) done(() => resolve(line));
          else if (ended) done(() => reject(new Error(`exited before printing ${pattern}`)));
        };
        const timer = setTimeout(() => done(() => reject(new Error(`printed nothing matching ${pattern} within ${timeoutMs / 1000} s`))), timeoutMs);
        const done = (settle: () => void): void => {
          clearTimeout(timer);
          listeners.delete(check);
          settle();
        };
        listeners.add(check);
        check();
      }),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Run an example program (TypeScript, through ts-node) to its end; rejects with its output when it fails or outlives `timeoutMs`. */
export async function runProgram(file: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<string> {
  const child = start(process.execPath, ['-r', 'ts-node/register/transpile-only', file, ...args], { env: { ...env, TS_NODE_PROJECT: path.join(REPO, 'examples', 'tsconfig.json') } });
  const timer = setTimeout(() => child.process.kill('SIGKILL'), timeoutMs);
  const code = await child.exited;
  clearTimeout(timer);
  if (code !== 0) throw new Error(`${path.relative(REPO, file)} ${code === null ? `was killed after ${timeoutMs / 1000} s` : `exited with status ${code}`}:\n${child.output()}`);
  return child.output();
}

/** A program of the examples started in the background (a server), through ts-node. */
export function startProgram(file: string, env: NodeJS.ProcessEnv): Child {
  return start(process.execPath, ['-r', 'ts-node/register/transpile-only', file], { env: { ...env, TS_NODE_PROJECT: path.join(REPO, 'examples', 'tsconfig.json') } });
}
