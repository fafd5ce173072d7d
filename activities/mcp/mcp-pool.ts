/**
 * The worker's connections to MCP servers, kept between activities: starting a server costs about
 * half a second, a call to a connected one well under a millisecond. A connection is keyed by the
 * server's name and a hash of its configuration as written (and, for a started server, its working
 * folder), so a changed configuration gets a new one. Concurrent first uses share one connect; a
 * connection idle for `idleMs` is closed; one whose server went away is dropped and started again
 * on next use. `closeAll()` is for the worker's shutdown.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolResult } from '../../common/messages';
import type { McpServerConfig } from '../../common/offered-tools';
import { abortReason, callOnConnection, type McpCallOptions } from './mcp-call';
import { errorText, McpConnection, McpServerError, serverCwd } from './mcp-connection';
import { type McpToolListing, toListedTools } from './mcp-result';
import { expandServerVariables, isHttpServer, type VariableSource } from './mcp-variables';

/** A connection unused this long is closed (milliseconds). */
export const DEFAULT_IDLE_MS = 5 * 60_000;
/** Longest wait for a server to start and answer `initialize` (milliseconds). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
/** Longest wait for one call or one page of a tool list, unless the server's `timeout` says otherwise (milliseconds). */
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
/** Pages of a tool list read at most, and tools kept at most, per server. */
const MAX_TOOL_PAGES = 100;
const MAX_TOOLS = 1000;
/** New connections tried for one call when each is found gone before the call is sent. */
const MAX_UNSENT = 2;

export interface McpPoolOptions {
  /** Close a connection unused this long (default `DEFAULT_IDLE_MS`). */
  idleMs?: number;
  /** Default `DEFAULT_CONNECT_TIMEOUT_MS`. */
  connectTimeoutMs?: number;
  /** Where `${VAR}` are read from (default: the worker's environment). */
  env?: VariableSource;
  /** How the worker introduces itself to servers (default: loopwright and its version). */
  clientInfo?: { name: string; version: string };
}

/** A pooled connection, for diagnostics and tests. */
export interface McpConnectionInfo {
  server: string;
  key: string;
  transport: 'stdio' | 'http';
  /** The started server's process id. */
  pid?: number;
  /** Calls and listings running on it now. */
  busy: number;
}

interface Entry {
  key: string;
  server: string;
  opening?: Promise<McpConnection>;
  connection?: McpConnection;
  busy: number;
  idleTimer?: NodeJS.Timeout;
}

/** A connection in use; `release` when done. */
interface Lease {
  connection: McpConnection;
  release(): void;
}

export class McpPool {
  private readonly entries = new Map<string, Entry>();
  private readonly idleMs: number;
  private readonly connectTimeoutMs: number;
  private readonly env: VariableSource;
  private readonly clientInfo: { name: string; version: string };

  constructor(options: McpPoolOptions = {}) {
    this.idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.env = options.env ?? process.env;
    this.clientInfo = options.clientInfo ?? { name: 'loopwright', version: packageVersion() };
  }

  /**
   * Every tool of `server` (all pages), as the model is offered them, and warnings about tools left
   * out or renamed. Throws `McpConfigError` for a variable with no value and `McpServerError` when
   * the server cannot be started or reached or does not list its tools.
   */
  async listTools(server: string, config: McpServerConfig, projectRoot: string, signal?: AbortSignal): Promise<McpToolListing> {
    const lease = await this.acquire(server, config, projectRoot, signal);
    const connection = lease.connection;
    try {
      const tools: Tool[] = [];
      const warnings: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await connection.client.listTools(cursor === undefined ? undefined : { cursor }, {
          signal,
          timeout: config.timeout ?? DEFAULT_CALL_TIMEOUT_MS,
        });
        tools.push(...page.tools);
        cursor = page.nextCursor;
        pages++;
      } while (cursor !== undefined && pages < MAX_TOOL_PAGES && tools.length < MAX_TOOLS);
      if (cursor !== undefined || tools.length > MAX_TOOLS) {
        warnings.push(`MCP server ${server}: only its first ${Math.min(tools.length, MAX_TOOLS)} tools are offered (${pages} pages read)`);
      }
      const listing = toListedTools(server, tools.slice(0, MAX_TOOLS));
      return { tools: listing.tools, warnings: [...warnings, ...listing.warnings].map((w) => connection.redact(w)) };
    } catch (error) {
      if (signal?.aborted) throw abortReason(signal);
      const message = errorText(error);
      const stderr = connection.stderr() || undefined;
      throw new McpServerError(server, connection.redact(`MCP server ${server} did not list its tools: ${message}`), { stderr, cause: error });
    } finally {
      lease.release();
    }
  }

  /**
   * Calls `tool` of `server` with `args` (an object, or its JSON text) and returns its result as the
   * model gets it (see `toToolResult`). A tool's own failure, a timeout or a server that went away
   * mid-call is a `{success: false, error}`; a server gone mid-call is started again and the call
   * made once more when `retrySafe`. Throws `McpServerError` when the server cannot be started or
   * reached, `McpConfigError` for a variable with no value, and the signal's reason when aborted
   * (the server is told with `notifications/cancelled`).
   */
  async callTool(server: string, config: McpServerConfig, projectRoot: string, tool: string, args: unknown, options: McpCallOptions): Promise<ToolResult> {
    const timeoutMs = options.timeoutMs ?? config.timeout ?? DEFAULT_CALL_TIMEOUT_MS;
    let stoppedBefore: string | undefined;
    // A connection found gone before the call was sent is replaced without counting as a try.
    for (let unsent = 0; ;) {
      const lease = await this.acquire(server, config, projectRoot, options.signal);
      try {
        const outcome = await callOnConnection(lease.connection, tool, args, { ...options, timeoutMs }, stoppedBefore);
        if (outcome.kind === 'result') return outcome.result;
        if (outcome.kind === 'unsent') {
          if (++unsent > MAX_UNSENT) throw new McpServerError(server, `MCP server ${server} keeps going away before ${tool} can be sent`);
          continue;
        }
        // The server went away mid-call; the connection is dropped from the pool as it closes.
        if (options.retrySafe && stoppedBefore === undefined) {
          stoppedBefore = outcome.stderr;
          continue;
        }
        return outcome.result;
      } finally {
        lease.release();
      }
    }
  }

  /** The pooled connections now (being connected ones left out). */
  connections(): McpConnectionInfo[] {
    return [...this.entries.values()]
      .filter((e) => e.connection && !e.connection.closed)
      .map((e) => ({
        server: e.server,
        key: e.key,
        transport: e.connection!.kind,
        ...(e.connection!.pid !== undefined ? { pid: e.connection!.pid } : {}),
        busy: e.busy,
      }));
  }

  /** Closes every connection (waiting for ones being made); stops the started servers. The pool stays usable. */
  async closeAll(): Promise<void> {
    const entries = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(
      entries.map(async (entry) => {
        clearTimeout(entry.idleTimer);
        const connection = entry.connection ?? (await entry.opening?.catch(() => undefined));
        await connection?.close();
      }),
    );
  }

  /** A connection to `server`, made (or shared with a use making it) when there is none. */
  private async acquire(server: string, config: McpServerConfig, projectRoot: string, signal?: AbortSignal): Promise<Lease> {
    if (signal?.aborted) throw abortReason(signal);
    const cwd = serverCwd(config, projectRoot);
    const key = `${server}:${configHash(config, isHttpServer(config) ? undefined : cwd)}`;
    let entry = this.entries.get(key);
    if (!entry || (entry.connection?.closed ?? false)) {
      // Expanded at each connect, so the pool never keeps a token longer than a connection.
      const expanded = expandServerVariables(server, config, this.env);
      const fresh: Entry = { key, server, busy: 0 };
      fresh.opening = McpConnection.open({ server, config, expanded, cwd }, { connectTimeoutMs: this.connectTimeoutMs, clientInfo: this.clientInfo, onClose: () => this.forget(fresh) }).then(
        (connection) => {
          fresh.connection = connection;
          fresh.opening = undefined;
          if (fresh.busy === 0) this.scheduleIdle(fresh);
          return connection;
        },
        (error: unknown) => {
          this.forget(fresh);
          throw error;
        },
      );
      this.entries.set(key, fresh);
      entry = fresh;
    }
    const held = entry;
    held.busy++;
    clearTimeout(held.idleTimer);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      held.busy--;
      if (held.busy === 0) this.scheduleIdle(held);
    };
    try {
      const connection = held.connection ?? (await raceAbort(held.opening!, signal));
      return { connection, release };
    } catch (error) {
      release();
      throw error;
    }
  }

  /** Drops `entry` from the pool if it is still the one under its key. */
  private forget(entry: Entry): void {
    clearTimeout(entry.idleTimer);
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
  }

  private scheduleIdle(entry: Entry): void {
    const connection = entry.connection;
    if (!connection || connection.closed) return;
    clearTimeout(entry.idleTimer);
    entry.idleTimer = setTimeout(() => {
      if (entry.busy > 0) return;
      this.forget(entry);
      void connection.close();
    }, this.idleMs);
    // An idle connection never keeps the worker's process alive.
    entry.idleTimer.unref();
  }
}

/** `promise`, or a rejection with the signal's reason as soon as it is aborted. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}

/** A short hash of the configuration as written (keys sorted), with the working folder of a started server. */
function configHash(config: McpServerConfig, cwd: string | undefined): string {
  return createHash('sha256').update(stableJson({ config, cwd })).digest('hex').slice(0, 16);
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

let cachedVersion: string | undefined;

/** Loopwright's version from its package.json (read at run time, as the command line does). */
function packageVersion(): string {
  if (cachedVersion !== undefined) return cachedVersion;
  cachedVersion = '0.0.0';
  for (let dir = __dirname, i = 0; i < 5; dir = path.dirname(dir), i++) {
    try {
      const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'loopwright' && typeof manifest.version === 'string') {
        cachedVersion = manifest.version;
        break;
      }
    } catch {
      // Not here; one folder up.
    }
  }
  return cachedVersion;
}
