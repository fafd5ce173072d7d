/**
 * Provisions uv for this checkout (run by scripts/setup.sh), which commands use to run the PEP 723
 * scripts BMAD skills ship (`uv run {project-root}/_bmad/scripts/resolve_customization.py`): the
 * pinned PyPI package uv (`UV_VERSION`, activities/commands/uv-tool.ts) in the tools folder's venv,
 * the one the Temporal CLI goes to (`.tools/venv`; LOOPWRIGHT_TOOLS_DIR moves it), installed with
 * python3 -m venv and pip when that venv does not hold it yet. Prints what it used. Where it cannot
 * be installed it says so and why, names a uv on the PATH that commands get instead if there is
 * one, and exits 0: set-up goes on, and only commands that run uv fail (saying how to install it).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { defaultToolsDir } from '../activities/project-paths';
import { findUv, UV_PACKAGE, UV_VERSION, uvInToolsFolder } from '../activities/commands/uv-tool';

const SPEC = `${UV_PACKAGE}==${UV_VERSION}`;

/** Installs the pinned uv into the tools venv unless it is there; undefined, or why it could not. */
function install(venv: string): string | undefined {
  const python = path.join(venv, 'bin', 'python');
  const run = (command: string, args: string[], what: string): string | undefined => {
    const result = spawnSync(command, args, { encoding: 'utf8', timeout: 5 * 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
    if (result.status === 0) return undefined;
    const why = result.error?.message ?? (result.signal ? `ended by ${result.signal}` : `exited with ${result.status}`);
    const tail = `${result.stdout ?? ''}${result.stderr ?? ''}`
      .split('\n')
      .filter((line) => line.trim())
      .slice(-5)
      .map((line) => `setup:   ${line}`)
      .join('\n');
    return `${what} failed (${why})${tail ? `:\n${tail}` : ''}`;
  };
  if (!fs.existsSync(python)) {
    const failed = run('python3', ['-m', 'venv', venv], `python3 -m venv ${venv}`);
    if (failed !== undefined) return failed;
  }
  return run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-input', SPEC], `pip install ${SPEC}`);
}

/** Whether the venv holds the pinned version (its `.dist-info` folder: cheaper than asking pip). */
function hasPinnedVersion(venv: string): boolean {
  const lib = path.join(venv, 'lib');
  const pythons = fs.existsSync(lib) ? fs.readdirSync(lib) : [];
  return pythons.some((python) => fs.existsSync(path.join(lib, python, 'site-packages', `${UV_PACKAGE}-${UV_VERSION}.dist-info`)));
}

async function main(): Promise<void> {
  const venv = path.join(defaultToolsDir(), 'venv');
  const inTools = uvInToolsFolder();
  if (hasPinnedVersion(venv) && fs.existsSync(inTools)) {
    console.log(`setup: uv ${UV_VERSION} ${inTools} (already in the tools folder)`);
    return;
  }
  const failed = install(venv);
  if (failed === undefined && fs.existsSync(inTools)) {
    console.log(`setup: uv ${UV_VERSION} ${inTools} (installed now)`);
    return;
  }
  const why = failed ?? `pip install ${SPEC} succeeded, but ${inTools} is missing`;
  const fallback = await findUv();
  const instead = fallback !== undefined ? `commands use ${fallback.path} instead` : "commands that run uv (BMAD skills' scripts) will fail until it is installed";
  console.error(`setup: note: could not install ${SPEC} into ${venv}; ${instead}. ${why}`);
}

void main();
