import { Connection } from '@temporalio/client';
import type { ConnectionOptions } from '@temporalio/client';
import { isPortOpen, splitAddress } from './free-port';

/** Connection settings needed to check a server: what {@link connectionOptions} produces. */
export type HealthTarget = Pick<ConnectionOptions, 'address' | 'tls' | 'apiKey'> & { address: string };

/**
 * One health probe: the gRPC health service reports SERVING and the namespace can be described
 * (a worker started right after would otherwise race the namespace's creation). Resolves with the
 * reason it is not ready, or undefined when it is.
 */
export async function checkTemporal(target: HealthTarget, namespace = 'default', timeoutMs = 2_000): Promise<string | undefined> {
  const { host, port } = splitAddress(target.address);
  // A plain TCP probe first: it fails in microseconds when nothing listens, while a gRPC connect
  // would wait for its own timeout.
  if (!(await isPortOpen(host, port, timeoutMs))) return `nothing listens on ${target.address}`;
  let connection: Connection | undefined;
  try {
    // No retry interceptor: the caller polls, and a retrying call would outlast its deadline.
    connection = await Connection.connect({ ...target, connectTimeout: timeoutMs, interceptors: [] });
    const conn = connection;
    const deadline = Date.now() + timeoutMs;
    const health = await conn.withDeadline(deadline, () => conn.healthService.check({}));
    if (health.status !== 1) return `health status ${health.status ?? 'unknown'}`;
    await conn.withDeadline(deadline, () => conn.workflowService.describeNamespace({ namespace }));
    return undefined;
  } catch (error) {
    // Not ready yet is the expected answer while polling; the reason goes into the timeout error.
    return error instanceof Error ? error.message : String(error);
  } finally {
    await connection?.close();
  }
}

/** Options for {@link waitForTemporal}. */
export interface WaitOptions {
  namespace?: string;
  /** Give up after this long (default 30 s). */
  timeoutMs?: number;
  /** Pause between probes (default 100 ms). */
  intervalMs?: number;
  /** Called before each probe; returning a string aborts the wait with it (e.g. "the server exited"). */
  abort?: () => string | undefined;
}

/**
 * Polls {@link checkTemporal} until the server is ready. Resolves with undefined when ready, or
 * with the last reason it was not (timeout or abort) so the caller can build its own error.
 */
export async function waitForTemporal(target: HealthTarget, options: WaitOptions = {}): Promise<string | undefined> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let last = 'not probed yet';
  for (;;) {
    const aborted = options.abort?.();
    if (aborted !== undefined) return aborted;
    const remaining = deadline - Date.now();
    if (remaining <= 0) return `not ready after ${options.timeoutMs ?? 30_000} ms (last answer: ${last})`;
    const reason = await checkTemporal(target, options.namespace, Math.min(2_000, Math.max(remaining, 100)));
    if (reason === undefined) return undefined;
    last = reason;
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 100));
  }
}
