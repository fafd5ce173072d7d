/**
 * uv, which runs the PEP 723 scripts BMAD skills ship (`uv run {project-root}/_bmad/scripts/x.py`),
 * offered to sandboxed commands: where the worker finds it, and the environment it runs with.
 *
 * - Found in the tools folder (`<tools>/venv/bin/uv`, installed from PyPI at `UV_VERSION` by
 *   `npm run setup`; LOOPWRIGHT_TOOLS_DIR moves the folder), else on the worker's PATH. It is looked
 *   up for every command (a few `stat`s), so installing it needs no restart of the worker.
 * - It runs the machine's Python (the `python3` of the sandbox's PATH: `/usr/local/bin`, `/usr/bin`)
 *   and never downloads one; offline unless the session lets commands reach the network; with no
 *   configuration file read (the user's `~/.config/uv`, a project's `uv.toml` or `[tool.uv]`); its
 *   cache in the command's private HOME (`/tmp/home/.cache/uv`, gone when the command ends), so no
 *   command can leave a poisoned environment behind for the next one. A script with no
 *   dependencies runs; one whose dependencies are not in that (empty) cache fails offline with
 *   uv's own message naming the package.
 */
import { constants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { defaultToolsDir } from '../project-paths';
import { BASE_ENV } from './sandbox-env';
import type { SandboxTool } from './sandbox-tools';

/** The PyPI package that ships uv. */
export const UV_PACKAGE = 'uv';
/** The version set-up installs into the tools folder (the newest on PyPI when it was pinned). */
export const UV_VERSION = '0.13.9';

/** A uv the worker found: the binary, `uvx` beside it when there is one, and where it came from. */
export interface UvLocation {
  path: string;
  uvx?: string;
  source: 'tools' | 'path';
}

/** `uv` in the tools folder's venv. */
export function uvInToolsFolder(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(defaultToolsDir(env), 'venv', 'bin', 'uv');
}

/** The worker's uv: the tools folder's, else the first on the worker's PATH; binaries only (a shim script, such as pyenv's, would not run inside the sandbox). */
export async function findUv(env: NodeJS.ProcessEnv = process.env): Promise<UvLocation | undefined> {
  const candidates: { file: string; source: UvLocation['source'] }[] = [{ file: uvInToolsFolder(env), source: 'tools' }];
  for (const dir of (env.PATH ?? '').split(path.delimiter)) if (path.isAbsolute(dir)) candidates.push({ file: path.join(dir, 'uv'), source: 'path' });
  for (const { file, source } of candidates) {
    if (!(await isBinaryExecutable(file))) continue;
    const uvx = path.join(path.dirname(file), 'uvx');
    return { path: file, ...((await isBinaryExecutable(uvx)) ? { uvx } : {}), source };
  }
  return undefined;
}

/** What to give the sandbox for `uv`: the programs to mount. */
export function uvTools(uv: UvLocation): SandboxTool[] {
  return [{ name: 'uv', path: uv.path }, ...(uv.uvx !== undefined ? [{ name: 'uvx', path: uv.uvx }] : [])];
}

/** The machine's `python3` as a command sees it: the first on the sandbox's PATH (system folders, the same inside and out). */
export async function systemPython(): Promise<string | undefined> {
  for (const dir of BASE_ENV.PATH.split(':')) {
    const file = path.join(dir, 'python3');
    try {
      await fs.access(file, constants.X_OK);
      return file;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

/**
 * The variables uv runs with in a command (see the module comment). `python`: the interpreter to
 * use (`systemPython()`); without one, uv looks on the PATH and finds none to download.
 */
export function uvEnvironment(options: { network: boolean; python?: string }): Record<string, string> {
  return {
    UV_NO_CONFIG: '1',
    UV_PYTHON_DOWNLOADS: 'never',
    UV_NO_MANAGED_PYTHON: '1',
    ...(options.python !== undefined ? { UV_PYTHON: options.python } : {}),
    ...(options.network ? {} : { UV_OFFLINE: '1' }),
    // Its spinners would only clutter the output the model reads.
    UV_NO_PROGRESS: '1',
  };
}

/** How the operator gets uv, for `UvNotFoundError`. */
export function installUvHint(env: NodeJS.ProcessEnv = process.env): string {
  const venv = path.join(defaultToolsDir(env), 'venv');
  return (
    `Install it on the worker: npm run setup in a checkout (PyPI ${UV_PACKAGE}==${UV_VERSION} into ${venv}; LOOPWRIGHT_TOOLS_DIR moves it), ` +
    `or python3 -m venv ${venv} && ${venv}/bin/pip install ${UV_PACKAGE}==${UV_VERSION}, or put uv on the worker's PATH; the next command finds it`
  );
}

/** A shell's "not found" for uv or uvx in a command's error output (dash: `sh: 1: uv: not found`; bash: `uv: command not found`). */
export function saysUvNotFound(stderr: string): boolean {
  return /(?:^|[\s:])uvx?: (?:command )?not found/m.test(stderr);
}

async function isBinaryExecutable(file: string): Promise<boolean> {
  try {
    await fs.access(file, constants.X_OK);
    const handle = await fs.open(file, 'r');
    try {
      const head = Buffer.alloc(2);
      const { bytesRead } = await handle.read(head, 0, 2, 0);
      return bytesRead === 2 && head.toString('latin1') !== '#!';
    } finally {
      await handle.close();
    }
  } catch {
    // Missing, not executable, or a folder: not a uv to offer.
    return false;
  }
}
