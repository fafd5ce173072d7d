/**
 * The `callMcpTool` activity: one call of an MCP server's tool through the worker's connection
 * pool. Like a built-in tool it heartbeats while it runs (with the server's progress), ends at once
 * when cancelled (the server is told), bounds the size of its result, keeps secrets out of it (the
 * model's API key and every value the server's configuration takes from the environment), and
 * refuses a path argument that names a secret file, as `read_file` refuses it.
 */
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ToolResult } from '../common/messages';
import { MCP_SERVER_FAILED, type McpCallInput, type McpServerConfig } from '../common/offered-tools';
import { SecretFileError, secretMatch } from '../bundle/secret-files';
import { redactSecrets } from './model/redact';
import { boundToolResult, TOOL_HEARTBEAT_INTERVAL_MS } from './tools/activity-wrapper';

/** Calls one tool of one server (the worker's connection pool). */
export interface McpToolCaller {
  callTool(
    server: string,
    config: McpServerConfig,
    projectRoot: string,
    tool: string,
    args: unknown,
    options: { signal?: AbortSignal; retrySafe: boolean; onProgress?: (progress: unknown) => void },
  ): Promise<ToolResult>;
}

/** Argument names that hold a path a file server would open. */
const PATH_ARGUMENT = /(^|_)(path|paths|file|files|filename|filepath|dir|directory|source|destination|root)$|Path$|^(path|file)/i;

export function createCallMcpTool(pool: McpToolCaller, options: { secrets?: readonly string[] } = {}): (input: McpCallInput) => Promise<ToolResult> {
  return async (input) => {
    const refused = secretPathRefusal(input);
    if (refused) return refused;
    const secrets = [...(options.secrets ?? []), ...environmentSecrets(input.config)];
    const context = currentContext();
    const signal = context?.cancellationSignal;
    let timer: NodeJS.Timeout | undefined;
    if (context && !context.info.isLocal) {
      context.heartbeat();
      timer = setInterval(() => context.heartbeat(), TOOL_HEARTBEAT_INTERVAL_MS);
    }
    try {
      const running = pool.callTool(input.server, input.config, input.projectRoot, input.tool, input.args, {
        ...(signal ? { signal } : {}),
        retrySafe: input.retrySafe,
        onProgress: (progress) => context?.heartbeat(progress),
      });
      const result = context ? await Promise.race([running, context.cancelled]) : await running;
      const bounded = boundToolResult(input.name, redactResult(result, secrets));
      context?.metricMeter.createCounter('loopwright_tool_calls', 'calls', 'Tool calls by tool and outcome').add(1, { tool: input.name, success: String(bounded.success) });
      return bounded;
    } catch (err) {
      if (signal?.aborted) throw signal.reason instanceof CancelledFailure ? signal.reason : new CancelledFailure('MCP call cancelled');
      if (err instanceof ApplicationFailure) throw err;
      const message = redactSecrets((err as Error).message ?? String(err), secrets);
      // A server that cannot be started or reached: retried by the activity's policy (it may come back).
      throw ApplicationFailure.create({ type: (err as { type?: string }).type ?? MCP_SERVER_FAILED, message: `MCP server ${input.server}: ${message}` });
    } finally {
      if (timer) clearInterval(timer);
    }
  };
}

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

function currentContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}
