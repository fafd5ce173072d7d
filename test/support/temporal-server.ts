import * as net from 'node:net';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { fastServerArgs } from '../../client/server/dev-server';
import { findTemporalCli } from '../../client/server/find-temporal';

/** A dev server run by the SDK's local test environment for one test file. */
export interface TestTemporal {
  /** `127.0.0.1:<port>`. */
  address: string;
  port: number;
  /** SQLite file, when the server keeps its data (else in memory). */
  dbFile?: string;
  /** The SDK environment (its `connection`, `client`, `nativeConnection` are ready to use). */
  env: TestWorkflowEnvironment;
  /** Ends the server (and the environment's connections). Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Starts a real Temporal dev server with `TestWorkflowEnvironment.createLocal`, on the CLI that
 * set-up provided (the SDK's own download cannot reach its site here), with the fast settings and
 * search attributes of every Loopwright server: a free port (or `port`), no Web UI, in memory unless
 * `dbFile` names a SQLite file (then a restart on the same port and file keeps everything), and any
 * `dynamicConfig` values (`key=value`) a test needs besides.
 */
export async function startTestTemporal(options: { dbFile?: string; port?: number; dynamicConfig?: readonly string[] } = {}): Promise<TestTemporal> {
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: findTemporalCli().path },
      port: options.port,
      dbFilename: options.dbFile,
      // The server inherits this process's stdout and stderr: errors only, and no banner (`--output none`).
      log: { format: 'pretty', level: 'error' },
      extraArgs: [...fastServerArgs(options.dbFile !== undefined), ...(options.dynamicConfig ?? []).flatMap((value) => ['--dynamic-config-value', value]), '--output', 'none'],
    },
  });
  let stopping: Promise<void> | undefined;
  const port = Number(env.address.slice(env.address.lastIndexOf(':') + 1));
  return { address: env.address, port, dbFile: options.dbFile, env, stop: () => (stopping ??= env.teardown()) };
}

/** Stops a test server and starts it again on the same port and SQLite file: a server restart as workers and clients see it. */
export async function restartTestTemporal(server: TestTemporal): Promise<TestTemporal> {
  await server.stop();
  return startTestTemporal({ dbFile: server.dbFile, port: server.port });
}

/** Stops a test server. */
export async function stopTestTemporal(server: TestTemporal): Promise<void> {
  await server.stop();
}

/**
 * A free TCP port on `host` (bind port 0, read it, close); another process could take it
 * before the caller binds it, which on a test machine is rare enough. No package in the tree does
 * this (the SDK picks its servers' ports itself).
 */
export function findFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().unref().once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
