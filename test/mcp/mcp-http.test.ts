/**
 * The pool against streamable HTTP servers: server-everything started by the test on a free port,
 * a plain HTTP server that records what it is sent and refuses it, and a port nobody listens on.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import { MCP_SERVER_FAILED } from '../../common/offered-tools';
import { McpPool, McpServerError } from '../../activities/mcp';
import { type EverythingHttp, freePort, startEverythingHttp } from './mcp-helpers';

const SECRET = 'http-secret-token-4567';
const project = os.tmpdir();
let server: EverythingHttp;
let pool: McpPool;

beforeAll(async () => {
  server = await startEverythingHttp();
  pool = new McpPool({ env: { MCP_HTTP_TOKEN: SECRET } });
});

afterAll(async () => {
  await pool.closeAll();
  await server.stop();
});

test('lists and calls server-everything over streamable HTTP', async () => {
  const { tools, warnings } = await pool.listTools('remote', server.config, project);
  expect(warnings).toEqual([]);
  expect(tools.find((t) => t.tool === 'echo')).toMatchObject({ name: 'remote__echo', annotations: { readOnlyHint: true } });
  await expect(pool.callTool('remote', server.config, project, 'echo', { message: 'over http' }, { retrySafe: true })).resolves.toEqual({
    success: true,
    content: 'Echo: over http',
  });
  await expect(pool.callTool('remote', server.config, project, 'get-sum', { a: 1, b: 2 }, { retrySafe: true })).resolves.toEqual({
    success: true,
    content: 'The sum of 1 and 2 is 3.',
  });
  expect(pool.connections()).toEqual([expect.objectContaining({ server: 'remote', transport: 'http', busy: 0 })]);
  expect(pool.connections()[0]).not.toHaveProperty('pid');
});

test('progress arrives over HTTP too, and a cancelled call leaves the connection usable', async () => {
  const controller = new AbortController();
  const progress: number[] = [];
  const reason = new Error('cancelled by the test');
  const running = pool.callTool(
    'remote',
    server.config,
    project,
    'trigger-long-running-operation',
    { duration: 30, steps: 300 },
    {
      retrySafe: true,
      signal: controller.signal,
      onProgress: (p) => {
        progress.push(p.progress);
        controller.abort(reason);
      },
    },
  );
  await expect(running).rejects.toBe(reason);
  expect(progress[0]).toBe(1);
  await expect(pool.callTool('remote', server.config, project, 'echo', { message: 'still here' }, { retrySafe: true })).resolves.toMatchObject({
    success: true,
  });
});

test('headers are sent expanded, and a refusal is MCP_SERVER_FAILED without their values', async () => {
  const seen: http.IncomingHttpHeaders[] = [];
  const refusing = http.createServer((req, res) => {
    seen.push(req.headers);
    // A server that quotes the request back, as some do in their errors.
    res.writeHead(401, { 'content-type': 'text/plain' }).end(`bad credentials: ${req.headers.authorization}`);
  });
  await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = refusing.address() as AddressInfo;
    const config = { type: 'http' as const, url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: 'Bearer ${MCP_HTTP_TOKEN}', 'X-Plain': 'plain' } };
    const error = await pool.listTools('refusing', config, project).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpServerError);
    expect(error).toMatchObject({ type: MCP_SERVER_FAILED, server: 'refusing' });
    expect((error as Error).message).toMatch(new RegExp(`^MCP server refusing could not be reached at http://127\\.0\\.0\\.1:${port}/mcp: .*\\(HTTP 401\\)`));
    expect((error as Error).message).not.toContain(SECRET);
    expect(seen[0]).toMatchObject({ authorization: `Bearer ${SECRET}`, 'x-plain': 'plain' });
  } finally {
    await new Promise((resolve) => refusing.close(resolve));
  }
});

test('a port nobody listens on: MCP_SERVER_FAILED naming the server and the address', async () => {
  const port = await freePort();
  await expect(pool.listTools('absent', { url: `http://127.0.0.1:${port}/mcp` }, project)).rejects.toMatchObject({
    type: MCP_SERVER_FAILED,
    message: expect.stringMatching(new RegExp(`^MCP server absent could not be reached at http://127\\.0\\.0\\.1:${port}/mcp: .*ECONNREFUSED`)),
  });
});

test('a server that goes away mid-call: the call says it may or may not have taken effect', async () => {
  const own = await startEverythingHttp();
  const local = new McpPool();
  try {
    await local.listTools('dying', own.config, project);
    let stopped: Promise<void> | undefined;
    const result = await local.callTool(
      'dying',
      own.config,
      project,
      'trigger-long-running-operation',
      { duration: 30, steps: 300 },
      {
        retrySafe: false,
        onProgress: () => {
          stopped ??= own.stop();
        },
      },
    );
    await stopped;
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/^MCP server dying stopped during trigger-long-running-operation; the call may or may not have taken effect/);
    expect(local.connections()).toEqual([]);
  } finally {
    await local.closeAll();
    await own.stop();
  }
});
