/**
 * Errors of the Temporal server layer, each with a stable `name` so that callers (the command
 * line, tests) tell them apart without parsing messages.
 */

/** No usable `temporal` CLI was found, or provisioning it failed; the message says how to get one. */
export class TemporalToolNotFoundError extends Error {
  override readonly name = 'TemporalToolNotFoundError';
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

/** A connection setting (environment variable, config file, profile) or a pid file is invalid. */
export class TemporalConfigError extends Error {
  override readonly name = 'TemporalConfigError';
  constructor(
    message: string,
    /** The variable, file or option at fault. */
    readonly field: string,
  ) {
    super(message);
  }
}
