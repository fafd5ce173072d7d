/**
 * Parsers of option and argument values for the command line. A bad value throws commander's
 * InvalidArgumentError, which names the option or argument and exits with the usage status.
 * `FLAG_PARSERS` holds the ones the settings table's flags name (common/settings/setting.ts).
 * Loaded with the command line itself (for `--help` too), so it imports nothing of the command line.
 */
import { InvalidArgumentError } from 'commander';
import type { ApprovalPolicy, ModelPrice } from '../../common/session-types';
import { orList } from '../../common/settings/kinds';
import type { FlagParsers } from '../../common/settings/setting';
import { APPROVAL_POLICIES } from '../../common/settings/session-settings';
import { TOOL_PATTERN, TOOL_PATTERN_RULE } from '../../common/tool-patterns';
import { commandRuleProblem } from '../../common/commands/command-rules';

/** A whole number >= 1 (iteration limits, turn numbers, list sizes). */
export function positiveInt(raw: string): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isInteger(value) || value < 1) throw new InvalidArgumentError('Expected a positive whole number.');
  return value;
}

/** A whole number >= 0 (a message index). */
export function wholeNumber(raw: string): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isInteger(value) || value < 0) throw new InvalidArgumentError('Expected a whole number >= 0.');
  return value;
}

/** A TCP port, 0 (any free port) to 65535. */
export function port(raw: string): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isInteger(value) || value < 0 || value > 65535) throw new InvalidArgumentError('Expected a port number (0-65535).');
  return value;
}

/** A port a server listens on, 1 to 65535. */
export function serverPort(raw: string): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isInteger(value) || value < 1 || value > 65535) throw new InvalidArgumentError('Expected a port number (1-65535).');
  return value;
}

/** Which tool calls wait for approval: none, writes, all, or a comma-separated list of tools. */
export function approvalPolicy(raw: string): ApprovalPolicy {
  const policy = APPROVAL_POLICIES.find((p) => p === raw);
  if (policy !== undefined) return policy;
  const tools = raw
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  if (tools.length === 0) throw new InvalidArgumentError(`Expected ${APPROVAL_POLICIES.join(', ')} or a comma-separated list of tools.`);
  return tools;
}

/** A repeatable option: each use adds a value. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** A number > 0 (a cost budget). */
export function positiveNumber(raw: string): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value <= 0) throw new InvalidArgumentError('Expected a number > 0.');
  return value;
}

/** A sampling temperature, 0 to 2. */
export function temperature(raw: string): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < 0 || value > 2) throw new InvalidArgumentError('Expected a number from 0 to 2.');
  return value;
}

/** A share strictly between 0 and 1 (when the context is compacted). */
export function openFraction(raw: string): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value <= 0 || value >= 1) throw new InvalidArgumentError('Expected a number between 0 and 1 (not 0 or 1), e.g. 0.8.');
  return value;
}

/** A parser of one of `values` (`--reasoning-effort`, `--tool-choice`): `Expected a, b or c.` otherwise. */
export function oneOfValues<V extends string>(values: readonly V[]): (raw: string) => V {
  return (raw) => {
    const value = values.find((v) => v === raw);
    if (value === undefined) throw new InvalidArgumentError(`Expected ${orList(values)}.`);
    return value;
  };
}

/** A JSON object (extra fields of the model request). */
export function jsonObject(raw: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw new InvalidArgumentError(`Expected a JSON object, e.g. '{"top_k": 40}' (${(err as Error).message}).`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new InvalidArgumentError(`Expected a JSON object, e.g. '{"top_k": 40}', not ${Array.isArray(value) ? 'a list' : String(value)}.`);
  return value as Record<string, unknown>;
}

/** A comma-separated list of model names, none empty. */
export function modelList(raw: string): string[] {
  const models = raw
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);
  if (models.length === 0) throw new InvalidArgumentError('Expected a comma-separated list of models.');
  return models;
}

/** A repeatable model option: each use adds a model (or several, comma-separated). */
export function models(raw: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), ...modelList(raw)];
}

/**
 * A repeatable `model=input,output[,cacheRead[,cacheWrite]]` price per million tokens (`*` as the
 * model: any other); each use adds a model (a later one wins for the same model).
 */
export function price(raw: string, previous: Record<string, ModelPrice> | undefined): Record<string, ModelPrice> {
  const match = /^([^=]+)=([^,]+),([^,]+)(?:,([^,]+))?(?:,([^,]+))?$/.exec(raw.trim());
  const model = match?.[1]!.trim();
  const numbers = (match?.slice(2) ?? []).map((text) => (text === undefined ? undefined : text.trim() === '' ? Number.NaN : Number(text)));
  if (!match || !model || numbers.some((n) => n !== undefined && (!Number.isFinite(n) || n < 0))) {
    throw new InvalidArgumentError(
      'Expected model=input,output: prices per million input and output tokens, e.g. gpt-4o-mini=0.15,0.6 (* as the model: any other), ' +
        'optionally then the prices of cached prompt tokens read and written, e.g. claude-sonnet-4-5=3,15,0.3,3.75.',
    );
  }
  const [input, output, cacheRead, cacheWrite] = numbers as [number, number, number | undefined, number | undefined];
  return { ...previous, [model]: { input, output, ...(cacheRead !== undefined ? { cacheRead } : {}), ...(cacheWrite !== undefined ? { cacheWrite } : {}) } };
}

/** A comma-separated list of tool names or patterns (`read_file,github__*`), none empty, each a valid name or pattern. */
export function toolPatternList(raw: string): string[] {
  const patterns = raw
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  if (patterns.length === 0) throw new InvalidArgumentError('Expected a comma-separated list of tool names or patterns, e.g. read_file,github__*.');
  const bad = patterns.find((p) => !TOOL_PATTERN.test(p));
  if (bad !== undefined) throw new InvalidArgumentError(`"${bad}": ${TOOL_PATTERN_RULE}.`);
  return patterns;
}

/** A repeatable tool option: each use adds a name or pattern (or several, comma-separated). */
export function toolPatterns(raw: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), ...toolPatternList(raw)];
}

/** A yes/no setting of the environment: 1, true, yes, on, or 0, false, no, off. */
export function onOff(raw: string): boolean {
  const value = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  if (['0', 'false', 'no', 'off'].includes(value)) return false;
  throw new InvalidArgumentError('Expected 1, true, yes or on, or 0, false, no or off.');
}

/** `--verify-attempts`: a whole number from 1 to 10. */
export function verifyAttempts(raw: string): number {
  const value = Number(raw.trim());
  if (!Number.isInteger(value) || value < 1 || value > 10) throw new InvalidArgumentError(`Expected a whole number from 1 to 10, got '${raw}'.`);
  return value;
}

/** `--delegate-to`: agent ids or `*` patterns (`pm`, `bmm/*`), comma-separated. */
export function agentPatternList(raw: string): string[] {
  const items = raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (items.length === 0) throw new InvalidArgumentError('Expected agent ids or * patterns, comma-separated, e.g. pm,bmm/*.');
  const bad = items.find((item) => !/^[A-Za-z0-9_.*/-]{1,200}$/.test(item));
  if (bad !== undefined) throw new InvalidArgumentError(`"${bad}": an agent id or pattern takes letters, digits, _, -, ., / and *.`);
  return items;
}

/** `--allow-command`, `--deny-command` (repeatable): each use adds one command rule, e.g. 'git status' or 'uv run {project-root}/_bmad/scripts/*'. */
export function commandPatterns(raw: string, previous: string[] | undefined): string[] {
  const bad = commandRuleProblem(raw);
  if (bad !== undefined) throw new InvalidArgumentError(`${bad.charAt(0).toUpperCase()}${bad.slice(1)}.`);
  return [...(previous ?? []), raw.trim()];
}

/** A parser of a flag value: `flag` parses each use (a repeatable one adds to `previous`), `env` its environment variable's value. */
export interface FlagParser<T> {
  flag: (raw: string, previous: T | undefined) => T;
  /** For a repeatable flag, the variable's value as a whole (`LOOPWRIGHT_FALLBACK_MODELS=a,b`); else the flag's parser. */
  env?: (raw: string) => T;
}

/** The parsers the settings table's flags name, by name. */
export const FLAG_PARSERS: { readonly [P in keyof FlagParsers]: FlagParser<FlagParsers[P]> } = {
  positiveInt: { flag: positiveInt },
  wholeNumber: { flag: wholeNumber },
  positiveNumber: { flag: positiveNumber },
  temperature: { flag: temperature },
  openFraction: { flag: openFraction },
  verifyAttempts: { flag: verifyAttempts },
  jsonObject: { flag: jsonObject },
  collect: { flag: collect, env: (raw) => [raw] },
  models: { flag: models, env: modelList },
  price: { flag: price },
  toolPatternList: { flag: toolPatternList },
  toolPatterns: { flag: toolPatterns, env: toolPatternList },
  agentPatternList: { flag: agentPatternList },
  commandPatterns: { flag: commandPatterns },
  approvalPolicy: { flag: approvalPolicy },
};
