/**
 * What the MCP client tests share: the reference servers' commands (from node_modules/.bin), the
 * probe server, a free port, waiting for a condition (with a generous deadline, never asserting on
 * time), and whether a process is still alive.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as net from 'node:net';
import * as path from 'node:path';
import type { McpHttpServer, McpStdioServer } from '../../common/offered-tools';

const ROOT = path.resolve(__dirname, '../..');
const BIN = path.join(ROOT, 'node_modules', '.bin');

/** `mcp-server-everything stdio`. */
export function everythingStdio(extra: Partial<McpStdioServer> = {}): McpStdioServer {
  return { command: path.join(BIN, 'mcp-server-everything'), args: ['stdio'], ...extra };
}

/** `mcp-server-filesystem <dir>`. */
export function filesystemServer(dir: string, extra: Partial<McpStdioServer> = {}): McpStdioServer {
  return { command: path.join(BIN, 'mcp-server-filesystem'), args: [dir], ...extra };
}

/** The probe server (test/mcp/fixtures/probe-server.js), run by this Node. */
export function probeServer(extra: Partial<McpStdioServer> = {}): McpStdioServer {
  return { command: process.execPath, args: [path.join(__dirname, 'fixtures', 'probe-server.js')], ...extra };
}

/** A TCP port nobody listens on now (the system's choice). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A streamable HTTP server-everything started by the test, and its configuration. */
export interface EverythingHttp {
  config: McpHttpServer;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `mcp-server-everything streamableHttp` on a free port and waits for its "listening" line on stderr. */
export async function startEverythingHttp(): Promise<EverythingHttp> {
  const port = await freePort();
  const child = spawn(path.join(BIN, 'mcp-server-everything'), ['streamableHttp'], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error(`server-everything did not listen: ${output}`)), 30_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (/listening/i.test(output)) {
        clearTimeout(deadline);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(deadline);
      reject(new Error(`server-everything exited (${code}): ${output}`));
    });
  });
  child.removeAllListeners('exit');
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  return { config: { type: 'http', url: `http://127.0.0.1:${port}/mcp` }, child, stop };
}

/** Resolves once `condition()` holds; rejects with `what` if it does not within a generous deadline. */
export async function waitFor(what: string, condition: () => boolean | Promise<boolean>, deadlineMs = 20_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Whether process `pid` still exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
