/**
 * The one dev server every part of the bench uses (in memory, a free loopback port), run by the
 * SDK's local test environment on the CLI set-up provided, with the fast settings of every
 * Loopwright server; with a client connection, and a native connection for in-process workers.
 */
import * as fs from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { NativeConnection } from '@temporalio/worker';
import { fastServerArgs } from '../../client/server/dev-server';
import { findTemporalCli } from '../../client/server/find-temporal';
import type { CleanupStack } from './cleanup-stack';
import { processCpuMs } from './proc-stats';

/** The running server and the bench's connections to it. */
export interface BenchServer {
  /** `host:port` of the frontend (127.0.0.1). */
  address: string;
  /** Temporal CLI that runs it. */
  cliPath: string;
  /** CPU time the server process has used so far (ms); undefined where /proc cannot tell. */
  cpuMs(): number | undefined;
  client: Client;
  /** The native connection of in-process workers. */
  nativeConnection(): Promise<NativeConnection>;
}

/** Start the dev server and connect; all of it is stopped through `cleanup`. */
export async function startBenchServer(cleanup: CleanupStack): Promise<BenchServer> {
  const cliPath = findTemporalCli().path;
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: cliPath },
      // The server inherits this process's stdout, where its banner would break `--json` (`--output none`); errors only.
      log: { format: 'pretty', level: 'error' },
      extraArgs: [...fastServerArgs(false), '--output', 'none'],
    },
  });
  cleanup.push('dev server', () => env.teardown());
  const connection = await Connection.connect({
    address: env.address,
    // A history page of a long turn is bigger than gRPC's default 4 MB; the server's own limit is 50 MB.
    channelArgs: { 'grpc.max_receive_message_length': 64 * 1024 * 1024 },
  });
  cleanup.push('client connection', () => connection.close());
  const pid = childPid(cliPath);
  return {
    address: env.address,
    cliPath,
    cpuMs: () => (pid === undefined ? undefined : processCpuMs(pid)),
    client: new Client({ connection }),
    nativeConnection: () => Promise.resolve(env.nativeConnection),
  };
}

/** The SDK runs the server as a child of this process without saying its pid; Linux's /proc does. */
function childPid(executable: string): number | undefined {
  const pids = fs.existsSync('/proc') ? fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name)) : [];
  return pids.map(Number).find((pid) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid && fs.readlinkSync(`/proc/${pid}/exe`) === fs.realpathSync(executable);
    } catch {
      // Gone, or not ours to read.
      return false;
    }
  });
}
