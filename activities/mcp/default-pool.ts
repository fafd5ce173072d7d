/**
 * The worker process's own MCP connection pool: one for all the sessions a worker runs (a server
 * is started once, not per session), created when first needed. Its stdio servers are stopped when
 * the worker stops (`closeDefaultMcpPool`, which `LoopwrightPlugin` and `loopwright worker` call)
 * or, failing that, when the process exits (a stdio server's input closes with it).
 */
import { McpPool } from './mcp-pool';

let pool: McpPool | undefined;

/** The process's pool, created on first use. */
export function defaultMcpPool(): McpPool {
  pool ??= new McpPool();
  return pool;
}

/** Closes every connection of the process's pool (a later use opens them again). */
export async function closeDefaultMcpPool(): Promise<void> {
  await pool?.closeAll();
}
