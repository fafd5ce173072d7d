/**
 * One connection to Temporal for a command: finds (or starts) the server, connects a client, and
 * can open the native connection a worker needs.
 */
import { Client, Connection } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { DEFAULT_TASK_QUEUE } from '../common/defaults';
import { withServerAddress } from './exit-codes';
import type { CommandOutput } from './output';
import { ensureTemporal, type TemporalTarget } from '../client/server/ensure-server';
import { connectionOptions } from '../client/server/temporal-env';
import { TemporalConfigError } from '../client/server/errors';
import { msToNumber } from '@temporalio/common/lib/time';
import { LoopwrightClient } from '../client/session-client';
import { dataConverterFromEnv } from '../codec/encryption-codec';
import { tracingClientInterceptors, tracingFromEnv } from '../worker/tracing';

/** An open connection plus what commands need to know about it. */
export interface TemporalSession {
  target: TemporalTarget;
  client: Client;
  loopwright: LoopwrightClient;
  namespace: string;
  taskQueue: string;
  /** Base URL of the Web UI, when known (the embedded server's, or `TEMPORAL_UI_URL`). */
  uiUrl?: string;
  /** A native connection for a worker in this process (the caller closes it). */
  nativeConnection(): Promise<NativeConnection>;
  close(): Promise<void>;
}

/** Connect to the configured Temporal server, starting the embedded one when none is configured or running. */
export async function openTemporal(out: CommandOutput, options: { env?: NodeJS.ProcessEnv; taskQueue?: string } = {}): Promise<TemporalSession> {
  const env = options.env ?? process.env;
  const target = await ensureTemporal({ env, log: (line) => out.error(line) });
  const connectOptions = { ...connectionOptions(target), ...connectTimeout(env) };
  // Traces when the OTEL_* variables ask for them: each client call starts a span (a child of the
  // command's span), so a `run` or `send` is the root of its trace.
  const tracing = await tracingFromEnv(env);
  const where = `${target.address} (${target.addressSource ?? (target.embedded ? 'the embedded server' : 'the local server')})`;
  const connection = await Connection.connect(connectOptions).catch((err: unknown) => {
    throw withServerAddress(err, where);
  });
  const dataConverter = dataConverterFromEnv(env);
  const client = new Client({
    connection,
    namespace: target.namespace,
    ...(dataConverter ? { dataConverter } : {}),
    ...(tracing ? { interceptors: await tracingClientInterceptors() } : {}),
  });
  const taskQueue = options.taskQueue ?? (env.LOOPWRIGHT_TASK_QUEUE || DEFAULT_TASK_QUEUE);
  return {
    target,
    client,
    loopwright: new LoopwrightClient(client, taskQueue),
    namespace: target.namespace,
    taskQueue,
    uiUrl: env.TEMPORAL_UI_URL || target.uiUrl,
    // Loaded on first use: only a command that runs a worker needs the worker package.
    nativeConnection: async () =>
      (await import('@temporalio/worker')).NativeConnection.connect(connectOptions).catch((err: unknown) => {
        throw withServerAddress(err, where);
      }),
    close: () => connection.close(),
  };
}

/**
 * Closes a worker's connection, and takes its call-context AsyncLocalStorage off Node's list of live
 * ones, which the SDK's close leaves it on: every async step of the process after it would pass
 * through it, so a process that opens many connections (serve, tests) would slow down.
 */
export async function closeNativeConnection(connection: NativeConnection): Promise<void> {
  try {
    await connection.close();
  } finally {
    connection.callContextStorage.disable();
  }
}

/**
 * `LOOPWRIGHT_CONNECT_TIMEOUT`: how long a command tries to reach the server before it says it
 * cannot (milliseconds, or a duration such as `3s`; the SDK's 10 s when unset). Scripts that probe a
 * server that may be down set it short.
 */
function connectTimeout(env: NodeJS.ProcessEnv): { connectTimeout?: number } {
  const raw = env.LOOPWRIGHT_CONNECT_TIMEOUT?.trim();
  if (!raw) return {};
  let ms: number;
  try {
    ms = msToNumber(/^\d+$/.test(raw) ? Number(raw) : (raw as `${number}s`));
  } catch {
    ms = NaN;
  }
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new TemporalConfigError(`Invalid LOOPWRIGHT_CONNECT_TIMEOUT: expected milliseconds or a duration such as 3s (got "${raw}")`, 'LOOPWRIGHT_CONNECT_TIMEOUT');
  }
  return { connectTimeout: ms };
}
