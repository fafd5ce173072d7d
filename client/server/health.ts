import * as net from 'node:net';
import { Connection } from '@temporalio/client';

/**
 * One health probe of the server at `address` (Loopwright's own servers: plaintext): the gRPC
 * health service says SERVING and the namespace can be described (a worker started right after
 * would otherwise race its creation). Resolves with why it is not ready, or undefined when it is.
 */
export async function checkTemporal(address: string, namespace = 'default', timeoutMs = 2_000): Promise<string | undefined> {
  // A TCP probe first: it fails at once when nothing listens, where a gRPC connect waits out its deadline.
  const [, host, port] = /^\[?(.*?)\]?:(\d+)$/.exec(address) ?? [];
  if (!(await isPortOpen(host ?? address, Number(port ?? 7233), timeoutMs))) return `nothing listens on ${address}`;
  let connection: Connection | undefined;
  try {
    // No retry interceptor: the caller polls, and a retrying call would outlast its deadline.
    connection = await Connection.connect({ address, connectTimeout: timeoutMs, interceptors: [] });
    const conn = connection;
    const deadline = Date.now() + timeoutMs;
    const health = await conn.withDeadline(deadline, () => conn.healthService.check({}));
    if (health.status !== 1) return `health status ${health.status ?? 'unknown'}`;
    await conn.withDeadline(deadline, () => conn.workflowService.describeNamespace({ namespace }));
    return undefined;
  } catch (error) {
    // Not ready yet is the expected answer while polling; the reason goes into the timeout error.
    return (error as Error).message;
  } finally {
    await connection?.close();
  }
}

/** Polls {@link checkTemporal} until ready (undefined), the timeout, or `abort` returning a reason. */
export async function waitForTemporal(address: string, options: { namespace?: string; timeoutMs?: number; abort?: () => string | undefined }): Promise<string | undefined> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  let last = 'not probed yet';
  for (;;) {
    const aborted = options.abort?.();
    if (aborted !== undefined) return aborted;
    if (Date.now() >= deadline) return `not ready after ${timeoutMs} ms (last answer: ${last})`;
    const reason = await checkTemporal(address, options.namespace, Math.min(2_000, Math.max(deadline - Date.now(), 100)));
    if (reason === undefined) return undefined;
    last = reason;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** True when something accepts TCP connections on `host:port` within `timeoutMs`. */
export function isPortOpen(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (open: boolean): void => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
