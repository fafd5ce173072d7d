/**
 * Typed errors of running a command in the sandbox, split by who is at fault. Each sets `name` to
 * its class name; the names are stable (the activity boundary will match on them).
 *
 * - `SandboxUnavailableError`: the machine (operator): no sandbox can be made here.
 * - `SandboxRequestError` (and `SecretEnvironmentError`): the caller asked for something the
 *   sandbox refuses (a variable that looks like a secret, a broad root, a bad limit).
 * - `SandboxSetupError`: the sandbox could be made in general but not for this request (a root
 *   the sandbox's user cannot reach).
 * - `UvNotFoundError`: the machine (operator): a command ran `uv` and the worker has none to offer.
 *
 * A path outside the roots or a secret file is refused with the file sandbox's own errors
 * (`SecurityViolationError`, `SecretFileError` from `bundle/sandbox/path-guard.ts`), unchanged.
 * The command's own failure (non-zero exit, signal, timeout) is never an error: it is the result.
 */

/** Base of the errors of `runSandboxed`. */
export class CommandSandboxError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * No sandbox can be made on this machine: `bwrap` is not on the PATH, or it fails its self-check
 * (user namespaces disabled, `prlimit` missing). `reason` says what, `fix` what the operator can do.
 * Raised unless the caller passed `allowUnsandboxed: true`.
 */
export class SandboxUnavailableError extends CommandSandboxError {
  readonly reason: string;
  readonly fix: string;

  constructor(reason: string, fix: string, options?: { cause?: unknown }) {
    super(`Commands cannot run in a sandbox on this machine: ${reason}. ${fix}`, options);
    this.reason = reason;
    this.fix = fix;
  }
}

/** The request is refused before anything runs; `field` names the offending part (`env.OPENAI_API_KEY`, `writeRoots[1]`). */
export class SandboxRequestError extends CommandSandboxError {
  readonly field: string;

  constructor(message: string, field: string) {
    super(message);
    this.field = field;
  }
}

/** A variable passed for the command's environment looks like a credential; `variable` is its name. */
export class SecretEnvironmentError extends SandboxRequestError {
  readonly variable: string;

  constructor(variable: string, why: string) {
    super(`Environment variable refused: ${variable} ${why}; credentials are never passed to sandboxed commands`, `env.${variable}`);
    this.variable = variable;
  }
}

/** `bwrap` could not set the sandbox up for this request; `detail` is what it said. */
export class SandboxSetupError extends CommandSandboxError {
  readonly detail: string;

  constructor(detail: string) {
    super(`The sandbox could not be set up: ${detail}`);
    this.detail = detail;
  }
}

/**
 * A command ran `uv` (a skill's `uv run` script) and the worker has none to offer it: none in the
 * tools folder nor on the worker's PATH, or one the command's user cannot reach. `reason` says
 * which, `fix` how the operator installs it.
 */
export class UvNotFoundError extends CommandSandboxError {
  readonly reason: string;
  readonly fix: string;

  constructor(reason: string, fix: string) {
    super(`uv is not available to commands on this worker: ${reason}. ${fix}`);
    this.reason = reason;
    this.fix = fix;
  }
}
