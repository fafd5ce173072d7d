/**
 * Errors of the Temporal server layer. Each has a stable `name` so callers (the command line,
 * tests) can tell them apart without parsing messages.
 */

/** No usable Temporal executable was found and none could be installed. */
export class TemporalToolNotFoundError extends Error {
  override readonly name = 'TemporalToolNotFoundError';
  constructor(
    message: string,
    /** Which tool was looked for: the CLI (`temporal`) or the time-skipping test server. */
    readonly tool: 'temporal' | 'temporal-test-server',
    /** Every place that was tried, in order, with why it did not work. */
    readonly attempts: string[],
  ) {
    super(message);
  }
}

/** The dev server did not start or did not become healthy in time. */
export class DevServerStartError extends Error {
  override readonly name = 'DevServerStartError';
  constructor(
    message: string,
    /** The last lines the server wrote, for the operator to read. */
    readonly logTail: string,
  ) {
    super(message);
  }
}

/** A Temporal connection setting (environment variable or option) is invalid. */
export class TemporalConfigError extends Error {
  override readonly name = 'TemporalConfigError';
  constructor(
    message: string,
    /** The environment variable or option at fault. */
    readonly field: string,
  ) {
    super(message);
  }
}
