/**
 * A real Temporal cluster on one machine, for tests and benchmarks: PostgreSQL (persistence and SQL
 * advanced visibility) and one process per service (frontend, two history hosts, matching,
 * worker) of the server built by scripts/setup-cluster.sh. Its state folder holds the configs,
 * the data, the logs and `cluster.json` (ports and pids), so `scripts/cluster.sh stop` finds a
 * cluster `start` left running, and a test can kill and restart one process at a time.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { checkTemporal, isPortOpen } from '../../client/server/health';
import { setupNamespace, type NamespaceSetupResult } from '../../client/server/namespace-setup';
import {
  CLUSTER_PROCESSES,
  type ClusterLayout,
  type ClusterProcess,
  DATABASES,
  DEFAULT_HISTORY_SHARDS,
  PG_USER,
  type ProcessPorts,
  renderDynamicConfig,
  renderServerConfig,
  serviceOf,
} from './cluster-config';
import { initPostgres, isPostgresRunning, type PostgresOptions, startPostgres, stopPostgres } from './postgres';

const ROOT = path.resolve(__dirname, '../..');

/** The programs scripts/setup-cluster.sh provides. */
export interface ClusterTools {
  serverBin: string;
  sqlTool: string;
  pgBin: string;
}

/** Runs scripts/setup-cluster.sh (building the server the first time) and reads the paths it prints. */
export function provisionClusterTools(): ClusterTools {
  const out = execFileSync('bash', [path.join(ROOT, 'scripts/setup-cluster.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const values = Object.fromEntries(
    out
      .split('\n')
      .map((line) => /^(\w+)=(.*)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1], m[2]]),
  );
  const { TEMPORAL_SERVER_BIN: serverBin, TEMPORAL_SQL_TOOL: sqlTool, PG_BIN: pgBin } = values;
  if (!serverBin || !sqlTool || !pgBin) throw new Error(`scripts/setup-cluster.sh printed no paths:\n${out}`);
  return { serverBin, sqlTool, pgBin };
}

/** What `cluster.json` records. */
interface ClusterState {
  layout: ClusterLayout;
  pids: Partial<Record<ClusterProcess, number>>;
  tools: ClusterTools;
}

/** A process's state as `status` reports it. */
export interface ProcessStatus {
  name: ClusterProcess | 'postgres';
  pid?: number;
  running: boolean;
  port: number;
}

/** The default state folder: tmp/cluster in the checkout (LOOPWRIGHT_CLUSTER_DIR overrides). */
export function defaultClusterDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.LOOPWRIGHT_CLUSTER_DIR || path.join(ROOT, 'tmp', 'cluster'));
}

/**
 * A free TCP port on 127.0.0.1 below 32768: the server records membership ports in a SMALLINT
 * column (cluster_membership.rpc_port), so the kernel's ephemeral ports (32768 and up) are refused.
 * Tries random ports of 10000-32767 until one binds; `taken` are ports already handed out.
 */
export async function freePort(taken: ReadonlySet<number> = new Set()): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * 22_768);
    if (taken.has(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const server = net
        .createServer()
        .unref()
        .once('error', () => resolve(false));
      server.listen({ host: '127.0.0.1', port, exclusive: true }, () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port below 32768 on 127.0.0.1');
}

/**
 * True when `pid` runs (and, where /proc tells, runs one of the cluster's own programs: a pid
 * recorded before a reboot may belong to another process by now).
 */
function isAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('temporal-server');
  } catch {
    // No /proc (not Linux): the signal check is all there is.
    return true;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** One cluster on its state folder. */
export class TemporalCluster {
  private state: ClusterState | undefined;

  constructor(
    /** The state folder. */
    readonly dir: string,
    /** Namespace `start` prepares (default `default`). */
    readonly namespace = 'default',
  ) {
    const file = this.stateFile;
    if (fs.existsSync(file)) this.state = JSON.parse(fs.readFileSync(file, 'utf8')) as ClusterState;
  }

  private get stateFile(): string {
    return path.join(this.dir, 'cluster.json');
  }

  /** The frontend's `host:port`. */
  get address(): string {
    return `127.0.0.1:${this.current.layout.ports.frontend.grpc}`;
  }

  private get current(): ClusterState {
    if (!this.state) throw new Error(`no cluster in ${this.dir}: start one first`);
    return this.state;
  }

  /** PostgreSQL's settings. */
  get postgres(): PostgresOptions {
    const { layout, tools } = this.current;
    return { bin: tools.pgBin, dataDir: path.join(this.dir, 'pg'), logFile: path.join(this.dir, 'logs', 'postgres.log'), port: layout.pgPort };
  }

  /** The log file of a process. */
  logFile(name: ClusterProcess): string {
    return path.join(this.dir, 'logs', `${name}.log`);
  }

  private save(): void {
    fs.writeFileSync(this.stateFile, `${JSON.stringify(this.current, null, 2)}\n`);
  }

  /**
   * Starts everything that is not running: PostgreSQL (created and given the schema the first
   * time), then the services, and prepares the namespace. Ports are chosen once and kept, so a
   * restarted process comes back where clients look for it.
   */
  async start(tools: ClusterTools = provisionClusterTools(), log: (line: string) => void = () => undefined): Promise<NamespaceSetupResult> {
    fs.mkdirSync(path.join(this.dir, 'logs'), { recursive: true });
    fs.mkdirSync(path.join(this.dir, 'config'), { recursive: true });
    // The folder must be reachable by the postgres user when PostgreSQL runs as it.
    fs.chmodSync(this.dir, 0o755);
    if (!this.state) {
      const taken = new Set<number>();
      const port = async (): Promise<number> => {
        const chosen = await freePort(taken);
        taken.add(chosen);
        return chosen;
      };
      const ports = {} as Record<ClusterProcess, ProcessPorts>;
      for (const name of CLUSTER_PROCESSES) ports[name] = { grpc: await port(), membership: await port(), ...(name === 'frontend' ? { http: await port() } : {}) };
      const layout: ClusterLayout = { pgPort: await port(), ports, numHistoryShards: DEFAULT_HISTORY_SHARDS, dynamicConfigFile: path.join(this.dir, 'config', 'dynamic.yaml') };
      this.state = { layout, pids: {}, tools };
    } else {
      this.state.tools = tools;
    }
    const { layout } = this.current;
    fs.writeFileSync(layout.dynamicConfigFile, renderDynamicConfig());
    for (const name of CLUSTER_PROCESSES) fs.writeFileSync(this.configFile(name), renderServerConfig(layout, name));
    this.save();

    if (!isPostgresRunning(this.postgres)) {
      initPostgres(this.postgres);
      startPostgres(this.postgres);
      log(`PostgreSQL on 127.0.0.1:${layout.pgPort}`);
    }
    this.setupSchema(log);
    for (const name of CLUSTER_PROCESSES) await this.startProcess(name);
    log(`services: ${CLUSTER_PROCESSES.map((name) => `${name} ${this.current.pids[name]}`).join(', ')}`);
    return this.prepareNamespace();
  }

  /** Creates the two databases and brings their schemas to the server's version (the module's own SQL tool; a no-op once done). */
  private setupSchema(log: (line: string) => void): void {
    const marker = path.join(this.dir, 'schema-done');
    if (fs.existsSync(marker)) return;
    const { tools, layout } = this.current;
    const base = ['--ep', '127.0.0.1', '-p', String(layout.pgPort), '-u', PG_USER, '--pl', 'postgres12'];
    const sql = (args: string[]): void => {
      const result = spawnSync(tools.sqlTool, [...base, ...args], { encoding: 'utf8' });
      if (result.status !== 0) throw new Error(`temporal-sql-tool ${args.join(' ')} failed:\n${result.stdout}${result.stderr}`);
    };
    for (const [database, schema] of [
      [DATABASES.main, 'postgresql/v12/temporal'],
      [DATABASES.visibility, 'postgresql/v12/visibility'],
    ] as const) {
      sql(['--db', database, 'create']);
      sql(['--db', database, 'setup-schema', '-v', '0.0']);
      sql(['--db', database, 'update-schema', '--schema-name', schema]);
    }
    fs.writeFileSync(marker, `${new Date().toISOString()}\n`);
    log('schema set up');
  }

  private configFile(name: ClusterProcess): string {
    return path.join(this.dir, 'config', `${name}.yaml`);
  }

  /** Starts one server process (if not running) and waits until its gRPC port answers. */
  async startProcess(name: ClusterProcess, timeoutMs = 60_000): Promise<void> {
    const state = this.current;
    if (isAlive(state.pids[name])) return;
    const logFd = fs.openSync(this.logFile(name), 'a');
    const child = spawn(state.tools.serverBin, ['--config-file', this.configFile(name), '--allow-no-auth', 'start', '--service', serviceOf(name)], {
      detached: true,
      stdio: ['ignore', logFd, logFd],
    });
    fs.closeSync(logFd);
    child.unref();
    state.pids[name] = child.pid;
    this.save();
    const port = state.layout.ports[name].grpc;
    const deadline = Date.now() + timeoutMs;
    while (!(await isPortOpen('127.0.0.1', port))) {
      if (!isAlive(child.pid) || child.exitCode !== null) throw new Error(`${name} exited at start; see ${this.logFile(name)}:\n${this.logTail(name)}`);
      if (Date.now() > deadline) throw new Error(`${name} did not listen on ${port} within ${timeoutMs} ms; see ${this.logFile(name)}`);
      await sleep(100);
    }
  }

  /** Ends one server process: SIGKILL as a lost host, SIGTERM as an orderly stop. Resolves once it is gone. */
  async stopProcess(name: ClusterProcess, signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 30_000): Promise<void> {
    const state = this.current;
    const pid = state.pids[name];
    if (pid !== undefined && isAlive(pid)) {
      process.kill(pid, signal);
      const deadline = Date.now() + timeoutMs;
      while (isAlive(pid)) {
        if (Date.now() > deadline) process.kill(pid, 'SIGKILL');
        await sleep(50);
      }
    }
    delete state.pids[name];
    this.save();
  }

  /** Stops PostgreSQL: `immediate` is a crash of the database. */
  stopPostgres(mode: 'fast' | 'immediate' = 'fast'): void {
    stopPostgres(this.postgres, mode);
  }

  /** Starts PostgreSQL again on its data folder and port. */
  startPostgres(): void {
    if (!isPostgresRunning(this.postgres)) startPostgres(this.postgres);
  }

  /** Creates the namespace if needed and registers Loopwright's search attributes (as `loopwright setup-namespace` does). */
  async prepareNamespace(timeoutMs = 60_000): Promise<NamespaceSetupResult> {
    const deadline = Date.now() + timeoutMs;
    // The frontend answers health checks before the system namespace is loaded: wait for both.
    for (;;) {
      const reason = await checkTemporal(this.address, 'temporal-system');
      if (reason === undefined) break;
      if (Date.now() > deadline) throw new Error(`the cluster's frontend is not ready: ${reason}`);
      await sleep(250);
    }
    const connection = await Connection.connect({ address: this.address });
    try {
      return await setupNamespace(connection, { namespace: this.namespace, timeoutMs: Math.max(deadline - Date.now(), 5_000) });
    } finally {
      await connection.close();
    }
  }

  /** Stops every process and PostgreSQL; the data stays for the next `start`. */
  async stop(): Promise<void> {
    if (!this.state) return;
    // The frontend first: clients see the cluster go away at once rather than half of it.
    for (const name of CLUSTER_PROCESSES) await this.stopProcess(name, 'SIGTERM');
    this.stopPostgres('fast');
  }

  /** Stops everything and removes the state folder. */
  async destroy(): Promise<void> {
    await this.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
    this.state = undefined;
  }

  /** Which processes run, with their pids and ports. */
  status(): ProcessStatus[] {
    if (!this.state) return [];
    const { layout, pids } = this.state;
    return [
      { name: 'postgres', running: isPostgresRunning(this.postgres), port: layout.pgPort },
      ...CLUSTER_PROCESSES.map((name) => ({ name, pid: pids[name], running: isAlive(pids[name]), port: layout.ports[name].grpc })),
    ];
  }

  /** The last lines of a process's log. */
  logTail(name: ClusterProcess, lines = 30): string {
    const file = this.logFile(name);
    return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n') : '';
  }
}
