import * as path from 'node:path';
import { startDevServer } from './dev-server';
import type { DevServerHandle } from './dev-server';
import { EMBEDDED_PORT, EMBEDDED_UI_PORT, LOCAL_ADDRESS } from './ensure-server';
import { checkTemporal } from './health';
import { defaultStateDir } from './project-paths';
import {
  isProcessAlive,
  isTemporalProcess,
  readServerState,
  removeServerState,
  serverStateFile,
  terminateProcess,
  writeServerState,
} from './server-state';
import type { ServerState } from './server-state';

/** Where `loopwright server` writes its lines (the command line passes console-backed functions). */
export interface CommandOutput {
  log(line: string): void;
  error(line: string): void;
}

/** Extra inputs, mainly for tests. */
export interface ServerCommandOptions {
  /** Environment (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Ends a foreground server like SIGINT would. */
  signal?: AbortSignal;
}

const USAGE = `Usage: loopwright server [start] [--detach] [options]
       loopwright server stop | status [--state-dir DIR]

Runs the Temporal dev server with its SQLite file in the state folder, so sessions survive a
restart. In the foreground it runs until Ctrl+C; with --detach it keeps running in the background.

Options:
  --detach          run in the background (stop it with \`loopwright server stop\`)
  --port N          gRPC port (default ${EMBEDDED_PORT})
  --ui-port N       Web UI port (default ${EMBEDDED_UI_PORT})
  --headless        no Web UI
  --state-dir DIR   state folder (default LOOPWRIGHT_STATE_DIR, else <project>/.loopwright)`;

interface Parsed {
  action: 'start' | 'stop' | 'status' | 'help';
  detach: boolean;
  port: number;
  uiPort: number;
  headless: boolean;
  stateDir?: string;
}

/**
 * `loopwright server [start|stop|status]`. Returns the exit status: 0 on success (for status:
 * running and healthy), 1 on failure (for status: not running), 2 on a usage error.
 */
export async function serverCommand(argv: string[], out: CommandOutput, options: ServerCommandOptions = {}): Promise<number> {
  const parsed = parseArgs(argv);
  if (typeof parsed === 'string') {
    out.error(`${parsed}\n\n${USAGE}`);
    return 2;
  }
  const env = options.env ?? process.env;
  const stateDir = path.resolve(parsed.stateDir ?? defaultStateDir(env));
  switch (parsed.action) {
    case 'help':
      out.log(USAGE);
      return 0;
    case 'stop':
      return stop(stateDir, out);
    case 'status':
      return status(stateDir, out);
    case 'start':
      return start(parsed, stateDir, env, out, options.signal);
  }
}

function parseArgs(argv: string[]): Parsed | string {
  const parsed: Parsed = { action: 'start', detach: false, port: EMBEDDED_PORT, uiPort: EMBEDDED_UI_PORT, headless: false };
  let actionSeen = false;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = (): string | undefined => argv[++i];
    if (arg === '-h' || arg === '--help' || arg === 'help') parsed.action = 'help';
    else if (arg === '--detach' || arg === '-d') parsed.detach = true;
    else if (arg === '--headless') parsed.headless = true;
    else if (arg === '--port' || arg === '--ui-port') {
      const text = value();
      const port = Number(text);
      if (text === undefined || !Number.isInteger(port) || port < 1 || port > 65535) return `${arg} needs a port number (1-65535)`;
      if (arg === '--port') parsed.port = port;
      else parsed.uiPort = port;
    } else if (arg === '--state-dir') {
      const dir = value();
      if (dir === undefined) return '--state-dir needs a folder';
      parsed.stateDir = dir;
    } else if (!actionSeen && (arg === 'start' || arg === 'stop' || arg === 'status')) {
      parsed.action = arg;
      actionSeen = true;
    } else return `unknown argument: ${arg}`;
  }
  return parsed;
}

/** The recorded server if its process still runs Temporal; a stale pid file is removed. */
function liveServer(stateDir: string): ServerState | undefined {
  const file = serverStateFile(stateDir);
  const state = readServerState(file);
  if (state === undefined) return undefined;
  if (isTemporalProcess(state.pid)) return state;
  removeServerState(file);
  return undefined;
}

async function start(parsed: Parsed, stateDir: string, env: NodeJS.ProcessEnv, out: CommandOutput, signal?: AbortSignal): Promise<number> {
  const running = liveServer(stateDir);
  if (running !== undefined) {
    out.error(`The embedded Temporal server is already running (pid ${running.pid}) at ${running.address}; stop it with \`loopwright server stop\``);
    return 1;
  }
  const stateFile = serverStateFile(stateDir);
  const dbFile = path.join(stateDir, 'temporal.db');
  const logFile = path.join(stateDir, 'temporal.log');
  let server: DevServerHandle;
  try {
    server = await startDevServer({
      dbFile,
      logFile,
      stateFile,
      port: parsed.port,
      uiPort: parsed.uiPort,
      ui: !parsed.headless,
      detached: parsed.detach,
      env,
    });
  } catch (error) {
    out.error((error as Error).message);
    return 1;
  }
  out.log(`Temporal dev server ready at ${server.address}${server.pid === undefined ? '' : ` (pid ${server.pid})`}`);
  if (server.uiUrl !== undefined) out.log(`Web UI: ${server.uiUrl}`);
  out.log(`State: ${dbFile}`);
  out.log(`Log: ${server.logFile ?? logFile}`);
  if (server.detached) {
    out.log('Running in the background; stop it with `loopwright server stop`');
    return 0;
  }
  if (server.pid !== undefined) {
    // Recorded so that `status`, `stop` and other commands in other terminals find it.
    writeServerState(stateFile, {
      pid: server.pid,
      address: server.address,
      uiUrl: server.uiUrl,
      dbFile,
      logFile: server.logFile,
      namespace: server.namespace,
      startedAt: new Date().toISOString(),
    });
  }
  out.log('Press Ctrl+C to stop.');
  const reason = await untilStopped(server, signal);
  await server.stop();
  if (server.pid !== undefined && readServerState(stateFile)?.pid === server.pid) removeServerState(stateFile);
  if (reason === 'exited') {
    out.error(`The Temporal dev server exited on its own; see ${server.logFile ?? logFile}`);
    return 1;
  }
  out.log('Temporal dev server stopped.');
  return 0;
}

/** Waits for SIGINT, SIGTERM, the abort signal, or the server's own exit. */
function untilStopped(server: DevServerHandle, signal?: AbortSignal): Promise<'signal' | 'exited'> {
  return new Promise((resolve) => {
    const cleanup = (): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      signal?.removeEventListener('abort', onSignal);
      server.child?.off('exit', onExit);
    };
    const onSignal = (): void => {
      cleanup();
      resolve('signal');
    };
    const onExit = (): void => {
      cleanup();
      resolve('exited');
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    if (signal?.aborted === true) return onSignal();
    signal?.addEventListener('abort', onSignal);
    if (server.child !== undefined && (server.child.exitCode !== null || server.child.signalCode !== null)) return onExit();
    server.child?.on('exit', onExit);
  });
}

async function stop(stateDir: string, out: CommandOutput): Promise<number> {
  const running = liveServer(stateDir);
  if (running === undefined) {
    out.log(`No embedded Temporal server is running (state folder ${stateDir}).`);
    return 0;
  }
  const how = await terminateProcess(running.pid);
  const file = serverStateFile(stateDir);
  if (readServerState(file)?.pid === running.pid) removeServerState(file);
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
    const other = (await checkTemporal({ address: LOCAL_ADDRESS })) === undefined;
    out.log(
      other
        ? `No embedded Temporal server is running, but a Temporal server answers on ${LOCAL_ADDRESS}.`
        : 'The embedded Temporal server is not running.',
    );
    return 1;
  }
  const problem = await checkTemporal({ address: running.address }, running.namespace);
  out.log(`The embedded Temporal server is ${problem === undefined ? 'running' : 'not healthy'} (pid ${running.pid})`);
  out.log(`Address: ${running.address}`);
  if (running.uiUrl !== undefined) out.log(`Web UI: ${running.uiUrl}`);
  out.log(`State: ${running.dbFile}`);
  if (running.logFile !== undefined) out.log(`Log: ${running.logFile}`);
  if (problem !== undefined) out.log(`Problem: ${problem}`);
  return problem === undefined ? 0 : 1;
}
