/**
 * The test cluster's PostgreSQL: Debian's initdb, pg_ctl and postgres run on a data folder of the
 * cluster's own, on a port of its own on 127.0.0.1 (trust authentication, no Unix socket in
 * /var/run). PostgreSQL refuses to run as root, so as root every command runs as the `postgres`
 * user Debian's package creates (runuser), on a folder handed to that user.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PG_USER } from './cluster-config';

/** Where PostgreSQL lives and runs. */
export interface PostgresOptions {
  /** Folder of initdb, pg_ctl and postgres (`/usr/lib/postgresql/<major>/bin`). */
  bin: string;
  /** The data folder (created by `init`). */
  dataDir: string;
  logFile: string;
  port: number;
}

const asRoot = (): boolean => process.getuid?.() === 0;

/** Runs a PostgreSQL program, as the `postgres` user when this process is root. */
function run(options: PostgresOptions, program: string, args: string[], check = true): { status: number | null; output: string } {
  const file = path.join(options.bin, program);
  const [command, argv] = asRoot() ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
  const result = spawnSync(command, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (check && result.status !== 0) throw new Error(`${program} ${args.join(' ')} failed (exit ${result.status}):\n${output}`);
  return { status: result.status, output };
}

/** Hands a folder or file to the `postgres` user when running as root. */
function handOver(target: string): void {
  if (asRoot()) execFileSync('chown', ['-R', 'postgres:postgres', target]);
}

/** Creates the data folder (once): superuser `temporal`, trust on local connections. */
export function initPostgres(options: PostgresOptions): void {
  if (fs.existsSync(path.join(options.dataDir, 'PG_VERSION'))) return;
  fs.mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  handOver(options.dataDir);
  if (asRoot()) {
    const reach = spawnSync('runuser', ['-u', 'postgres', '--', 'test', '-w', options.dataDir]);
    if (reach.status !== 0) {
      throw new Error(`the postgres user cannot reach ${options.dataDir} (PostgreSQL does not run as root); set LOOPWRIGHT_CLUSTER_DIR to a folder every user can traverse, e.g. under /tmp`);
    }
  }
  run(options, 'initdb', ['-D', options.dataDir, '-U', PG_USER, '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
}

/**
 * Starts the server and waits until it accepts connections. fsync is off: the tests kill
 * processes, never the machine, and a process crash loses nothing the operating system holds.
 */
export function startPostgres(options: PostgresOptions): void {
  fs.writeFileSync(options.logFile, '', { flag: 'a' });
  handOver(options.logFile);
  const settings = [`-p ${options.port}`, `-k ${options.dataDir}`, `-c listen_addresses=127.0.0.1`, `-c max_connections=400`, `-c fsync=off`, `-c full_page_writes=off`].join(' ');
  run(options, 'pg_ctl', ['-D', options.dataDir, '-l', options.logFile, '-o', settings, '-w', '-t', '60', 'start']);
}

/** Stops the server: `fast` as an operator would, `immediate` as a crash (recovery at the next start). */
export function stopPostgres(options: PostgresOptions, mode: 'fast' | 'immediate' = 'fast'): void {
  if (!isPostgresRunning(options)) return;
  run(options, 'pg_ctl', ['-D', options.dataDir, '-m', mode, '-w', '-t', '60', 'stop']);
}

/** True when pg_ctl finds the server running on the data folder. */
export function isPostgresRunning(options: PostgresOptions): boolean {
  if (!fs.existsSync(path.join(options.dataDir, 'PG_VERSION'))) return false;
  return run(options, 'pg_ctl', ['-D', options.dataDir, 'status'], false).status === 0;
}
