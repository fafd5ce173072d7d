/**
 * Ending the process only once what it printed has left it. Writes to a pipe are asynchronous in
 * Node on POSIX, and `process.exit` drops whatever is still queued: a `--json` document larger
 * than the pipe's buffer (64 KB on Linux) was cut there, and the reader got no JSON at all.
 */

/** Longest wait for a reader that stopped reading; the process then exits regardless. */
const FLUSH_TIMEOUT_MS = 30_000;

/** Exit with `code` once stdout and stderr have handed everything written so far to the OS. */
export function exitWhenFlushed(code: number, exit: (code: number) => void = (c) => process.exit(c)): void {
  const flushed = (stream: NodeJS.WriteStream): Promise<void> =>
    new Promise((resolve) => {
      // A write's callback runs after every earlier write of the stream has been handed over.
      if (stream.destroyed || !stream.writable) resolve();
      else stream.write('', () => resolve());
    });
  const timer = setTimeout(() => exit(code), FLUSH_TIMEOUT_MS);
  timer.unref();
  void Promise.all([flushed(process.stdout), flushed(process.stderr)]).then(() => {
    clearTimeout(timer);
    exit(code);
  });
}
