/**
 * The MCP servers of a project: `.mcp.json` read and checked at the edge. The file is shared with
 * other tools, which write their own top-level keys into it, so only `mcpServers` is read and
 * unknown keys are left alone. A bad file is the operator's mistake: `McpConfigError` names the
 * file and the field (`Invalid .mcp.json /p/.mcp.json: mcpServers.git.command: expected a string`).
 * Variables (`${VAR}`) stay unexpanded here: the configuration is recorded in workflow history as
 * written, and `mcp-variables.ts` expands it on the worker when a server is started.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { MCP_CONFIG_INVALID, type McpServerConfig } from '../../common/offered-tools';

/** Largest `.mcp.json` read, in bytes. */
export const MAX_MCP_CONFIG_BYTES = 1024 * 1024;

/** The file a project's servers are read from, in its root. */
export const MCP_CONFIG_FILE = '.mcp.json';

/** Server names: letters, digits, `_` and `-`, at most 40 characters, never `__` (the separator in tool names). */
export const MCP_SERVER_NAME_PATTERN = /^(?!.*__)[A-Za-z0-9_-]{1,40}$/;

/** Longest per-call timeout a configuration may ask for (one day), in milliseconds. */
const MAX_TIMEOUT_MS = 24 * 60 * 60 * 1000;

/**
 * A bad MCP configuration: bad JSON, a bad field, or a variable with no value. `file` is the file
 * (or the source, e.g. `session input`), `field` the dotted path of the bad field when there is one.
 * The message names both and never holds a variable's value. `name` and `type` are
 * `MCP_CONFIG_INVALID`, the failure type the activity reports.
 */
export class McpConfigError extends Error {
  readonly type = MCP_CONFIG_INVALID;
  readonly file: string;
  readonly field?: string;

  constructor(message: string, details: { file: string; field?: string; cause?: unknown }) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = MCP_CONFIG_INVALID;
    this.file = details.file;
    if (details.field !== undefined) this.field = details.field;
  }
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** HTTP header names (RFC 9110 tokens). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const common = {
  alwaysAllow: z.array(z.string().min(1)).optional(),
  disabled: z.boolean().optional(),
  timeout: z.number().int().positive().max(MAX_TIMEOUT_MS).optional(),
};

const stdioServer = z.object({
  ...common,
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: z.record(z.string().regex(ENV_NAME, 'environment variable names are letters, digits and _'), z.string()).optional(),
  cwd: z.string().min(1).optional(),
});

const httpServer = z.object({
  ...common,
  type: z.enum(['http', 'streamable-http']).optional(),
  url: z.string().min(1),
  headers: z.record(z.string().regex(HEADER_NAME, 'not a valid HTTP header name'), z.string()).optional(),
});

/**
 * Parses `.mcp.json` text. Unknown top-level keys are allowed; a missing `mcpServers` means no
 * servers. Throws `McpConfigError` naming `file` and the first bad field.
 */
export function parseMcpConfig(text: string, file: string): Record<string, McpServerConfig> {
  let raw: unknown;
  try {
    raw = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new McpConfigError(`Invalid ${MCP_CONFIG_FILE} ${file}: not valid JSON (${(error as Error).message})`, { file, cause: error });
  }
  const label = `${MCP_CONFIG_FILE} ${file}`;
  if (!isPlainObject(raw)) throw configError(label, file, '', 'expected an object');
  if (raw.mcpServers === undefined) return {};
  return checkServers(raw.mcpServers, label, file, 'mcpServers');
}

/**
 * Checks servers given some other way (a session's `mcpServers`), with the same rules as the file.
 * `source` names where they came from in messages (`session input`).
 */
export function parseMcpServers(value: unknown, source: string): Record<string, McpServerConfig> {
  return checkServers(value, `MCP servers (${source})`, source, 'mcpServers');
}

/**
 * Reads a `.mcp.json` file (at most `MAX_MCP_CONFIG_BYTES`). A missing file means no servers;
 * anything else wrong with it throws `McpConfigError`.
 */
export async function readMcpConfig(file: string): Promise<Record<string, McpServerConfig>> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new McpConfigError(`Invalid ${MCP_CONFIG_FILE} ${file}: cannot be read (${(error as Error).message})`, { file, cause: error });
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new McpConfigError(`Invalid ${MCP_CONFIG_FILE} ${file}: not a file`, { file });
    const buffer = Buffer.alloc(MAX_MCP_CONFIG_BYTES + 1);
    let length = 0;
    // Read up to one byte past the limit whatever `stat` said: the file may grow while it is read.
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > MAX_MCP_CONFIG_BYTES) {
      throw new McpConfigError(`Invalid ${MCP_CONFIG_FILE} ${file}: larger than ${MAX_MCP_CONFIG_BYTES} bytes`, { file });
    }
    return parseMcpConfig(buffer.subarray(0, length).toString('utf8'), file);
  } catch (error) {
    if (error instanceof McpConfigError) throw error;
    throw new McpConfigError(`Invalid ${MCP_CONFIG_FILE} ${file}: cannot be read (${(error as Error).message})`, { file, cause: error });
  } finally {
    await handle.close();
  }
}

/** The servers of the project at `projectRoot` (its `.mcp.json`; none when there is no such file). */
export function readProjectMcpConfig(projectRoot: string): Promise<Record<string, McpServerConfig>> {
  return readMcpConfig(path.join(projectRoot, MCP_CONFIG_FILE));
}

function checkServers(value: unknown, label: string, file: string, field: string): Record<string, McpServerConfig> {
  if (!isPlainObject(value)) throw configError(label, file, field, 'expected an object');
  const servers: Record<string, McpServerConfig> = {};
  for (const [name, entry] of Object.entries(value)) {
    if (!MCP_SERVER_NAME_PATTERN.test(name)) {
      const shown = name.length > 60 ? `${name.slice(0, 60)}...` : name;
      throw configError(label, file, `${field}.${shown}`, 'server names are letters, digits, _ and -, at most 40 characters, without __');
    }
    servers[name] = checkServer(entry, label, file, `${field}.${name}`);
  }
  return servers;
}

function checkServer(entry: unknown, label: string, file: string, field: string): McpServerConfig {
  if (!isPlainObject(entry)) throw configError(label, file, field, 'expected an object');
  const type = entry.type;
  if (type === 'sse') {
    throw configError(label, file, `${field}.type`, 'the sse transport is not supported; use streamable HTTP ("type": "http") or stdio');
  }
  let schema: typeof stdioServer | typeof httpServer;
  if (type === 'stdio') schema = stdioServer;
  else if (type === 'http' || type === 'streamable-http') schema = httpServer;
  else if (type !== undefined) throw configError(label, file, `${field}.type`, 'expected "stdio", "http" or "streamable-http"');
  else if (entry.command !== undefined && entry.url !== undefined) {
    throw configError(label, file, field, 'has both command and url; say which with "type": "stdio" or "http"');
  } else if (entry.command !== undefined) schema = stdioServer;
  else if (entry.url !== undefined) schema = httpServer;
  else throw configError(label, file, field, 'needs a command (a server the worker starts) or a url (a streamable HTTP server)');

  const parsed = schema.safeParse(entry);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const sub = [field, ...issue.path.map(String)].join('.');
    throw configError(label, file, sub, describeIssue(issue));
  }
  if ('url' in parsed.data && !parsed.data.url.includes('${')) {
    const problem = urlProblem(parsed.data.url);
    if (problem) throw configError(label, file, `${field}.url`, problem);
  }
  return parsed.data as McpServerConfig;
}

/** What is wrong with `url` as the address of a streamable HTTP server, or undefined. */
export function urlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a valid URL';
  }
  return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? undefined : 'expected an http:// or https:// URL';
}

function configError(label: string, file: string, field: string, problem: string): McpConfigError {
  return new McpConfigError(`Invalid ${label}: ${field || '(top level)'}: ${problem}`, { file, ...(field ? { field } : {}) });
}

const ARTICLES: Record<string, string> = { int: 'a whole number', string: 'a string', number: 'a number', boolean: 'a boolean', array: 'an array', object: 'an object', record: 'an object' };

function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `expected ${ARTICLES[issue.expected] ?? issue.expected}`;
    case 'too_small':
      return issue.origin === 'string' ? 'must not be empty' : issue.origin === 'number' ? 'must be positive' : issue.message;
    case 'too_big':
      return issue.origin === 'number' ? `must be at most ${String(issue.maximum)}` : issue.message;
    case 'invalid_key':
      return issue.issues[0]?.message ?? issue.message;
    case 'invalid_value':
      return `expected ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}`;
    default:
      return issue.message;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
