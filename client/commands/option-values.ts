/**
 * Parsers of option and argument values for the command line. A bad value throws commander's
 * InvalidArgumentError, which names the option or argument and exits with the usage status.
 * Loaded with the command line itself (for `--help` too), so it imports nothing else.
 */
import { InvalidArgumentError } from 'commander';
import type { ApprovalPolicy } from '../../common/session-types';

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
  if (raw === 'none' || raw === 'writes' || raw === 'all') return raw;
  const tools = raw.split(',').map((t) => t.trim()).filter(Boolean);
  if (tools.length === 0) throw new InvalidArgumentError('Expected none, writes, all or a comma-separated list of tools.');
  return tools;
}

/** A repeatable option: each use adds a value. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
