/**
 * Kinds of value of the session's own settings, beyond the plain ones of kinds.ts: a host id, model
 * prices, MCP servers, agent patterns, command rules. Same rules and words as the session's input check has always
 * had; plain functions, for the workflow sandbox.
 */
import { HOST_ID_PATTERN } from '../files-host';
import { commandRuleProblem } from '../commands/command-rules';
import type { ModelPrice } from '../budget-types';
import type { McpServerConfig } from '../offered-tools';
import { boolean, describe, type Field, jsonObject, type Kind, lineList, nonEmptyString, numberIn, objectOf, oneOf, positiveWholeNumber, problem, recordOf, stringList, stringMap } from './kinds';

/** A host id (common/files-host.ts). */
export const hostId: Kind<string> = {
  type: "host id (letters, digits, '.', '_', '-'; at most 100)",
  check: (value) => (typeof value === 'string' && HOST_ID_PATTERN.test(value) ? undefined : problem(`expected a ${hostId.type}, got ${describe(value)}`)),
};

const price: Kind<ModelPrice> = objectOf(
  '{ input, output, cacheRead?, cacheWrite? }',
  { input: { kind: numberIn(0, 1e9), required: true }, output: { kind: numberIn(0, 1e9), required: true }, cacheRead: { kind: numberIn(0, 1e9) }, cacheWrite: { kind: numberIn(0, 1e9) } },
  true,
);

/** Prices per model, `{ model: { input, output } }`, per million tokens. */
export const prices: Kind<Record<string, ModelPrice>> = recordOf(price, 'object of { input, output, cacheRead?, cacheWrite? } by model');

const optional = (kind: Kind<unknown>): Field => ({ kind });
const required = (kind: Kind<unknown>): Field => ({ kind, required: true });

const MCP_COMMON = { alwaysAllow: optional(stringList), disabled: optional(boolean), timeout: optional(positiveWholeNumber) };
const mcpHttp = objectOf<McpServerConfig>('MCP server', { type: optional(oneOf(['http', 'streamable-http'])), url: required(nonEmptyString), headers: optional(stringMap), ...MCP_COMMON }, true);
const mcpStdio = objectOf<McpServerConfig>(
  'MCP server',
  { type: optional(oneOf(['stdio'])), command: required(nonEmptyString), args: optional(lineList), env: optional(stringMap), cwd: optional(nonEmptyString), ...MCP_COMMON },
  true,
);

const mcpServer: Kind<McpServerConfig> = {
  type: 'MCP server',
  // A URL makes it a streamable HTTP server; otherwise a command (stdio).
  check: (value) => jsonObject.check(value) ?? ((value as Record<string, unknown>).url !== undefined ? mcpHttp.check(value) : mcpStdio.check(value)),
};

/** MCP servers by name: each a command (stdio) or a URL (streamable HTTP), as in `.mcp.json`. */
export const mcpServers: Kind<Record<string, McpServerConfig>> = recordOf(mcpServer, 'MCP servers by name, as in .mcp.json', (name) =>
  !/^[A-Za-z0-9_-]{1,40}$/.test(name) || name.includes('__') ? 'a server name takes letters, digits, _ and - (at most 40, no "__")' : undefined,
);

/** Agent ids or `*` patterns (`bmm/*`): letters, digits, `_`, `-`, `.`, `/` and `*`. */
export const agentPatterns: Kind<string[]> = {
  type: 'list of agent ids or * patterns',
  check: (value) => {
    const found = stringList.check(value);
    if (found) return found;
    const bad = (value as string[]).findIndex((entry) => !/^[A-Za-z0-9_.*/-]{1,200}$/.test(entry));
    return bad < 0 ? undefined : { at: String(bad), reason: `an agent id or pattern takes letters, digits, _, -, ., / and * (at most 200 characters), got ${describe((value as string[])[bad])}` };
  },
};

/** Command rules (common/commands/command-rules.ts): each one simple command, `*` for any run of characters. */
export const commandPatterns: Kind<string[]> = {
  type: 'list of command patterns',
  check: (value) => {
    const found = stringList.check(value);
    if (found) return found;
    for (const [i, entry] of (value as string[]).entries()) {
      const bad = commandRuleProblem(entry);
      if (bad !== undefined) return { at: String(i), reason: bad };
    }
    return undefined;
  },
};

/**
 * An object of type T of which only these fields are checked, all required; others pass unchecked
 * (`continued`, whose transcript is checked by hash on arrival).
 */
export function partialObject<T>(type: string, fields: Readonly<Record<string, Kind<unknown>>>): Kind<T> {
  return objectOf(type, Object.fromEntries(Object.entries(fields).map(([name, kind]) => [name, required(kind)])), false);
}
