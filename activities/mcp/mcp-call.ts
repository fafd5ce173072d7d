/**
 * One `tools/call` on a connection, and what its failures mean. The tool's own failure (`isError`),
 * a refusal by the server (unknown tool, bad arguments) and a timeout are results the model can act
 * on. A server that went away mid-call is reported as such, so the pool can start it again; whether
 * the call took effect is then unknown. Cancellation goes to the server as `notifications/cancelled`
 * and ends the call with the signal's reason.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolResult } from '../../common/messages';
import { errorText, type McpConnection, withStderr } from './mcp-connection';
import { toToolResult } from './mcp-result';

/** Progress a server reports for a running call (MCP `notifications/progress`). */
export interface McpProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** How a call is made. */
export interface McpCallOptions {
  /** Aborting it cancels the call on the server and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** The tool is read-only or idempotent: a call cut off by the server going away is made again, once. */
  retrySafe: boolean;
  /** Longest wait for the result (default: the server's `timeout`, else 60 s). */
  timeoutMs?: number;
  /** Called with each progress notification of the call (the activity heartbeats with them). */
  onProgress?: (progress: McpProgress) => void;
}

/**
 * What became of a call: a result for the model, or the server went away mid-call (`stopped`, with
 * the result to give if the call is not made again), or the connection was already gone before the
 * call was sent (`unsent`: nothing happened; make it on a new connection).
 */
export type CallOutcome = { kind: 'result'; result: ToolResult } | { kind: 'stopped'; result: ToolResult; stderr: string } | { kind: 'unsent' };

/**
 * Calls `tool` on `connection`. `stoppedBefore` is set (the stderr of the server then, maybe empty)
 * when this is the second try after the server went away during the first.
 */
export async function callOnConnection(connection: McpConnection, tool: string, args: unknown, options: McpCallOptions & { timeoutMs: number }, stoppedBefore?: string): Promise<CallOutcome> {
  const server = connection.server;
  const input = toArguments(args);
  if (typeof input === 'string') return { kind: 'result', result: { success: false, error: `Invalid arguments for ${server} tool ${tool}: ${input}` } };
  if (options.signal?.aborted) throw abortReason(options.signal);
  if (connection.closed) return { kind: 'unsent' };

  // A signal of the call's own, so the SDK's listener goes with the call (the caller's may live longer).
  const controller = new AbortController();
  const forward = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', forward, { once: true });
  try {
    const result = await connection.client.callTool({ name: tool, arguments: input }, undefined, {
      signal: controller.signal,
      timeout: options.timeoutMs,
      ...(options.onProgress ? { onprogress: (p: McpProgress) => reportProgress(options.onProgress!, p) } : {}),
    });
    // The SDK's type also allows the protocol's first result shape (`toolResult`); toToolResult reads `content` only.
    return { kind: 'result', result: redactError(connection, toToolResult(result as CallToolResult)) };
  } catch (error) {
    if (options.signal?.aborted) throw abortReason(options.signal);
    // Loaded already: the connection's client loaded the SDK (mcp-connection.ts).
    const { ErrorCode, McpError } = await import('@modelcontextprotocol/sdk/types.js');
    const mcpError = error instanceof McpError;
    if (connection.closed || isTransportFailure(connection, error, mcpError)) {
      // Whatever is left of the connection is of no use: the pool drops it when it closes.
      if (!connection.closed) void connection.close();
      const stderr = connection.stderr();
      const message =
        stoppedBefore === undefined
          ? `MCP server ${server} stopped during ${tool}; the call may or may not have taken effect.` + ' Check before calling it again (the server is started again on the next call).'
          : `MCP server ${server} stopped during ${tool} again, after being started again for a second try.`;
      return { kind: 'stopped', result: { success: false, error: connection.redact(withStderr(message, stderr)) }, stderr };
    }
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      return { kind: 'result', result: { success: false, error: `MCP server ${server}: ${tool} timed out after ${options.timeoutMs} ms` } };
    }
    return { kind: 'result', result: { success: false, error: connection.redact(`MCP server ${server} could not run ${tool}: ${errorText(error)}`) } };
  } finally {
    options.signal?.removeEventListener('abort', forward);
  }
}

/**
 * Whether `error` says the connection itself failed rather than the server answering: over HTTP a
 * request that could not be sent or whose answer broke off (not an MCP error, not a bad result).
 */
function isTransportFailure(connection: McpConnection, error: unknown, mcpError: boolean): boolean {
  if (connection.kind !== 'http' || mcpError) return false;
  return (error as { name?: unknown } | undefined)?.name !== 'ZodError';
}

/** Hands `progress` to `listener`; a listener that throws does not end the call. */
function reportProgress(listener: (progress: McpProgress) => void, progress: McpProgress): void {
  try {
    listener({
      progress: progress.progress,
      ...(progress.total !== undefined ? { total: progress.total } : {}),
      ...(progress.message !== undefined ? { message: progress.message } : {}),
    });
  } catch {
    // Progress is advisory (the activity heartbeats with it).
  }
}

/** The arguments as the JSON object MCP wants, or what is wrong with them. */
function toArguments(args: unknown): Record<string, unknown> | string {
  let value = args;
  if (typeof args === 'string') {
    try {
      value = args.trim() === '' ? {} : JSON.parse(args);
    } catch (error) {
      return `not valid JSON (${(error as Error).message})`;
    }
  }
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) return 'expected a JSON object';
  return value as Record<string, unknown>;
}

/** A failed result's message without the server's secrets (a server may quote its configuration). */
function redactError(connection: McpConnection, result: ToolResult): ToolResult {
  return result.success || typeof result.error !== 'string' ? result : { ...result, error: connection.redact(result.error) };
}

/** The signal's reason as something to throw (an `Error` when it has none). */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('The MCP request was cancelled');
}
