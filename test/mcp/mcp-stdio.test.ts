/**
 * The pool against the reference servers over stdio (server-everything and server-filesystem from
 * node_modules): listing, calls, failures, a server killed mid-call, cancellation, the started
 * server's environment, idle closing and shutdown. One pool and one server of each kind are shared
 * by the file where a test does not need its own; three tests with pools of their own run beside the
 * others.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_INHERITED_ENV_VARS } from '@modelcontextprotocol/sdk/client/stdio.js';
import { MCP_SERVER_FAILED } from '../../common/offered-tools';
import { McpConfigError, McpPool, McpServerError } from '../../activities/mcp';
import { McpConnection } from '../../activities/mcp/mcp-connection';
import { alive, everythingStdio, filesystemServer, waitFor } from './mcp-helpers';

const LONG_OPERATION = 'trigger-long-running-operation';

let project: string;
let pool: McpPool;
const everything = everythingStdio();

beforeAll(async () => {
  project = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'loopwright-mcp-stdio-')));
  await fs.mkdir(path.join(project, 'files', 'sub'), { recursive: true });
  await fs.writeFile(path.join(project, 'files', 'hello.txt'), 'hello from the project\n');
  pool = new McpPool();
});

afterAll(async () => {
  await pool.closeAll();
  await fs.rm(project, { recursive: true, force: true });
});

/** The pid of the pool's connection to `server` (exactly one expected). */
function pidOf(target: McpPool, server: string): number {
  const found = target.connections().filter((c) => c.server === server);
  expect(found).toHaveLength(1);
  return found[0]!.pid!;
}

describe('listing', () => {
  test('server-everything: namespaced names, parameters fit for the model, annotations', async () => {
    const { tools, warnings } = await pool.listTools('everything', everything, project);
    expect(warnings).toEqual([]);
    const echo = tools.find((t) => t.tool === 'echo');
    expect(echo).toEqual({
      server: 'everything',
      tool: 'echo',
      name: 'everything__echo',
      description: 'Echoes back the input string',
      parameters: { type: 'object', properties: { message: { type: 'string', description: 'Message to echo' } }, required: ['message'] },
      annotations: { title: 'Echo Tool', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    });
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['everything__get-sum', `everything__${LONG_OPERATION}`, 'everything__get-env']));
    for (const tool of tools) expect(tool.parameters).not.toHaveProperty('$schema');
  });

  test('server-filesystem marks its read tools read-only and its write tools destructive', async () => {
    const { tools } = await pool.listTools('fs', filesystemServer(path.join(project, 'files')), project);
    const byTool = new Map(tools.map((t) => [t.tool, t]));
    for (const read of ['read_text_file', 'list_directory', 'search_files', 'get_file_info']) expect(byTool.get(read)?.annotations?.readOnlyHint).toBe(true);
    expect(byTool.get('write_file')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byTool.get('read_text_file')?.name).toBe('fs__read_text_file');
  });
});

describe('calls', () => {
  test('echo and get-sum return their text as content', async () => {
    await expect(pool.callTool('everything', everything, project, 'echo', { message: 'hi there' }, { retrySafe: true })).resolves.toEqual({
      success: true,
      content: 'Echo: hi there',
    });
    // The raw JSON text of the model's arguments is taken too.
    const sum = await pool.callTool('everything', everything, project, 'get-sum', '{"a": 2, "b": 40}', { retrySafe: true });
    expect(sum).toEqual({ success: true, content: 'The sum of 2 and 40 is 42.' });
  });

  test('server-filesystem reads a file and lists a folder of the allowed one', async () => {
    const config = filesystemServer(path.join(project, 'files'));
    const read = await pool.callTool('fs', config, project, 'read_text_file', { path: path.join(project, 'files', 'hello.txt') }, { retrySafe: true });
    expect(read).toEqual({ success: true, content: 'hello from the project\n' });
    const list = await pool.callTool('fs', config, project, 'list_directory', { path: path.join(project, 'files') }, { retrySafe: true });
    expect(list.success).toBe(true);
    expect(String(list.content).split('\n').sort()).toEqual(['[DIR] sub', '[FILE] hello.txt']);
  });

  test('a tool that fails (a path outside the allowed folder) is a failed result, not an exception', async () => {
    const config = filesystemServer(path.join(project, 'files'));
    const outside = await pool.callTool('fs', config, project, 'read_text_file', { path: '/etc/hostname' }, { retrySafe: true });
    expect(outside.success).toBe(false);
    expect(outside.error).toMatch(/access denied|outside allowed/i);
  });

  test('arguments that are not an object are refused before the server sees them', async () => {
    const result = await pool.callTool('everything', everything, project, 'echo', '[1, 2]', { retrySafe: true });
    expect(result).toEqual({ success: false, error: 'Invalid arguments for everything tool echo: expected a JSON object' });
  });

  test('a call over its timeout ends with a message naming it', async () => {
    const result = await pool.callTool('everything', everything, project, LONG_OPERATION, { duration: 30, steps: 30 }, { retrySafe: true, timeoutMs: 300 });
    expect(result).toEqual({ success: false, error: `MCP server everything: ${LONG_OPERATION} timed out after 300 ms` });
  });

  test('progress is reported, and aborting the signal cancels the call with its reason', async () => {
    const controller = new AbortController();
    const reason = new Error('stopped by the test');
    const progress: number[] = [];
    const call = pool.callTool(
      'everything',
      everything,
      project,
      LONG_OPERATION,
      { duration: 30, steps: 300 },
      {
        retrySafe: true,
        signal: controller.signal,
        onProgress: (p) => {
          progress.push(p.progress);
          if (progress.length === 2) controller.abort(reason);
        },
      },
    );
    await expect(call).rejects.toBe(reason);
    expect(progress).toEqual([1, 2]);
    // The connection is still good.
    const pid = pidOf(pool, 'everything');
    await expect(pool.callTool('everything', everything, project, 'echo', { message: 'after' }, { retrySafe: true })).resolves.toMatchObject({ success: true });
    expect(pidOf(pool, 'everything')).toBe(pid);
  });

  test('an already aborted signal rejects before anything is sent', async () => {
    const controller = new AbortController();
    controller.abort(new Error('too late'));
    await expect(pool.callTool('everything', everything, project, 'echo', { message: 'x' }, { retrySafe: true, signal: controller.signal })).rejects.toThrow('too late');
  });
});

describe('a server that goes away', () => {
  /** Starts the long operation and kills the server at its first progress; returns the result and the killed pid. */
  async function killedMidCall(retrySafe: boolean) {
    await pool.callTool('everything', everything, project, 'echo', { message: 'warm' }, { retrySafe: true });
    const pid = pidOf(pool, 'everything');
    let killed = false;
    const progress: number[] = [];
    const result = await pool.callTool(
      'everything',
      everything,
      project,
      LONG_OPERATION,
      { duration: 1, steps: 10 },
      {
        retrySafe,
        onProgress: (p) => {
          progress.push(p.progress);
          if (!killed) {
            killed = true;
            process.kill(pid, 'SIGKILL');
          }
        },
      },
    );
    return { result, pid, progress };
  }

  test('mid-call, a retry-safe call is made again on a new server', async () => {
    const { result, pid, progress } = await killedMidCall(true);
    expect(result).toEqual({ success: true, content: `Long running operation completed. Duration: 1 seconds, Steps: 10.` });
    expect(alive(pid)).toBe(false);
    // The second run reported its own progress from the start.
    expect(progress.slice(0, 2)).toEqual([1, 1]);
    expect(pidOf(pool, 'everything')).not.toBe(pid);
  });

  test('mid-call, any other call says it may or may not have taken effect', async () => {
    const { result } = await killedMidCall(false);
    expect(result.success).toBe(false);
    expect(result.error).toMatch(new RegExp(`^MCP server everything stopped during ${LONG_OPERATION}; the call may or may not have taken effect\\.`));
    expect(pool.connections().filter((c) => c.server === 'everything')).toEqual([]);
  });

  test('while idle, it is dropped from the pool and started again on next use', async () => {
    await pool.callTool('everything', everything, project, 'echo', { message: 'warm' }, { retrySafe: true });
    const pid = pidOf(pool, 'everything');
    process.kill(pid, 'SIGKILL');
    await waitFor('the dead server to leave the pool', () => pool.connections().every((c) => c.pid !== pid));
    await expect(pool.callTool('everything', everything, project, 'echo', { message: 'again' }, { retrySafe: false })).resolves.toEqual({
      success: true,
      content: 'Echo: again',
    });
    expect(pidOf(pool, 'everything')).not.toBe(pid);
  });
});

describe('the started server', () => {
  test("gets only the SDK's harmless defaults and its configured env, never the worker's keys", async () => {
    const saved = { key: process.env.OPENAI_API_KEY, value: process.env.LOOPWRIGHT_MCP_TEST_VALUE };
    process.env.OPENAI_API_KEY = 'sk-must-not-leak-0123456789';
    process.env.LOOPWRIGHT_MCP_TEST_VALUE = 'expanded-value';
    const own = new McpPool();
    try {
      const config = everythingStdio({ env: { PASSED: '${LOOPWRIGHT_MCP_TEST_VALUE}', LITERAL: 'as written' } });
      const result = await own.callTool('everything', config, project, 'get-env', {}, { retrySafe: true });
      expect(result.success).toBe(true);
      const env = JSON.parse(String(result.content)) as Record<string, string>;
      expect(env).toMatchObject({ PASSED: 'expanded-value', LITERAL: 'as written' });
      expect(env).not.toHaveProperty('OPENAI_API_KEY');
      expect(env).not.toHaveProperty('LOOPWRIGHT_MCP_TEST_VALUE');
      const allowed = new Set([...DEFAULT_INHERITED_ENV_VARS, 'PASSED', 'LITERAL']);
      expect(Object.keys(env).filter((k) => !allowed.has(k))).toEqual([]);
      expect(env.PATH).toBe(process.env.PATH);
    } finally {
      await own.closeAll();
      for (const [name, value] of [
        ['OPENAI_API_KEY', saved.key],
        ['LOOPWRIGHT_MCP_TEST_VALUE', saved.value],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  test.concurrent('runs in the project root, or in its cwd taken from there', async () => {
    const own = new McpPool();
    try {
      const allowed = async (config: ReturnType<typeof filesystemServer>) => {
        const result = await own.callTool('fs', config, project, 'list_allowed_directories', {}, { retrySafe: true });
        return String(result.content);
      };
      await expect(allowed(filesystemServer('.'))).resolves.toContain(project);
      await expect(allowed(filesystemServer('.', { cwd: 'files/sub' }))).resolves.toContain(path.join(project, 'files', 'sub'));
      // Two configurations, two connections.
      expect(own.connections()).toHaveLength(2);
    } finally {
      await own.closeAll();
    }
  });

  test('concurrent first uses share one start', async () => {
    const own = new McpPool();
    const open = jest.spyOn(McpConnection, 'open');
    try {
      // A server name of its own: the tests that run side by side open connections of their own meanwhile.
      const calls = ['a', 'b', 'c'].map((message) => own.callTool('shared-start', everything, project, 'echo', { message }, { retrySafe: true }));
      await expect(Promise.all(calls)).resolves.toEqual(['a', 'b', 'c'].map((m) => ({ success: true, content: `Echo: ${m}` })));
      expect(open.mock.calls.filter(([target]) => target.server === 'shared-start')).toHaveLength(1);
      expect(own.connections()).toHaveLength(1);
    } finally {
      open.mockRestore();
      await own.closeAll();
    }
  });

  test.concurrent('an idle connection is closed and its server stopped', async () => {
    const own = new McpPool({ idleMs: 50 });
    await own.callTool('everything', everything, project, 'echo', { message: 'once' }, { retrySafe: true });
    const pid = pidOf(own, 'everything');
    await waitFor('the idle connection to close', () => own.connections().length === 0 && !alive(pid));
    await own.closeAll();
  });

  test.concurrent('closeAll stops every server it started', async () => {
    const own = new McpPool();
    await own.listTools('everything', everything, project);
    await own.listTools('fs', filesystemServer(project), project);
    const pids = own.connections().map((c) => c.pid!);
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(alive(pid)).toBe(true);
    await own.closeAll();
    expect(own.connections()).toEqual([]);
    for (const pid of pids) expect(alive(pid)).toBe(false);
  });
});

describe('a server that cannot be started', () => {
  test("one that exits at once: MCP_SERVER_FAILED with its stderr, the configuration's secrets redacted", async () => {
    const secret = 'very-secret-token-0123';
    const own = new McpPool({ env: { MCP_TEST_SECRET: secret } });
    const config = {
      command: process.execPath,
      args: ['-e', 'process.stderr.write("fatal: bad token " + process.env.TOKEN + "\\n"); process.exit(3)'],
      env: { TOKEN: '${MCP_TEST_SECRET}' },
    };
    const error = await own.listTools('broken', config, project).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpServerError);
    expect(error).toMatchObject({ name: MCP_SERVER_FAILED, type: MCP_SERVER_FAILED, server: 'broken' });
    const message = (error as Error).message;
    expect(message).toMatch(/^MCP server broken could not be started \(command ".*"\): exited before it answered\nIts last output \(stderr\):\nfatal: bad token \[redacted\]$/);
    expect(message).not.toContain(secret);
    expect(own.connections()).toEqual([]);
  });

  test('a command that does not exist, and a working folder that does not', async () => {
    await expect(pool.listTools('nope', { command: 'loopwright-no-such-mcp-server' }, project)).rejects.toThrow(
      'MCP server nope could not be started (command "loopwright-no-such-mcp-server"): command not found',
    );
    await expect(pool.listTools('nowhere', everythingStdio({ cwd: 'missing' }), project)).rejects.toMatchObject({
      type: MCP_SERVER_FAILED,
      message: expect.stringContaining(`its working folder ${path.join(project, 'missing')} is not a folder`),
    });
  });

  test('a variable without a value is a configuration error, before anything starts', async () => {
    const open = jest.spyOn(McpConnection, 'open');
    try {
      const config = everythingStdio({ env: { KEY: '${LOOPWRIGHT_MCP_TEST_UNSET}' } });
      await expect(pool.callTool('everything', config, project, 'echo', { message: 'x' }, { retrySafe: true })).rejects.toBeInstanceOf(McpConfigError);
      expect(open).not.toHaveBeenCalled();
    } finally {
      open.mockRestore();
    }
  });
});
