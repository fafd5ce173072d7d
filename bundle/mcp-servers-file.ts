/**
 * A project's `.mcp.json` (`{"mcpServers": {"<name>": {...}}}`), read tolerantly for
 * `loopwright inspect` and `validate`: which MCP servers a session in the project would add, how
 * each is reached, and what is wrong with the file. Nothing is started or connected here, and no
 * variable is expanded; the worker has its own strict reader and lists the servers' tools.
 *
 * What is shown of a server is its name, its transport, the command (without its arguments) or the
 * URL (without user, password or query values), and whether it is disabled: never an argument, an
 * environment value or a header value, which may hold tokens.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { readTextFile } from './text-content';

/** The file's name in the project root. */
export const MCP_SERVERS_FILE = '.mcp.json';

/** Largest `.mcp.json` read. */
const MAX_MCP_FILE_BYTES = 1024 * 1024;

/** A server as inspect shows it. */
export interface McpServerSummary {
  name: string;
  transport: 'stdio' | 'http';
  /** stdio: the program started (its arguments are not shown). */
  command?: string;
  /** http: the URL, user, password and query values replaced by `***`. */
  url?: string;
  disabled?: true;
}

/** One thing wrong with the file: the field (`mcpServers.github.command`, empty for the whole file) and what. */
export interface McpFileProblem {
  field: string;
  message: string;
}

/** What was found: the servers that could be read, and the problems with the rest. */
export interface McpServersFile {
  /** The file looked for (absolute). */
  file: string;
  /** Whether it exists. */
  found: boolean;
  servers: McpServerSummary[];
  problems: McpFileProblem[];
}

/** Reads `<projectRoot>/.mcp.json`; a missing file has no servers and no problems. Never throws for the file's content. */
export async function readMcpServersFile(projectRoot: string): Promise<McpServersFile> {
  const file = path.join(projectRoot, MCP_SERVERS_FILE);
  const result: McpServersFile = { file, found: false, servers: [], problems: [] };
  let text: string;
  try {
    // Opened as a regular file only: a FIFO named .mcp.json is refused, not waited on.
    text = (await readTextFile(await fs.realpath(file), MAX_MCP_FILE_BYTES, undefined, { allowHardLinks: true })).content;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException)?.code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return result;
    result.found = true;
    result.problems.push({ field: '', message: `cannot be read: ${(error as Error).message}` });
    return result;
  }
  result.found = true;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    result.problems.push({ field: '', message: `not valid JSON: ${(error as Error).message}` });
    return result;
  }
  if (!isRecord(data)) {
    result.problems.push({ field: '', message: `expected a JSON object with "mcpServers", got ${kind(data)}` });
    return result;
  }
  const servers = data.mcpServers;
  if (servers === undefined) {
    result.problems.push({ field: 'mcpServers', message: 'missing: the servers go in {"mcpServers": {"<name>": {...}}}' });
    return result;
  }
  if (!isRecord(servers)) {
    result.problems.push({ field: 'mcpServers', message: `expected an object of servers by name, got ${kind(servers)}` });
    return result;
  }
  for (const [name, server] of Object.entries(servers)) {
    const field = `mcpServers.${name}`;
    if (!isRecord(server)) {
      result.problems.push({ field, message: `expected an object with "command" or "url", got ${kind(server)}` });
      continue;
    }
    const disabled = server.disabled === true ? { disabled: true as const } : {};
    if (typeof server.url === 'string' && server.url.trim() !== '') {
      result.servers.push({ name, transport: 'http', url: redactUrl(server.url), ...disabled });
    } else if (typeof server.command === 'string' && server.command.trim() !== '') {
      result.servers.push({ name, transport: 'stdio', command: server.command, ...disabled });
    } else {
      result.problems.push({ field, message: 'needs "command" (a program to start) or "url" (a streamable HTTP server), as a non-empty string' });
    }
  }
  return result;
}

/**
 * A URL fit to print: a user and password become `***@`, each query value `***` (a `${VAR}`
 * reference stays, since it is a name, not a value).
 */
export function redactUrl(url: string): string {
  const withoutUser = url.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/?#@]*@/, '$1***@');
  return withoutUser.replace(/([?&][^=&#]*=)([^&#]*)/g, (_all, key: string, value: string) => (/^\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}$/.test(value) ? `${key}${value}` : `${key}***`));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function kind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
