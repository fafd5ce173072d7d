/**
 * One connection to an MCP server: a child process the worker starts and talks to over stdio, or a
 * streamable HTTP endpoint. A started server gets only the SDK's harmless defaults of the worker's
 * environment (`getDefaultEnvironment()`: HOME, LOGNAME, PATH, SHELL, TERM, USER) and the `env` its
 * configuration names, never the worker's keys; its stderr is kept (the last few KB) for messages
 * instead of being printed. Every message about a server is redacted with the secrets of its
 * configuration (see mcp-variables.ts). The SDK's client and transports are loaded with the first
 * connection, so a worker without MCP servers never loads them (about 90 ms of its start).
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MCP_SERVER_FAILED, type McpServerConfig } from '../../common/offered-tools';
import { redactSecrets, redactUrl } from '../redaction/redact';
import { type ExpandedServer, isHttpServer } from './mcp-variables';

/** Bytes of a server's stderr kept for messages. */
export const STDERR_TAIL_BYTES = 4096;

/** How long closing waits for an HTTP server to end its session before giving up on it. */
const TERMINATE_SESSION_MS = 1000;

/**
 * An MCP server that cannot be started, reached or understood. `name` and `type` are
 * `MCP_SERVER_FAILED`, the failure type the activity reports; the message names the server and
 * ends with the tail of its stderr when there is one, redacted.
 */
export class McpServerError extends Error {
  readonly type = MCP_SERVER_FAILED;
  readonly server: string;
  /** The last of the server's stderr (redacted), when it wrote any. */
  readonly stderr?: string;

  constructor(server: string, message: string, details: { stderr?: string; cause?: unknown } = {}) {
    super(withStderr(message, details.stderr), details.cause === undefined ? undefined : { cause: details.cause });
    this.name = MCP_SERVER_FAILED;
    this.server = server;
    if (details.stderr) this.stderr = details.stderr;
  }
}

/** `message`, followed by the server's last output when there is some. */
export function withStderr(message: string, stderr: string | undefined): string {
  return stderr ? `${message}\nIts last output (stderr):\n${stderr}` : message;
}

/** What a connection is opened to. */
export interface McpConnectionTarget {
  server: string;
  /** As configured (variables not expanded): what messages show. */
  config: McpServerConfig;
  expanded: ExpandedServer;
  /** Working folder of a started server (absolute). */
  cwd: string;
}

export interface McpConnectionOptions {
  /** Longest wait for the server to start and answer `initialize`, in milliseconds. */
  connectTimeoutMs: number;
  clientInfo: { name: string; version: string };
  /** Called once when the connection ends, however it ends (closed, the server died). */
  onClose: () => void;
}

/** The last `max` bytes written to a stream. */
class Tail {
  private buffer = Buffer.alloc(0);
  constructor(private readonly max: number) {}

  push(chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const joined = Buffer.concat([this.buffer, bytes]);
    this.buffer = joined.length > this.max ? joined.subarray(joined.length - this.max) : joined;
  }

  text(): string {
    // A cut may split a character: drop what is left of it.
    return this.buffer
      .toString('utf8')
      .replace(/^\uFFFD+/, '')
      .trim();
  }
}

/** A connected MCP client and what is known of its server. */
export class McpConnection {
  /** Set when the connection has ended (closed by us, or the server went away). */
  closed = false;
  private closing?: Promise<void>;

  private constructor(
    readonly target: McpConnectionTarget,
    readonly client: Client,
    private readonly transport: Transport,
    private readonly stderrTail: Tail,
  ) {}

  get server(): string {
    return this.target.server;
  }

  /** `stdio` for a started server, `http` for a streamable HTTP one. */
  get kind(): 'stdio' | 'http' {
    return this.transport.kind;
  }

  /** The started server's process id (undefined for HTTP, or once it has exited). */
  get pid(): number | undefined {
    return this.transport.kind === 'stdio' ? (this.transport.stdio.pid ?? undefined) : undefined;
  }

  /** `text` without any secret of this server's configuration. */
  redact(text: string): string {
    return redactSecrets(text, this.target.expanded.secrets);
  }

  /** The last of the server's stderr, redacted ('' when it wrote none). */
  stderr(): string {
    return this.redact(this.stderrTail.text());
  }

  /** Ends the connection (stdin closed, then SIGTERM and SIGKILL if the server lingers; an HTTP session is ended). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const transport = this.transport;
      if (transport.kind === 'http' && !this.closed && transport.http.sessionId) {
        await Promise.race([transport.http.terminateSession().catch(() => undefined), delay(TERMINATE_SESSION_MS)]);
      }
      await this.client.close().catch(() => undefined);
    })();
    return this.closing;
  }

  /**
   * Starts or reaches the server and completes MCP's `initialize`. Throws `McpServerError` when the
   * server cannot be started, exits, fails or does not answer within `connectTimeoutMs`.
   */
  static async open(target: McpConnectionTarget, options: McpConnectionOptions): Promise<McpConnection> {
    const { server, expanded } = target;
    const config = expanded.config;
    const tail = new Tail(STDERR_TAIL_BYTES);
    const redact = (text: string) => redactSecrets(text, expanded.secrets);
    const sdk = await mcpClientSdk();
    let transport: Transport;
    let where: string;
    if (isHttpServer(config)) {
      where = `at ${redactUrl(isHttpServer(target.config) ? target.config.url : config.url)}`;
      const http = new sdk.StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: config.headers ? { headers: config.headers } : undefined,
        // A server that went away is noticed within about a second instead of the default few.
        reconnectionOptions: { initialReconnectionDelay: 200, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1.5, maxRetries: 2 },
      });
      transport = { kind: 'http', http };
    } else {
      where = `(command ${JSON.stringify(config.command)})`;
      const stat = await fs.stat(target.cwd).catch(() => undefined);
      if (!stat?.isDirectory()) {
        throw new McpServerError(server, redact(`MCP server ${server} could not be started ${where}: its working folder ${target.cwd} is not a folder`));
      }
      const stdio = new sdk.StdioClientTransport({
        command: config.command,
        args: config.args ?? [],
        // The SDK adds getDefaultEnvironment() to this, and nothing else of the worker's environment.
        env: config.env ?? {},
        cwd: target.cwd,
        stderr: 'pipe',
      });
      stdio.stderr?.on('data', (chunk: Buffer | string) => tail.push(chunk));
      transport = { kind: 'stdio', stdio };
    }

    const client = new sdk.Client(options.clientInfo, { capabilities: {} });
    // Filled in once connected; the handlers below run before and after.
    const state: { connection?: McpConnection; ended: boolean } = { ended: false };
    client.onclose = () => {
      state.ended = true;
      const connection = state.connection;
      if (connection && !connection.closed) {
        connection.closed = true;
        options.onClose();
      }
    };
    client.onerror = (error) => {
      // Other errors are not the end of a connection: a started server that writes a stray line to
      // stdout is still serving, and one that dies closes its pipes (onclose above). An HTTP server
      // that went away mid-answer leaves its request waiting once the transport has given up
      // reconnecting: closing the client fails the request at once ("connection closed").
      const connection = state.connection;
      if (connection && connection.kind === 'http' && /reconnect/i.test(errorText(error))) void connection.close();
    };

    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), options.connectTimeoutMs);
    });
    try {
      const outcome = await Promise.race([client.connect(transport.kind === 'stdio' ? transport.stdio : transport.http, { timeout: options.connectTimeoutMs }), timedOut]);
      if (outcome === 'timeout') throw new ConnectTimeout();
    } catch (error) {
      await client.close().catch(() => undefined);
      // Let the last of stderr arrive (the pipe is read asynchronously).
      await new Promise((resolve) => setImmediate(resolve));
      const spawnError = isHttpServer(config) ? undefined : spawnFailure(error);
      const reason =
        error instanceof ConnectTimeout || isRequestTimeout(error)
          ? `did not answer within ${options.connectTimeoutMs} ms`
          : (spawnError ?? (state.ended && !isHttpServer(config) ? 'exited before it answered' : startFailure(error)));
      const verb = isHttpServer(config) ? 'could not be reached' : 'could not be started';
      throw new McpServerError(server, redact(`MCP server ${server} ${verb} ${where}: ${reason}`), {
        stderr: redact(tail.text()) || undefined,
        cause: error,
      });
    } finally {
      clearTimeout(timer);
    }
    const connection = new McpConnection(target, client, transport, tail);
    state.connection = connection;
    if (state.ended) {
      // The server went away between answering and now.
      connection.closed = true;
      options.onClose();
    }
    return connection;
  }
}

class ConnectTimeout extends Error {}

/** A connection's transport, by kind. */
type Transport = { kind: 'stdio'; stdio: StdioClientTransport } | { kind: 'http'; http: StreamableHTTPClientTransport };

/** The SDK's client and transports, loaded with the first connection (see the header). */
async function mcpClientSdk(): Promise<{ Client: typeof Client; StdioClientTransport: typeof StdioClientTransport; StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport }> {
  const [client, stdio, http] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]);
  return { Client: client.Client, StdioClientTransport: stdio.StdioClientTransport, StreamableHTTPClientTransport: http.StreamableHTTPClientTransport };
}

function isRequestTimeout(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === -32001;
}

/**
 * The message of `error`, read from its field rather than by its class: errors of Node's fetch may
 * come from another realm (a test sandbox), where `instanceof Error` is false.
 */
export function errorText(error: unknown): string {
  const message = (error as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' ? message : String(error);
}

/** Why the command could not be run at all, when that is what happened. */
function spawnFailure(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'command not found';
  if (code === 'EACCES') return 'command not executable';
  return undefined;
}

/** Why starting or reaching a server failed, in a few words: the error, its HTTP status and its cause. */
function startFailure(error: unknown): string {
  const { code, cause } = (error ?? {}) as { code?: unknown; cause?: { message?: unknown; code?: unknown } };
  const text = errorText(error);
  const status = typeof code === 'number' && code >= 100 && code < 600 ? ` (HTTP ${code})` : '';
  const why = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : undefined;
  return `${text}${status}${why ? ` (${why})` : ''}`;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** The absolute working folder of a started server: its `cwd` taken from the project root, else the root. */
export function serverCwd(config: McpServerConfig, projectRoot: string): string {
  const cwd = 'cwd' in config && typeof config.cwd === 'string' ? config.cwd : '.';
  return path.resolve(projectRoot, cwd);
}
