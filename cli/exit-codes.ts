/**
 * The exit status of every `loopwright` command, in one place, and how an error maps to one.
 *
 * Loaded by the command line before any command module, so it imports nothing heavy: errors of the
 * server layer and of the SDK are told apart by their stable `name` (and a gRPC status code), not
 * by `instanceof`.
 */
import { SIGNAL_EXIT_CODES } from './exit-on-signal';
import { type CommandOutput, describeError, UsageError } from './output';

/** The exit statuses, as `loopwright --help` and docs/reference/cli.md list them. */
export const EXIT = {
  /** The command did what it was asked. */
  OK: 0,
  /** The turn or the command failed: a failed, stuck, interrupted, max_iterations, truncated, filtered, refused or budget_exceeded turn, validation problems, a session's refusal. */
  FAILED: 1,
  /** Bad usage: an unknown command or option, a missing argument, a bad value. */
  USAGE: 2,
  /** The Temporal server is unreachable (or the embedded one could not start), or the connection settings are bad. */
  UNREACHABLE: 3,
  /** A headless run ended `partial`: it produced its artifact, with assumptions or open questions to review. */
  PARTIAL: 4,
  /** Stopped by Ctrl-C (SIGINT): 128 + 2, as shells report it; the session stays on the server. */
  SIGINT: SIGNAL_EXIT_CODES.SIGINT,
  /** Stopped by SIGTERM: 128 + 15. */
  SIGTERM: SIGNAL_EXIT_CODES.SIGTERM,
} as const;

/** The exit statuses with what each means, for help texts. */
export const EXIT_STATUS_HELP: readonly (readonly [number, string])[] = [
  [EXIT.OK, 'success'],
  [
    EXIT.FAILED,
    'the turn or command failed (a failed, stuck, interrupted or max_iterations turn; a reply cut off, filtered or refused; a budget reached; validation problems; the session refused the request)',
  ],
  [EXIT.USAGE, 'bad usage (unknown command or option, missing argument, bad value)'],
  [EXIT.UNREACHABLE, 'the Temporal server is unreachable or could not be started, or the connection settings are bad'],
  [EXIT.PARTIAL, 'a headless run (run --headless) ended partial: its artifact is there, with assumptions or open questions to review'],
  [EXIT.SIGINT, 'stopped by Ctrl-C (SIGINT); 143 for SIGTERM. The session stays on the server'],
];

/** `type` of a usage mistake in `--json` failures. */
export const USAGE_ERROR = 'UsageError';
/** `type` of a connection that failed (nothing answers, or the server went away) in `--json` failures. */
export const SERVER_UNREACHABLE = 'ServerUnreachable';

/** What a failure reports: its message, its `type` (failure type or error class) and its exit status. */
export interface Failure {
  message: string;
  type: string;
  exitCode: number;
}

/** Errors of the server layer that mean no server could be reached or started (client/server/errors.ts). */
const SERVER_ERRORS = new Set(['TemporalConfigError', 'DevServerStartError', 'TemporalToolNotFoundError']);

/** gRPC status UNAVAILABLE: the server is down or unreachable. */
const GRPC_UNAVAILABLE = 14;

/**
 * The failure an error stands for. A session's refusal keeps its failure type (e.g.
 * `LoopwrightBusy`); other errors are named by class.
 */
export function failureOf(err: unknown, env: NodeJS.ProcessEnv = process.env): Failure {
  const message = describeError(err);
  if (err instanceof UsageError) return { message, type: USAGE_ERROR, exitCode: EXIT.USAGE };
  const name = err instanceof Error ? err.name : undefined;
  if (name !== undefined && SERVER_ERRORS.has(name)) return { message, type: name, exitCode: EXIT.UNREACHABLE };
  if (isConnectionFailure(err)) {
    const where = serverAddressOf(err) ?? (env.TEMPORAL_ADDRESS ? `${env.TEMPORAL_ADDRESS} (TEMPORAL_ADDRESS)` : undefined);
    return { message: `cannot reach the Temporal server${where ? ` at ${where}` : ''}: ${message}`, type: SERVER_UNREACHABLE, exitCode: EXIT.UNREACHABLE };
  }
  const type = (err as { type?: unknown } | undefined)?.type;
  return { message, type: typeof type === 'string' ? type : (name ?? 'Error'), exitCode: EXIT.FAILED };
}

/**
 * Marks a failure to connect with the address tried and where it came from (e.g.
 * `host:7233 (profile "cloud" of /home/me/temporal.toml)`), for its message; returns `err`.
 */
export function withServerAddress(err: unknown, where: string): unknown {
  if (err instanceof Error) (err as { serverAddress?: string }).serverAddress ??= where;
  return err;
}

function serverAddressOf(err: unknown): string | undefined {
  for (let current: unknown = err, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const where = (current as { serverAddress?: unknown }).serverAddress;
    if (typeof where === 'string') return where;
  }
  return undefined;
}

/**
 * True when the error (or a cause) says the client could not reach the server: the connect
 * deadline passed (`Failed to connect before the deadline`, what @temporalio/client reports when
 * nothing answers), the first call failed (`Failed to connect to Temporal server`), or a call
 * failed with gRPC UNAVAILABLE.
 */
export function isConnectionFailure(err: unknown): boolean {
  for (let current: unknown = err, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if (/^Failed to connect (before the deadline|to Temporal server)/.test(current.message)) return true;
    if ((current as { code?: unknown }).code === GRPC_UNAVAILABLE) return true;
  }
  return false;
}

/**
 * Print a failure and return its exit status: with `json`, one object on stdout, `{error, type}`
 * plus `fields` (e.g. a failed turn's result); else one line on stderr (`Rejected: ...` for a
 * session's refusal, `Error: ...` otherwise).
 */
export function reportFailure(out: CommandOutput, err: unknown, options: { json?: boolean; fields?: Record<string, unknown> } = {}): number {
  const failure = failureOf(err);
  if (options.json) out.log(JSON.stringify({ ...options.fields, error: failure.message, type: failure.type }));
  else out.error(`${(err as Error | undefined)?.name === 'SessionRejectedError' ? 'Rejected' : 'Error'}: ${failure.message}`);
  return failure.exitCode;
}
