import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SESSION_SEARCH_ATTRIBUTES } from '../../common/search-attributes';
import { DevServerStartError } from './errors';
import { waitForTemporal } from './health';
import { removeServerState, serverStateFile, terminateProcess, writeServerState } from './server-state';

/**
 * Dynamic config that makes a dev server fast for agent loops. By default its history service reads
 * the transfer queue at most 20 times a second (one shard), so every workflow task that follows an
 * activity waits for one of those reads: iterations stepped in multiples of 50 ms. Eager activity
 * execution hands an activity scheduled by a workflow task straight back to the worker that
 * completed it, skipping a round through matching. A workflow id's minimal reuse interval of 0 lets
 * a session that continues as new (a run's turn limit, a compaction's hand-over, a rewind) go on at
 * once: by default the server holds the new run's first step until a second after the previous run
 * started, a guard against workflows that continue as new in a tight loop on a shared cluster.
 * A timer processor time shift of 100 ms fires timers on time: by default the server fires none
 * sooner than about a second after it is set, so a retry's 1 s backoff, a worker's sticky timeout
 * or a heartbeat timeout each ended up to a second late (an idle server's CPU is the same).
 */
export const FAST_DYNAMIC_CONFIG: readonly string[] = [
  'history.transferProcessorMaxPollRPS=1000',
  'history.timerProcessorMaxPollRPS=1000',
  'system.enableActivityEagerExecution=true',
  'history.workflowIdReuseMinimalInterval="0s"',
  'history.timerProcessorMaxTimeShift="100ms"',
];

/**
 * The `temporal server start-dev` arguments every server Loopwright starts gets (the embedded one,
 * the tests' and the bench's through the SDK's `extraArgs`): {@link FAST_DYNAMIC_CONFIG}, the
 * sessions' search attributes, and for a file-backed server the SQLite pragmas.
 */
export function fastServerArgs(persistent: boolean): string[] {
  return [
    ...FAST_DYNAMIC_CONFIG.flatMap((value) => ['--dynamic-config-value', value]),
    ...SESSION_SEARCH_ATTRIBUTES.flatMap(({ name, type }) => ['--search-attribute', `${name}=${type}`]),
    // A file-backed server: write-ahead log and no fsync per commit (~1.5x faster).
    ...(persistent ? ['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal'] : []),
  ];
}

/** Options for {@link spawnDevServer}: the executable, the folder of `temporal.db`, `temporal.log` and `server.json`, ports on 127.0.0.1 (no Web UI without `uiPort`). */
export interface SpawnOptions {
  cliPath: string;
  stateDir: string;
  port: number;
  uiPort?: number;
  /** A namespace created at launch besides "default". */
  namespace?: string;
  /** In its own process group, outliving this process; otherwise a child that `stop()` ends. */
  detached: boolean;
  env?: NodeJS.ProcessEnv;
  startTimeoutMs?: number;
}

/** A server started by {@link spawnDevServer}; `stop()` (SIGTERM, SIGKILL after 10 s) also removes its pid file, and may be called twice. */
export interface DevServer {
  address: string;
  pid: number;
  uiUrl?: string;
  dbFile: string;
  logFile: string;
  namespace: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts `temporal server start-dev` on a SQLite file in the state folder, its output appended to
 * `temporal.log`, waits until it is healthy and records it in the pid file. Loopwright's own
 * process management, since the SDK's test environment cannot leave a server running after this
 * process exits (`--detach`, and the server `run` starts) and does not say which process it runs
 * (`status`, `stop` from another terminal).
 */
export async function spawnDevServer(options: SpawnOptions): Promise<DevServer> {
  const namespace = options.namespace ?? 'default';
  const dbFile = path.join(options.stateDir, 'temporal.db');
  const logFile = path.join(options.stateDir, 'temporal.log');
  const stateFile = serverStateFile(options.stateDir);
  const address = `127.0.0.1:${options.port}`;
  const uiUrl = options.uiPort === undefined ? undefined : `http://localhost:${options.uiPort}`;
  fs.mkdirSync(options.stateDir, { recursive: true });
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(options.port), '--log-level', 'warn', '--db-filename', dbFile];
  args.push(...fastServerArgs(true), ...(options.uiPort === undefined ? ['--headless'] : ['--ui-port', String(options.uiPort), '--ui-disable-news-fetch']));
  if (namespace !== 'default') args.push('--namespace', namespace);
  const log = fs.openSync(logFile, 'a');
  // Output goes to the log file, never to pipes: a detached server holding a pipe to us would die (SIGPIPE) when we exit.
  const child = spawn(options.cliPath, args, { env: options.env ?? process.env, detached: options.detached, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `the server exited (${code !== null ? `code ${code}` : `signal ${signal}`}) before it was ready`));
  child.once('error', (error) => (exited = `the server could not be started: ${error.message}`));
  const failure = await waitForTemporal(address, { namespace, timeoutMs: options.startTimeoutMs ?? 30_000, abort: () => exited });
  if (failure !== undefined) {
    if (exited === undefined && child.pid !== undefined) await terminateProcess(child.pid, 2_000);
    const logTail = fs
      .readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((line) => line.trim())
      .slice(-20)
      .join('\n');
    throw new DevServerStartError(`Temporal dev server at ${address} did not start: ${failure} (log: ${logFile})\n${logTail}`.trimEnd(), logTail);
  }
  const pid = child.pid as number;
  writeServerState(stateFile, { pid, address, uiUrl, dbFile, logFile, namespace, startedAt: new Date().toISOString() });
  if (options.detached) child.unref();
  let stopping: Promise<void> | undefined;
  const stop = async (): Promise<void> => {
    await terminateProcess(pid);
    removeServerState(stateFile, pid);
  };
  return { address, pid, uiUrl, dbFile, logFile, namespace, child, stop: () => (stopping ??= stop()) };
}
