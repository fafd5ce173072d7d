/**
 * Ctrl-C and SIGTERM end every `loopwright` command within a few seconds.
 *
 * A session lives on the Temporal server, not in the command, so a command that is only waiting (for
 * a turn, a query, a worker) can simply stop: on the first SIGINT or SIGTERM the handler installed
 * by the command line prints one line saying how to rejoin the session, gives the workers running in
 * this process a short, bounded time to stop, and exits with 130 (SIGINT) or 143 (SIGTERM). A second
 * signal exits at once.
 *
 * Long-lived commands that stop gracefully on a signal (`loopwright worker`, a foreground
 * `loopwright server`) register with {@link onSignalGracefully}: the first signal is theirs, and a
 * second one still exits at once.
 *
 * The Temporal runtime is installed without signal handlers of its own (see runtime-logging.ts), so
 * this module alone decides what a signal does.
 */

/** The signals that stop a command. */
export type StopSignal = 'SIGINT' | 'SIGTERM';

/** Exit status after a signal, as shells report it: 128 + the signal's number. */
export const SIGNAL_EXIT_CODES: Readonly<Record<StopSignal, number>> = { SIGINT: 130, SIGTERM: 143 };

/** How long the first signal waits for the registered clean-ups (in-process workers stopping). */
export const DEFAULT_EXIT_GRACE_MS = 3_000;

/** Environment variable overriding {@link DEFAULT_EXIT_GRACE_MS} (milliseconds). */
export const EXIT_GRACE_ENV = 'LOOPWRIGHT_EXIT_GRACE_MS';

/** Something to stop before the process exits on a signal; it may return a promise. */
export type ExitCleanup = () => unknown;

/** Options of {@link installExitOnSignal}; the defaults are the real process's. */
export interface ExitOnSignalOptions {
  /** Time the clean-ups get after the first signal (default LOOPWRIGHT_EXIT_GRACE_MS, else 3 s). */
  graceMs?: number;
  /** Writes the one line printed on the first signal (default: stderr). */
  write?: (line: string) => void;
  /** Ends the process (default: process.exit). */
  exit?: (code: number) => void;
  /** Environment to read the grace period from (default process.env). */
  env?: NodeJS.ProcessEnv;
}

const SIGNALS: readonly StopSignal[] = ['SIGINT', 'SIGTERM'];

let hint: string | undefined;
const cleanups = new Set<ExitCleanup>();
const gracefulHandlers = new Set<(signal: StopSignal) => void | 'handled'>();
let uninstallCurrent: (() => void) | undefined;

/**
 * What to tell the user on a signal, e.g. `loopwright status <id>` once a session id is known;
 * undefined clears it.
 */
export function setRejoinHint(text: string | undefined): void {
  hint = text;
}

/** The current rejoin hint. */
export function rejoinHint(): string | undefined {
  return hint;
}

/**
 * Run `fn` (with a bounded wait) before the process exits on a signal; returns a function that
 * unregisters it, to call once the thing it stops has stopped anyway.
 */
export function onExitCleanup(fn: ExitCleanup): () => void {
  const entry: ExitCleanup = () => fn();
  cleanups.add(entry);
  return () => {
    cleanups.delete(entry);
  };
}

/**
 * For a long-lived command that stops gracefully: the first signal calls `fn` (which starts the
 * stop; the command then returns as usual) instead of exiting; a second signal still exits at once.
 * Returns a function that unregisters it.
 */
export function onSignalGracefully(fn: (signal: StopSignal) => void | 'handled'): () => void {
  const entry = (signal: StopSignal): void | 'handled' => fn(signal);
  gracefulHandlers.add(entry);
  return () => {
    gracefulHandlers.delete(entry);
  };
}

/** The line printed on the first signal. */
export function stopLine(signal: StopSignal, rejoin: string | undefined = hint): string {
  return rejoin ? `Stopped waiting (${signal}). The session stays on the server: ${rejoin}` : `Stopped (${signal}).`;
}

/**
 * Install the SIGINT and SIGTERM handlers (once; a second call replaces the first). Returns a
 * function that removes them and forgets the registered hint, clean-ups and graceful handlers.
 */
export function installExitOnSignal(options: ExitOnSignalOptions = {}): () => void {
  uninstallCurrent?.();
  const graceMs = options.graceMs ?? graceFromEnv(options.env ?? process.env);
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let first: StopSignal | undefined;
  let graceTimer: NodeJS.Timeout | undefined;
  let removed = false;

  const onSignal = (signal: StopSignal): void => {
    if (first !== undefined) {
      exit(SIGNAL_EXIT_CODES[signal]);
      return;
    }
    first = signal;
    const graceful = [...gracefulHandlers];
    if (graceful.length > 0) {
      let failed = false;
      let handled = true;
      for (const handler of graceful) {
        try {
          if (handler(signal) !== 'handled') handled = false;
        } catch (err) {
          failed = true;
          write(`Could not stop gracefully: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      // Every handler dealt with the signal fully (e.g. chat interrupting a turn): the next one is a first again.
      if (!failed && handled) {
        first = undefined;
        return;
      }
      // The command stops itself and returns; when it could not start stopping, exit as any command would.
      if (!failed) return;
    }
    write(stopLine(signal));
    const pending = [...cleanups].map(async (fn) => fn());
    const timeout = new Promise<void>((resolve) => {
      graceTimer = setTimeout(resolve, pending.length > 0 ? graceMs : 0);
    });
    void Promise.race([Promise.allSettled(pending), timeout]).then(() => {
      clearTimeout(graceTimer);
      if (!removed) exit(SIGNAL_EXIT_CODES[signal]);
    });
  };

  const listeners = SIGNALS.map((signal) => {
    const listener = (): void => onSignal(signal);
    process.on(signal, listener);
    return [signal, listener] as const;
  });
  const uninstall = (): void => {
    removed = true;
    clearTimeout(graceTimer);
    for (const [signal, listener] of listeners) process.off(signal, listener);
    hint = undefined;
    cleanups.clear();
    gracefulHandlers.clear();
    if (uninstallCurrent === uninstall) uninstallCurrent = undefined;
  };
  uninstallCurrent = uninstall;
  return uninstall;
}

function graceFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env[EXIT_GRACE_ENV];
  if (raw === undefined || raw.trim() === '') return DEFAULT_EXIT_GRACE_MS;
  const value = Number(raw);
  return Number.isFinite(value) && value >= 0 ? value : DEFAULT_EXIT_GRACE_MS;
}
