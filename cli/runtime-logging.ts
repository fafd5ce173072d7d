/**
 * How much the Temporal runtime in a command prints. Workers log every iteration at INFO, which is
 * right for `loopwright worker` but noise under `loopwright run`; `LOOPWRIGHT_LOG_LEVEL` overrides.
 */
import { DefaultLogger, type LogLevel, Runtime } from '@temporalio/worker';

const LEVELS: readonly LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];
let installed = false;

/**
 * Install the runtime logger once per process, before any worker or native connection exists. The
 * runtime gets no signal handlers: see exit-on-signal.ts.
 */
export function installRuntimeLogging(defaultLevel: LogLevel, env: NodeJS.ProcessEnv = process.env): void {
  if (installed) return;
  const raw = env.LOOPWRIGHT_LOG_LEVEL?.toUpperCase();
  if (raw && !LEVELS.includes(raw as LogLevel)) {
    throw new Error(`LOOPWRIGHT_LOG_LEVEL must be one of ${LEVELS.join(', ')}, got "${env.LOOPWRIGHT_LOG_LEVEL}"`);
  }
  const level = (raw as LogLevel | undefined) ?? defaultLevel;
  const metrics = metricsAddress(env);
  Runtime.install({
    logger: new DefaultLogger(level),
    // The SDK core prints its own logs to stdout unless they are forwarded; forwarded, they go to
    // stderr with ours, so `--json` output on stdout stays one clean object.
    telemetryOptions: {
      logging: { filter: { core: level === 'ERROR' ? 'ERROR' : 'WARN', other: 'ERROR' }, forward: {} },
      // The SDK's own worker metrics and Loopwright's (model latency, tokens, tool errors, turns by
      // status), in Prometheus format under /metrics.
      ...(metrics ? { metrics: { prometheus: { bindAddress: metrics } } } : {}),
    },
    // By default the runtime answers SIGINT and SIGTERM by shutting its workers down and nothing
    // else, which leaves a command waiting on its session forever. The command line's own handler
    // (exit-on-signal.ts) decides instead: commands exit within seconds, `loopwright worker` stops
    // gracefully.
    shutdownSignals: [],
  });
  installed = true;
}

/** `LOOPWRIGHT_METRICS` as host:port for the Prometheus endpoint, or undefined when unset. */
export function metricsAddress(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const raw = env.LOOPWRIGHT_METRICS?.trim();
  if (!raw) return undefined;
  const address = /^\d+$/.test(raw) ? `127.0.0.1:${raw}` : raw;
  const port = Number(address.slice(address.lastIndexOf(':') + 1));
  if (!address.includes(':') || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`LOOPWRIGHT_METRICS must be host:port (or a port) for the Prometheus endpoint, got "${env.LOOPWRIGHT_METRICS}"`);
  }
  return address;
}
