/**
 * The `callMcpTool` activity: one call of an MCP server's tool through the worker's connection
 * pool, in the built-in tools' activity wrapper: it heartbeats while it runs, ends at once
 * when cancelled (the server is told), bounds the size of its result, keeps secrets out of it (the
 * model's API key and every value the server's configuration takes from the environment), and
 * refuses a path argument that names a secret file, as `read_file` refuses it.
 */
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { ToolResult } from '../common/messages';
import { MCP_SERVER_FAILED, type McpCallInput, type McpServerConfig } from '../common/offered-tools';
import { SecretFileError, secretMatch } from '../bundle/sandbox/secret-files';
import { redactSecrets } from './redaction/redact';
import type { RuntimeContext } from '../common/runtime-context';
import { toToolActivity } from './tools/activity-wrapper';

/** Calls one tool of one server (the worker's connection pool). */
export interface McpToolCaller {
  callTool(server: string, config: McpServerConfig, projectRoot: string, tool: string, args: unknown, options: { signal?: AbortSignal; retrySafe: boolean }): Promise<ToolResult>;
}

/** Argument names that hold a path a file server would open. */
const PATH_ARGUMENT = /(^|_)(path|paths|file|files|filename|filepath|dir|directory|source|destination|root)$|Path$|^(path|file)/i;

export function createCallMcpTool(pool: McpToolCaller, options: { secrets?: readonly string[] } = {}): (input: McpCallInput) => Promise<ToolResult> {
  return async (input) => {
    const refused = secretPathRefusal(input);
    if (refused) return refused;
    const secrets = [...(options.secrets ?? []), ...environmentSecrets(input.config)];
    // The built-in tools' wrapper: heartbeats, the cancellation race, the result's size bound, metrics and a span.
    const activity = toToolActivity(input.name, async (_ctx, args, run) => {
      try {
        const result = await pool.callTool(input.server, input.config, input.projectRoot, input.tool, args, { ...(run?.signal ? { signal: run.signal } : {}), retrySafe: input.retrySafe });
        return redactResult(result, secrets);
      } catch (err) {
        if (run?.signal?.aborted || err instanceof ApplicationFailure) throw err;
        const message = redactSecrets((err as Error).message ?? String(err), secrets);
        // A server that cannot be started or reached: retried by the activity's policy (it may come back).
        throw ApplicationFailure.create({ type: (err as { type?: string }).type ?? MCP_SERVER_FAILED, message: `MCP server ${input.server}: ${message}` });
      }
    });
    // An MCP call needs none of the session's runtime context (its input carries what it needs).
    return activity(NO_CONTEXT, input.args);
  };
}

const NO_CONTEXT = {} as RuntimeContext;

/**
 * A path argument naming a secret file (credentials, keys, `.env*`, ... and the session's own
 * rules), refused unless the user allows secret files: file servers would otherwise read what
 * `read_file` refuses. Paths are taken relative to the project root, as file servers given it take them.
 */
export function secretPathRefusal(input: McpCallInput): ToolResult | undefined {
  if (input.secrets?.allowSecretFiles) return undefined;
  for (const value of pathArguments(input.args)) {
    const absolute = path.resolve(input.projectRoot, value);
    const relative = path.relative(input.projectRoot, absolute);
    const below = relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
    const match = secretMatch(below ? relative : absolute.slice(1), input.secrets?.secretFiles);
    if (match) return { success: false, error: new SecretFileError(value, match, 'read').message };
  }
  return undefined;
}

/** String values (and strings in lists) of arguments whose names say they are paths. */
function pathArguments(args: unknown): string[] {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return [];
  const out: string[] = [];
  for (const [key, value] of Object.entries(args as Record<string, unknown>)) {
    if (!PATH_ARGUMENT.test(key)) continue;
    for (const item of Array.isArray(value) ? value : [value]) if (typeof item === 'string' && item !== '') out.push(item);
  }
  return out;
}

/** Values the configuration takes from the worker's environment (`${VAR}`), which a result must never show. */
function environmentSecrets(config: McpServerConfig): string[] {
  const names = new Set<string>();
  for (const match of JSON.stringify(config).matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}/g)) names.add(match[1]!);
  const literal = [...Object.values('env' in config ? (config.env ?? {}) : {}), ...Object.values('headers' in config ? (config.headers ?? {}) : {})];
  return [...[...names].map((name) => process.env[name]), ...literal].filter((v): v is string => typeof v === 'string' && v.length >= 8);
}

function redactResult(result: ToolResult, secrets: readonly string[]): ToolResult {
  const out: ToolResult = { ...result };
  for (const [key, value] of Object.entries(out)) {
    if (typeof value === 'string') out[key] = redactSecrets(value, secrets);
    else if (value !== null && typeof value === 'object') out[key] = JSON.parse(redactSecrets(JSON.stringify(value), secrets)) as unknown;
  }
  return out;
}
