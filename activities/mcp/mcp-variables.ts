/**
 * `${VAR}` and `${VAR:-default}` in an MCP server's configuration, expanded from the worker's
 * environment when the server is started or reached. Only `args`, `env` values, `url` and `headers`
 * values are expanded, so the configuration recorded in history holds the variable's name, never a
 * token. Every value that came from a variable, every `env` and header value and the URL's userinfo
 * are returned as secrets: messages about the server are redacted with them.
 */
import type { McpHttpServer, McpServerConfig, McpStdioServer } from '../../common/offered-tools';
import { secretsOfUrl } from '../redaction/redact';
import { McpConfigError, urlProblem } from './mcp-config';

/** A server's configuration with its variables expanded, and what must not appear in messages. */
export interface ExpandedServer {
  config: McpServerConfig;
  /** Values to redact from any message about this server (longest first). */
  secrets: string[];
}

/** Where a configuration came from when an expansion error names none. */
const DEFAULT_SOURCE = 'MCP configuration';

/** `${NAME}` or `${NAME:-default}`; the default runs to the first `}`. */
const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** The environment variables are read from: the worker's by default. */
export type VariableSource = Readonly<Record<string, string | undefined>>;

/**
 * Expands the variables of every server in `servers` from `env`. A variable that is not set and has
 * no default throws `McpConfigError` naming the server, the field and the variable (never a value).
 */
export function expandVariables(servers: Record<string, McpServerConfig>, env: VariableSource = process.env, source = DEFAULT_SOURCE): Record<string, McpServerConfig> {
  const expanded: Record<string, McpServerConfig> = {};
  for (const [name, config] of Object.entries(servers)) expanded[name] = expandServerVariables(name, config, env, source).config;
  return expanded;
}

/** Expands one server's variables; see `expandVariables`. Also returns the secrets of its configuration. */
export function expandServerVariables(server: string, config: McpServerConfig, env: VariableSource = process.env, source = DEFAULT_SOURCE): ExpandedServer {
  const secrets = new Set<string>();
  const expand = (value: string, field: string): string =>
    value.replace(VARIABLE, (_match, name: string, fallback: string | undefined) => {
      const set = env[name];
      // As in the shell: `:-` takes the default when the variable is unset or empty.
      const value = set !== undefined && (fallback === undefined || set !== '') ? set : fallback;
      if (value === undefined) {
        throw new McpConfigError(`Invalid MCP server ${server}: ${field} uses the variable ${name}, which is not set in the worker's environment` + ` (set it, or give a default: \${${name}:-...})`, {
          file: source,
          field: `mcpServers.${server}.${field}`,
        });
      }
      secrets.add(value);
      return value;
    });
  const expandRecord = (record: Record<string, string> | undefined, field: string) => {
    if (record === undefined) return undefined;
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(record)) {
      out[key] = expand(value, `${field}.${key}`);
      secrets.add(out[key]);
    }
    return out;
  };

  let expanded: McpServerConfig;
  if (isHttpServer(config)) {
    const url = expand(config.url, 'url');
    const problem = url === config.url ? undefined : urlProblem(url);
    if (problem) {
      throw new McpConfigError(`Invalid MCP server ${server}: url: after expanding its variables, ${problem}`, {
        file: source,
        field: `mcpServers.${server}.url`,
      });
    }
    for (const secret of secretsOfUrl(url)) secrets.add(secret);
    expanded = withDefined({ ...config, url, headers: expandRecord(config.headers, 'headers') });
  } else {
    const args = config.args?.map((arg, i) => expand(arg, `args.${i}`));
    expanded = withDefined({ ...config, args, env: expandRecord(config.env, 'env') });
  }
  return { config: expanded, secrets: [...secrets].filter((s) => s !== '').sort((a, b) => b.length - a.length) };
}

/** True for a streamable HTTP server (a `url`), false for a command the worker starts. */
export function isHttpServer(config: McpServerConfig): config is McpHttpServer {
  return config.type === 'http' || config.type === 'streamable-http' || (config.type === undefined && 'url' in config && !('command' in config));
}

/** True for a command the worker starts over stdio. */
export function isStdioServer(config: McpServerConfig): config is McpStdioServer {
  return !isHttpServer(config);
}

function withDefined<T extends object>(value: T): T {
  for (const key of Object.keys(value) as (keyof T)[]) if (value[key] === undefined) delete value[key];
  return value;
}
