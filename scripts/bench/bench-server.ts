/**
 * The one dev server every part of the bench uses (in memory, free loopback port), with a client
 * connection, and a native connection for the workers that run inside the bench's own process.
 */
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { startDevServer } from '../../client/server/dev-server';
import type { CleanupStack } from './cleanup-stack';
import { processCpuMs } from './proc-stats';

/** The running server and the bench's connections to it. */
export interface BenchServer {
  /** `host:port` of the frontend (127.0.0.1). */
  address: string;
  /** Temporal CLI that runs it. */
  cliPath: string;
  /** CPU time the server process has used so far (ms); undefined when the SDK runs it in this process. */
  cpuMs(): number | undefined;
  client: Client;
  /** The native connection of in-process workers, opened on first use. */
  nativeConnection(): Promise<NativeConnection>;
}

/** Start the dev server and connect; all of it is stopped through `cleanup`. */
export async function startBenchServer(cleanup: CleanupStack): Promise<BenchServer> {
  const server = await startDevServer({ port: 0, ui: false, ip: '127.0.0.1' });
  cleanup.push('dev server', () => server.stop());
  const connection = await Connection.connect({
    address: server.address,
    // A history page of a long turn is bigger than gRPC's default 4 MB; the server's own limit is 50 MB.
    channelArgs: { 'grpc.max_receive_message_length': 64 * 1024 * 1024 },
  });
  cleanup.push('client connection', () => connection.close());
  let native: Promise<NativeConnection> | undefined;
  return {
    address: server.address,
    cliPath: server.cliPath,
    cpuMs: () => (server.pid === undefined ? undefined : processCpuMs(server.pid)),
    client: new Client({ connection }),
    nativeConnection() {
      native ??= NativeConnection.connect({ address: server.address }).then((c) => {
        cleanup.push('worker connection', () => c.close());
        return c;
      });
      return native;
    },
  };
}
