/**
 * Typed errors of the bundle runtime. Each class sets `name` to its own class name; these names are
 * stable (clients and the activity boundary match on them), so never rename a class.
 *
 * They are operator errors (a bad bundle, agent file or config) except `SecurityViolationError`,
 * `ConfigVariableNotFoundError` and `VariableCycleError`, which tools also return to the model.
 */

import { MAX_LISTED_NAMES } from './limits';

/**
 * Base of every bundle-runtime error. `file` and `field` say where the problem is, when known. The
 * message always names `file`: when the text given does not contain it, a last line `File: <file>`
 * is added (here, or by `inFile` when the file becomes known later).
 */
export class BundleError extends Error {
  file?: string;
  field?: string;

  constructor(message: string, details: { file?: string; field?: string; cause?: unknown } = {}) {
    super(namingFile(message, details.file), details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    if (details.file !== undefined) this.file = details.file;
    if (details.field !== undefined) this.field = details.field;
  }
}

function namingFile(message: string, file: string | undefined): string {
  return file === undefined || file === '' || message.includes(file) ? message : `${message}\nFile: ${file}`;
}

/**
 * Gives `error` the file (and field) it happened in, when it has none yet, and names that file in
 * its message. Errors are often raised where the file is unknown (variable resolution) and get
 * their file on the way out. A `SecurityViolationError` is returned unchanged: it never names paths.
 */
export function inFile<E extends BundleError>(error: E, file: string, field?: string): E {
  if (error instanceof SecurityViolationError) return error;
  if (error.file === undefined) {
    error.file = file;
    error.message = namingFile(error.message, file);
  }
  if (error.field === undefined && field !== undefined) error.field = field;
  return error;
}

/**
 * A bundle file exceeds one of the limits in `limits.ts` (size, nesting, count, expansion). `limit`
 * is the constant's name (`MAX_YAML_BYTES`), `max` its value; the message names both and the file.
 */
export class LimitExceededError extends BundleError {
  readonly limit: string;
  readonly max: number;
  /** 1-based line of the problem, when known. */
  line?: number;

  constructor(problem: string, limit: string, max: number, details: { file?: string; field?: string; line?: number } = {}) {
    super(`${problem} (limit ${limit}: ${max})`, { file: details.file, field: details.field });
    this.limit = limit;
    this.max = max;
    if (details.line !== undefined) this.line = details.line;
  }
}

/** A YAML file (config, workflow, manifest) does not parse: bad syntax, a duplicate key, an alias to nothing. */
export class YamlSyntaxError extends BundleError {
  /** What is wrong and where, without the file: `Map keys must be unique at line 3, column 1`. */
  readonly detail: string;
  /** 1-based line of the problem, when known. */
  line?: number;

  constructor(file: string, problem: string, details: { line?: number; column?: number; cause?: unknown } = {}) {
    const where = details.line === undefined ? '' : ` at line ${details.line}${details.column === undefined ? '' : `, column ${details.column}`}`;
    super(`Invalid YAML in ${file}: ${problem}${where}`, { file, cause: details.cause });
    this.detail = `${problem}${where}`;
    if (details.line !== undefined) this.line = details.line;
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

function listNames(sorted: string[]): string {
  if (sorted.length <= MAX_LISTED_NAMES) return sorted.join(', ');
  return `${sorted.slice(0, MAX_LISTED_NAMES).join(', ')} and ${sorted.length - MAX_LISTED_NAMES} more`;
}

/** A `{variable}` (or `{config_source}:key`) has no value. `available` is sorted (the message lists the first `MAX_LISTED_NAMES`). */
export class ConfigVariableNotFoundError extends BundleError {
  readonly key: string;
  readonly available: string[];

  constructor(key: string, available: string[], details: { file?: string; field?: string } = {}) {
    const sorted = [...available].sort();
    super(`Config variable not found: ${key}\nAvailable variables: ${listNames(sorted)}`, details);
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
