/** Where a command prints: stdout for results, stderr for progress and errors. Tests pass their own. */
export interface CommandOutput {
  log(line: string): void;
  error(line: string): void;
}

/** The process's own stdout and stderr. */
export const consoleOutput: CommandOutput = {
  log: (line) => process.stdout.write(`${line}\n`),
  error: (line) => process.stderr.write(`${line}\n`),
};

/** A usage mistake on the command line: printed with the usage text, exit status 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Messages of the SDK's wrapper errors, which say nothing their cause does not. */
const SDK_WRAPPERS = new Set(['Workflow Update failed', 'Workflow execution failed', 'Activity task failed']);

/** An error's message with its causes in one line; Temporal failures keep the useful part in the causes. */
export function describeError(err: unknown): string {
  const parts: string[] = [];
  for (let current: unknown = err; current instanceof Error && parts.length < 5; current = current.cause) {
    if (!parts.includes(current.message) && !SDK_WRAPPERS.has(current.message)) parts.push(current.message);
  }
  return parts.length ? parts.join(': ') : String(err);
}
