/**
 * What the tests of uv in the sandbox need: whether they can run here (bwrap and uv installed, as
 * `npm run setup` does), and a uv the sandbox's user can reach.
 *
 * They are skipped, saying why, only where bwrap or uv is missing and only outside CI: CI runs
 * set-up, which installs both, so there a missing one fails the tests instead of hiding them.
 */
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resolveTools } from '../../../activities/commands/sandbox-tools';
import { findUv, uvInToolsFolder } from '../../../activities/commands/uv-tool';
import { SANDBOX_UID } from './sandbox-fixture';

/** Why the uv tests of `suite` cannot run here, announced as a skipped test; undefined when they can (always in CI). */
export function uvTestsSkipped(suite: string): string | undefined {
  const missing: string[] = [];
  if (spawnSync('bwrap', ['--version']).status !== 0) missing.push('bwrap (bubblewrap)');
  if (spawnSync(uvInToolsFolder(), ['--version']).status !== 0 && spawnSync('uv', ['--version']).status !== 0) missing.push(`uv (neither ${uvInToolsFolder()} nor on the PATH)`);
  if (missing.length === 0 || process.env.CI === 'true') return undefined;
  const why = `${suite}: SKIPPED, ${missing.join(' and ')} not installed here; npm run setup installs them`;
  process.stderr.write(`\n${why}\n`);
  test.skip(why, () => undefined);
  return why;
}

/**
 * Makes sure the worker's uv is one the sandbox's user can reach: when the tools folder lies where
 * that user cannot enter (a checkout in root's home), a copy in a temp tools folder is used
 * (LOOPWRIGHT_TOOLS_DIR) for the tests' duration. Returns the undo.
 */
export async function reachableUv(): Promise<() => Promise<void>> {
  const uv = await findUv();
  if (uv === undefined) throw new Error(`No uv: neither ${uvInToolsFolder()} nor on the PATH (npm run setup installs it)`);
  const { leftOut } = await resolveTools([{ name: 'uv', path: uv.path }], { uid: SANDBOX_UID, gid: SANDBOX_UID });
  if (leftOut.length === 0) return async () => undefined;
  const tools = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'lw-uv-tools-')));
  await fs.chmod(tools, 0o755);
  await fs.mkdir(path.join(tools, 'venv', 'bin'), { recursive: true, mode: 0o755 });
  await fs.copyFile(uv.path, path.join(tools, 'venv', 'bin', 'uv'));
  await fs.chmod(path.join(tools, 'venv', 'bin', 'uv'), 0o755);
  process.stderr.write(`\nuv tests: ${leftOut[0].reason}; using a copy in ${tools}\n`);
  const saved = process.env.LOOPWRIGHT_TOOLS_DIR;
  process.env.LOOPWRIGHT_TOOLS_DIR = tools;
  return async () => {
    if (saved === undefined) delete process.env.LOOPWRIGHT_TOOLS_DIR;
    else process.env.LOOPWRIGHT_TOOLS_DIR = saved;
    await fs.rm(tools, { recursive: true, force: true });
  };
}
