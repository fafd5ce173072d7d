/**
 * Typed errors of the bundle runtime. Each class sets `name` to its own class name; these names are
 * stable (clients and the activity boundary match on them), so never rename a class.
 *
 * They are operator errors (a bad bundle, agent file or config) except `SecurityViolationError`,
 * `ConfigVariableNotFoundError` and `VariableCycleError`, which tools also return to the model.
 */

/** Base of every bundle-runtime error. `file` and `field` say where the problem is, when known. */
export class BundleError extends Error {
  file?: string;
  field?: string;

  constructor(message: string, details: { file?: string; field?: string; cause?: unknown } = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    if (details.file !== undefined) this.file = details.file;
    if (details.field !== undefined) this.field = details.field;
  }
}

/** An agent file is malformed: no `<agent>` element, an unclosed tag (with its line), a missing attribute. */
export class AgentParseError extends BundleError {
  /** 1-based line of the problem in the agent file, when known. */
  line?: number;

  constructor(file: string, problem: string, details: { line?: number; field?: string } = {}) {
    super(`Invalid agent file ${file}: ${problem}`, { file, field: details.field });
    if (details.line !== undefined) this.line = details.line;
  }
}

/** A `{variable}` (or `{config_source}:key`) has no value. `available` is sorted. */
export class ConfigVariableNotFoundError extends BundleError {
  readonly key: string;
  readonly available: string[];

  constructor(key: string, available: string[], details: { file?: string; field?: string } = {}) {
    const sorted = [...available].sort();
    super(`Config variable not found: ${key}\nAvailable variables: ${sorted.join(', ')}`, details);
    this.key = key;
    this.available = sorted;
  }
}

/** Variables that refer to each other in a loop (`a -> b -> a`), so they can never resolve. */
export class VariableCycleError extends BundleError {
  /** The variables in the cycle, in order, the first repeated at the end. */
  readonly cycle: string[];

  constructor(cycle: string[], details: { file?: string; field?: string } = {}) {
    super(`Variable cycle: ${cycle.join(' -> ')}`, details);
    this.cycle = cycle;
  }
}

/** Why a path was refused; kept for logs and tests, never includes the path itself. */
export type SecurityViolationReason = 'outside-roots' | 'symlink-loop' | 'invalid-path' | 'no-roots';

/**
 * A path resolved outside the allowed roots (or could not be checked). The message is fixed and
 * deliberately says nothing about the path, so a model probing the file system learns nothing.
 */
export class SecurityViolationError extends BundleError {
  readonly reason: SecurityViolationReason;

  constructor(reason: SecurityViolationReason = 'outside-roots') {
    super('Security violation: Access denied');
    this.reason = reason;
  }
}

/** A file named by a critical action could not be loaded; agent initialisation halts. */
export class CriticalActionError extends BundleError {
  readonly instruction: string;

  constructor(instruction: string, cause: unknown, details: { file?: string } = {}) {
    const causeMessage = cause instanceof Error ? cause.message : String(cause);
    super(`Critical action failed: ${instruction}\nError: ${causeMessage}`, { ...details, cause });
    this.instruction = instruction;
  }
}

/** The bundle path is not a bundle folder nor an installed BMAD tree, or its manifest is invalid. */
export class BundleLoadError extends BundleError {}

/** No agent in the bundle matches the requested id. `available` lists the ids that would. */
export class AgentNotFoundError extends BundleError {
  readonly agentId: string;
  readonly available: string[];

  constructor(agentId: string, available: string[]) {
    const sorted = [...available].sort();
    super(`Agent not found: ${agentId}\nAvailable agents: ${sorted.length > 0 ? sorted.join(', ') : '(none)'}`);
    this.agentId = agentId;
    this.available = sorted;
  }
}
