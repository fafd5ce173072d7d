import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MCP_CONFIG_INVALID } from '../../common/offered-tools';
import { expandServerVariables, expandVariables, MAX_MCP_CONFIG_BYTES, McpConfigError, parseMcpConfig, parseMcpServers, readMcpConfig, readProjectMcpConfig } from '../../activities/mcp';

const FILE = '/p/.mcp.json';

/** The McpConfigError `fn` throws (fails the test when it throws nothing or something else). */
function configError(fn: () => unknown): McpConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(McpConfigError);
    return error as McpConfigError;
  }
  throw new Error('expected an McpConfigError');
}

const parse = (value: unknown) => parseMcpConfig(JSON.stringify(value), FILE);

describe('parseMcpConfig', () => {
  test("reads stdio and HTTP servers with every field, leaving other tools' top-level keys alone", () => {
    const servers = parse({
      otherTool: { anything: true },
      mcpServers: {
        git: { command: 'uvx', args: ['mcp-server-git'], env: { GIT_TOKEN: '${GIT_TOKEN}' }, cwd: 'repo', alwaysAllow: ['git_status'], timeout: 5000 },
        'web_search-2': { type: 'http', url: 'https://example.test/mcp', headers: { Authorization: 'Bearer ${TOKEN}' }, disabled: true },
        plain: { type: 'stdio', command: 'server' },
        streamable: { type: 'streamable-http', url: 'http://127.0.0.1:9/mcp' },
      },
    });
    expect(servers).toEqual({
      git: { command: 'uvx', args: ['mcp-server-git'], env: { GIT_TOKEN: '${GIT_TOKEN}' }, cwd: 'repo', alwaysAllow: ['git_status'], timeout: 5000 },
      'web_search-2': { type: 'http', url: 'https://example.test/mcp', headers: { Authorization: 'Bearer ${TOKEN}' }, disabled: true },
      plain: { type: 'stdio', command: 'server' },
      streamable: { type: 'streamable-http', url: 'http://127.0.0.1:9/mcp' },
    });
  });

  test('a file without mcpServers has no servers', () => {
    expect(parse({ somethingElse: 1 })).toEqual({});
    expect(parse({ mcpServers: {} })).toEqual({});
  });

  test('a bad field is named with the file, as a typed error', () => {
    const error = configError(() => parse({ mcpServers: { git: { command: 42 } } }));
    expect(error.message).toBe('Invalid .mcp.json /p/.mcp.json: mcpServers.git.command: expected a string');
    expect(error).toMatchObject({ file: FILE, field: 'mcpServers.git.command', name: MCP_CONFIG_INVALID, type: MCP_CONFIG_INVALID });
  });

  test.each([
    [{ mcpServers: { s: { command: 'x', args: 'one' } } }, 'mcpServers.s.args', 'expected an array'],
    [{ mcpServers: { s: { command: 'x', args: ['a', 1] } } }, 'mcpServers.s.args.1', 'expected a string'],
    [{ mcpServers: { s: { command: 'x', env: { TOKEN: 1 } } } }, 'mcpServers.s.env.TOKEN', 'expected a string'],
    [{ mcpServers: { s: { command: 'x', env: { 'BAD=NAME': 'v' } } } }, 'mcpServers.s.env.BAD=NAME', 'environment variable names'],
    [{ mcpServers: { s: { command: '' } } }, 'mcpServers.s.command', 'must not be empty'],
    [{ mcpServers: { s: { command: 'x', timeout: -1 } } }, 'mcpServers.s.timeout', 'must be positive'],
    [{ mcpServers: { s: { command: 'x', timeout: 1.5 } } }, 'mcpServers.s.timeout', 'expected a whole number'],
    [{ mcpServers: { s: { command: 'x', disabled: 'yes' } } }, 'mcpServers.s.disabled', 'expected a boolean'],
    [{ mcpServers: { s: { command: 'x', alwaysAllow: 'all' } } }, 'mcpServers.s.alwaysAllow', 'expected an array'],
    [{ mcpServers: { s: { url: 'ftp://example.test' } } }, 'mcpServers.s.url', 'expected an http:// or https:// URL'],
    [{ mcpServers: { s: { url: 'not a url' } } }, 'mcpServers.s.url', 'not a valid URL'],
    [{ mcpServers: { s: { url: 'http://x.test', headers: { 'Bad Header': 'v' } } } }, 'mcpServers.s.headers.Bad Header', 'not a valid HTTP header name'],
    [{ mcpServers: { s: { type: 'websocket', url: 'ws://x' } } }, 'mcpServers.s.type', 'expected "stdio", "http" or "streamable-http"'],
    [{ mcpServers: { s: { type: 'http', command: 'x' } } }, 'mcpServers.s.url', 'expected a string'],
    [{ mcpServers: { s: { args: ['x'] } } }, 'mcpServers.s', 'needs a command'],
    [{ mcpServers: { s: { command: 'x', url: 'http://x.test' } } }, 'mcpServers.s', 'has both command and url'],
    [{ mcpServers: { s: 'npx server' } }, 'mcpServers.s', 'expected an object'],
    [{ mcpServers: ['x'] }, 'mcpServers', 'expected an object'],
  ])('%j: %s is named', (value, field, problem) => {
    const error = configError(() => parse(value));
    expect(error.field).toBe(field);
    expect(error.message).toContain(`Invalid .mcp.json ${FILE}: ${field}: `);
    expect(error.message).toContain(problem);
  });

  test('the sse transport is refused with a clear message', () => {
    const error = configError(() => parse({ mcpServers: { old: { type: 'sse', url: 'http://x.test/sse' } } }));
    expect(error.field).toBe('mcpServers.old.type');
    expect(error.message).toMatch(/sse transport is not supported/);
  });

  test.each(['has space', 'a__b', 'x'.repeat(41), '', 'dot.ted'])('server name %j is refused', (name) => {
    const error = configError(() => parse({ mcpServers: { [name]: { command: 'x' } } }));
    expect(error.message).toMatch(/server names are letters, digits, _ and -, at most 40 characters, without __/);
  });

  test('server names of 40 characters with _ and - are fine', () => {
    const name = `a-b_${'c'.repeat(36)}`;
    expect(Object.keys(parse({ mcpServers: { [name]: { command: 'x' } } }))).toEqual([name]);
  });

  test('bad JSON and a top level that is no object are refused, naming the file', () => {
    const bad = configError(() => parseMcpConfig('{"mcpServers": ', FILE));
    expect(bad.message).toMatch(/^Invalid \.mcp\.json \/p\/\.mcp\.json: not valid JSON/);
    expect(bad.file).toBe(FILE);
    expect(configError(() => parseMcpConfig('[1]', FILE)).message).toBe('Invalid .mcp.json /p/.mcp.json: (top level): expected an object');
  });

  test('servers given with a session are checked by the same rules, naming their source', () => {
    expect(parseMcpServers({ s: { command: 'x' } }, 'session input')).toEqual({ s: { command: 'x' } });
    const error = configError(() => parseMcpServers({ s: { command: 1 } }, 'session input'));
    expect(error.message).toBe('Invalid MCP servers (session input): mcpServers.s.command: expected a string');
    expect(error.file).toBe('session input');
  });
});

describe('readMcpConfig', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'loopwright-mcp-config-'));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('a missing file means no servers', async () => {
    await expect(readMcpConfig(path.join(dir, 'missing.json'))).resolves.toEqual({});
    await expect(readProjectMcpConfig(path.join(dir, 'no-such-project'))).resolves.toEqual({});
  });

  test("reads the project's .mcp.json (a BOM is fine)", async () => {
    const project = path.join(dir, 'project');
    await fs.mkdir(project);
    await fs.writeFile(path.join(project, '.mcp.json'), `\uFEFF${JSON.stringify({ mcpServers: { fs: { command: 'srv' } } })}`);
    await expect(readProjectMcpConfig(project)).resolves.toEqual({ fs: { command: 'srv' } });
  });

  test('a file over the size limit, a folder and bad JSON are McpConfigErrors naming the file', async () => {
    const big = path.join(dir, 'big.json');
    await fs.writeFile(big, `{"mcpServers": {}, "pad": "${'x'.repeat(MAX_MCP_CONFIG_BYTES)}"}`);
    await expect(readMcpConfig(big)).rejects.toThrow(new RegExp(`Invalid \\.mcp\\.json ${big}: larger than ${MAX_MCP_CONFIG_BYTES} bytes`));
    await expect(readMcpConfig(dir)).rejects.toBeInstanceOf(McpConfigError);
    const bad = path.join(dir, 'bad.json');
    await fs.writeFile(bad, '{');
    await expect(readMcpConfig(bad)).rejects.toMatchObject({ file: bad, message: expect.stringContaining('not valid JSON') });
  });
});

describe('expandVariables', () => {
  const env = { TOKEN: 'tok-secret-123456', EMPTY: '', HOST: 'example.test' };

  test('expands ${VAR} and ${VAR:-default} in args, env values, url and header values', () => {
    const expanded = expandVariables(
      {
        s: {
          command: '${NOT_EXPANDED}',
          args: ['--token=${TOKEN}', '${MISSING:-fallback}', '${EMPTY:-used when empty}', 'x${EMPTY}y', '$HOME', '${TOKEN'],
          env: { A: '${TOKEN}', B: 'plain' },
          cwd: '${TOKEN}',
        },
        h: { type: 'http', url: 'https://${HOST}/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
      },
      env,
    );
    expect(expanded).toEqual({
      s: { command: '${NOT_EXPANDED}', args: ['--token=tok-secret-123456', 'fallback', 'used when empty', 'xy', '$HOME', '${TOKEN'], env: { A: 'tok-secret-123456', B: 'plain' }, cwd: '${TOKEN}' },
      h: { type: 'http', url: 'https://example.test/mcp', headers: { Authorization: 'Bearer tok-secret-123456' } },
    });
  });

  test('a missing variable without a default names the server, the field and the variable, never a value', () => {
    const error = configError(() => expandVariables({ git: { command: 'x', env: { A: '${TOKEN}', B: '${GITHUB_TOKEN}' } } }, env));
    expect(error.message).toContain('MCP server git');
    expect(error.message).toContain('env.B');
    expect(error.message).toContain('GITHUB_TOKEN');
    expect(error.message).not.toContain(env.TOKEN);
    expect(error.field).toBe('mcpServers.git.env.B');
    const header = configError(() => expandVariables({ h: { url: 'http://x.test', headers: { Authorization: 'Bearer ${TOKEN} ${NOPE}' } } }, env));
    expect(header.message).toMatch(/MCP server h: headers\.Authorization uses the variable NOPE/);
    expect(header.message).not.toContain(env.TOKEN);
  });

  test('a URL that is no URL once expanded is refused without showing it', () => {
    const error = configError(() => expandVariables({ h: { url: '${TOKEN}' } }, env));
    expect(error.message).toBe('Invalid MCP server h: url: after expanding its variables, not a valid URL');
  });

  test("the secrets of a server are its variables' values, env and header values, and its URL's password", () => {
    const stdio = expandServerVariables('s', { command: 'x', args: ['--t=${TOKEN}', 'plain-arg'], env: { LITERAL: 'literal-value' } }, env);
    expect(stdio.secrets).toEqual(['tok-secret-123456', 'literal-value']);
    const http = expandServerVariables('h', { url: 'https://user:p%40ss-word@${HOST}/mcp', headers: { 'X-Key': 'key-value' } }, env);
    expect(http.secrets).toEqual(expect.arrayContaining(['example.test', 'key-value', 'p%40ss-word', 'p@ss-word']));
  });
});
