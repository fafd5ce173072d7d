/**
 * `--mcp-config <file>`: files in `.mcp.json` format, read by the command line. A file that cannot
 * be read, is not JSON or holds a bad server is a usage mistake naming the file and the field, by
 * the rules the session checks its `mcpServers` by.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { McpServerConfig } from '../../common/offered-tools';
import { settingProblem } from '../../common/session-input-schema';
import { UsageError } from '../output';

/** Largest `--mcp-config` file read. */
const MAX_MCP_CONFIG_BYTES = 1024 * 1024;

/**
 * The servers of the files, a later file's server replacing an earlier one of the same name. Their
 * strings are kept as written: `${VAR}` is expanded by the worker when it connects, so a token in
 * the worker's environment never enters the session's history.
 */
export function readMcpConfigFiles(files: readonly string[], cwd: string = process.cwd()): Record<string, McpServerConfig> {
  const servers: Record<string, McpServerConfig> = {};
  for (const file of files) Object.assign(servers, readMcpConfigFile(file, cwd));
  return servers;
}

function readMcpConfigFile(file: string, cwd: string): Record<string, McpServerConfig> {
  const where = `--mcp-config ${file}`;
  let bytes: Buffer;
  try {
    // Read as given (a pipe such as <(...) too), and refused when it is larger than any config.
    bytes = fs.readFileSync(path.resolve(cwd, file));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a folder, not a file' : (err as Error).message;
    throw new UsageError(`${where}: cannot read the file: ${reason}`);
  }
  if (bytes.length > MAX_MCP_CONFIG_BYTES) throw new UsageError(`${where}: the file is larger than ${MAX_MCP_CONFIG_BYTES} bytes`);
  let data: unknown;
  try {
    data = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new UsageError(`${where}: not valid JSON: ${(err as Error).message}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new UsageError(`${where}: expected a JSON object {"mcpServers": {"<name>": {...}}}`);
  }
  const servers = (data as Record<string, unknown>).mcpServers;
  if (servers === undefined) throw new UsageError(`${where}: mcpServers: missing; the servers go in {"mcpServers": {"<name>": {...}}}`);
  // The rules the session checks its input by: a server name, then a command (stdio) or a URL.
  const problem = settingProblem('mcpServers', servers);
  if (problem !== undefined) throw new UsageError(`${where}: ${problem}`);
  return servers as Record<string, McpServerConfig>;
}
