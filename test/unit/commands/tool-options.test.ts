/**
 * The tool options of `run` and `chat`, through the whole command line down to the
 * StartSessionOptions the command hands the client: `--tools`, `--mcp-config` (files read here,
 * `${VAR}` kept, a later file winning per server), `--no-project-mcp` and `--allow-tool`; their
 * LOOPWRIGHT_* environment defaults; bad values and bad files named, exit 2, nothing started. No
 * server: the Temporal connection is replaced by one whose `start` records its options and stops.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TOOL_SETTINGS_ENV_NAMES, toolSessionSettings } from '../../../cli/commands/tool-settings';
import { EXIT } from '../../../cli/exit-codes';
import { cli } from './cli-capture';
import type { StartSessionOptions } from '../../../client/session-client';

const started: StartSessionOptions[] = [];
const STOP = 'recorded the session options; no session started';

jest.mock('../../../cli/temporal-session', () => ({
  openTemporal: jest.fn(async () => ({
    namespace: 'default',
    taskQueue: 'loopwright',
    loopwright: {
      start: async (options: StartSessionOptions) => {
        started.push(options);
        throw new Error(STOP);
      },
    },
    close: async () => undefined,
  })),
}));

const ENV_NAMES = ['LOOPWRIGHT_TOOLS', 'LOOPWRIGHT_ALLOW_TOOLS'];

let dir: string;
const saved: Record<string, string | undefined> = {};
beforeEach(() => {
  started.length = 0;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-tool-options-'));
  for (const name of [...ENV_NAMES, ...Object.keys(process.env).filter((n) => n.startsWith('OTEL_'))]) {
    saved[name] = process.env[name];
    delete process.env[name];
  }
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
    delete saved[name];
  }
});

/** Writes a file in the test's folder and returns its path. */
function file(name: string, content: unknown): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
  return p;
}

async function runStarts(...options: string[]): Promise<StartSessionOptions> {
  const { code, stderr } = await cli(['run', 'bundles/requirements-facilitator', 'facilitator', 'hello', '--no-check', ...options]);
  expect(stderr).toContain(STOP);
  expect(code).toBe(EXIT.FAILED);
  expect(started).toHaveLength(1);
  return started[0]!;
}

async function chatStarts(...options: string[]): Promise<StartSessionOptions> {
  const { code, stderr } = await cli(['chat', 'bundles/requirements-facilitator', 'facilitator', ...options]);
  expect(stderr).toContain(STOP);
  expect(code).toBe(EXIT.FAILED);
  expect(started).toHaveLength(1);
  return started[0]!;
}

const FIELDS = ['tools', 'mcpServers', 'projectMcpConfig', 'allowTools'] as const;

test('run: without the tool options or variables, the session input has none of their fields', async () => {
  const options = await runStarts();
  for (const field of FIELDS) expect(options).not.toHaveProperty(field);
});

test('run: every option reaches the session input, in its field', async () => {
  const a = file('a.json', { mcpServers: { github: { type: 'http', url: 'https://api.example.com/mcp', headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' } } } });
  const options = await runStarts(
    '--tools',
    'read_file, save_output,github__*',
    '--mcp-config',
    a,
    '--no-project-mcp',
    '--allow-tool',
    'github__get_*',
    '--allow-tool',
    'github__list_issues,github__search_*',
  );
  expect(options.tools).toEqual(['read_file', 'save_output', 'github__*']);
  expect(options.mcpServers).toEqual({ github: { type: 'http', url: 'https://api.example.com/mcp', headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' } } });
  expect(options.projectMcpConfig).toBe(false);
  expect(options.allowTools).toEqual(['github__get_*', 'github__list_issues', 'github__search_*']);
});

test('run: --mcp-config is repeatable; a later file wins per server; ${VAR} strings stay as written (HOME is set, not expanded)', async () => {
  expect(process.env.HOME).toBeTruthy();
  const first = file('first.json', { mcpServers: { fs: { command: 'npx', args: ['-y', 'server-filesystem', '${HOME}/docs'] }, gh: { url: 'https://old.example.com/mcp' } } });
  const second = file('second.json', { mcpServers: { gh: { url: 'https://${GH_HOST:-api.github.com}/mcp', alwaysAllow: ['get_*'] } }, other: 'ignored' });
  const options = await runStarts('--mcp-config', first, '--mcp-config', second);
  expect(options.mcpServers).toEqual({
    fs: { command: 'npx', args: ['-y', 'server-filesystem', '${HOME}/docs'] },
    gh: { url: 'https://${GH_HOST:-api.github.com}/mcp', alwaysAllow: ['get_*'] },
  });
  expect(options).not.toHaveProperty('projectMcpConfig');
});

test('run: a relative --mcp-config is read from the working folder', () => {
  file('rel.json', { mcpServers: { s: { command: 'srv' } } });
  expect(toolSessionSettings({ mcpConfig: ['rel.json'] }, {}, dir)).toEqual({ mcpServers: { s: { command: 'srv' } } });
});

test('run: the LOOPWRIGHT_* variables are the defaults of their options; an option given wins', async () => {
  process.env.LOOPWRIGHT_TOOLS = 'read_file, github__*,';
  process.env.LOOPWRIGHT_ALLOW_TOOLS = 'github__get_*';
  const fromEnv = await runStarts();
  expect(fromEnv.tools).toEqual(['read_file', 'github__*']);
  expect(fromEnv.allowTools).toEqual(['github__get_*']);
  started.length = 0;
  const given = await runStarts('--tools', 'save_output', '--allow-tool', 'slack__*');
  expect(given.tools).toEqual(['save_output']);
  expect(given.allowTools).toEqual(['slack__*']);
});

test('run: an empty variable counts as unset', async () => {
  process.env.LOOPWRIGHT_TOOLS = ' ';
  process.env.LOOPWRIGHT_ALLOW_TOOLS = '';
  const options = await runStarts();
  expect(options).not.toHaveProperty('tools');
  expect(options).not.toHaveProperty('allowTools');
});

test.each([
  ['--tools', ' , ', /Expected a comma-separated list of tool names or patterns/],
  ['--tools', 'read_file,read file', /"read file": a tool name or pattern takes letters, digits, _, - and \*/],
  ['--tools', 'gh.tool', /"gh\.tool": a tool name or pattern/],
  ['--allow-tool', 'github__get?', /"github__get\?": a tool name or pattern/],
  ['--allow-tool', ',', /Expected a comma-separated list of tool names or patterns/],
])('run %s %s: the option and the value are named; exit 2, nothing started', async (option, value, expected) => {
  const { code, stderr } = await cli(['run', 'b', 'a', 'hi', '--no-check', option, value]);
  expect(code).toBe(EXIT.USAGE);
  const first = stderr.split('\n')[0]!;
  expect(first).toMatch(new RegExp(`^error: option '${option} <[^>]+>' argument '${value.replace(/[?.*+]/g, '\\$&')}' is invalid\\. `));
  expect(first).toMatch(expected);
  expect(started).toEqual([]);
});

test.each([
  ['LOOPWRIGHT_TOOLS', 'read file'],
  ['LOOPWRIGHT_ALLOW_TOOLS', ','],
])('run with %s=%s: the variable and its value are named; exit 2, nothing started', async (name, value) => {
  process.env[name] = value;
  const { code, stderr } = await cli(['run', 'b', 'a', 'hi', '--no-check']);
  expect(code).toBe(EXIT.USAGE);
  expect(stderr.split('\n')[0]).toContain(`error: environment variable ${name} value '${value}' is invalid.`);
  expect(started).toEqual([]);
});

describe('a bad --mcp-config file: a usage mistake naming the file and the field; exit 2, nothing started', () => {
  const cases: [string, () => string, RegExp][] = [
    ['missing', () => path.join(dir, 'nope.json'), /: cannot read the file: no such file$/],
    ['a folder', () => dir, /: cannot read the file: a folder, not a file$/],
    ['not JSON', () => file('bad.json', '{"mcpServers": '), /: not valid JSON: /],
    ['a list', () => file('list.json', '[]'), /: expected a JSON object \{"mcpServers": \{"<name>": \{\.\.\.\}\}\}$/],
    ['no mcpServers', () => file('none.json', { servers: {} }), /: mcpServers: missing; /],
    ['mcpServers a list', () => file('l.json', { mcpServers: [] }), /: mcpServers: expected an object, got a list$/],
    ['a server without command or url', () => file('s.json', { mcpServers: { gh: { args: ['x'] } } }), /: mcpServers\.gh\.command: expected a string, got undefined$/],
    ['a bad server name', () => file('n.json', { mcpServers: { a__b: { command: 'x' } } }), /: mcpServers\.a__b: a server name takes letters, digits, _ and -/],
    ['an unknown setting', () => file('u.json', { mcpServers: { gh: { url: 'https://x', header: {} } } }), /: mcpServers\.gh\.header: unknown setting/],
    ['an env value not a string', () => file('e.json', { mcpServers: { fs: { command: 'x', env: { PORT: 80 } } } }), /: mcpServers\.fs\.env\.PORT: expected a string, got 80$/],
  ];
  test.each(cases)('%s', async (_case, make, expected) => {
    const given = make();
    const { code, stderr } = await cli(['run', 'b', 'a', 'hi', '--no-check', '--mcp-config', given]);
    expect(code).toBe(EXIT.USAGE);
    const first = stderr.split('\n')[0]!;
    expect(first.startsWith(`error: --mcp-config ${given}: `)).toBe(true);
    expect(first).toMatch(expected);
    expect(stderr).toContain('Usage: loopwright run ');
    expect(started).toEqual([]);
  });

  test('--json: one UsageError object naming the file', async () => {
    const given = path.join(dir, 'nope.json');
    const { code, stdout } = await cli(['run', 'b', 'a', 'hi', '--no-check', '--json', '--mcp-config', given]);
    expect(code).toBe(EXIT.USAGE);
    expect(JSON.parse(stdout)).toEqual({ error: `--mcp-config ${given}: cannot read the file: no such file`, type: 'UsageError' });
  });
});

test("chat: the same options and variables reach the session it starts; a bad file is refused like run's", async () => {
  process.env.LOOPWRIGHT_ALLOW_TOOLS = 'fs__read_*';
  const config = file('c.json', { mcpServers: { fs: { command: 'npx', env: { ROOT: '${PWD}' } } } });
  const options = await chatStarts('--tools', 'read_file,fs__*', '--mcp-config', config, '--no-project-mcp');
  expect(options).toMatchObject({ tools: ['read_file', 'fs__*'], mcpServers: { fs: { command: 'npx', env: { ROOT: '${PWD}' } } }, projectMcpConfig: false, allowTools: ['fs__read_*'] });
  started.length = 0;
  const bad = await cli(['chat', 'b', 'a', '--mcp-config', path.join(dir, 'gone.json')]);
  expect(bad.code).toBe(EXIT.USAGE);
  expect(bad.stderr).toMatch(/^error: --mcp-config .*gone\.json: cannot read the file: no such file/);
  expect(started).toEqual([]);
});

test('run and chat --help list the tool options and the variables that give them a default', async () => {
  expect([...TOOL_SETTINGS_ENV_NAMES].sort()).toEqual([...ENV_NAMES].sort());
  for (const command of ['run', 'chat']) {
    const { stdout } = await cli([command, '--help']);
    for (const flag of ['--tools <list>', '--mcp-config <file>', '--no-project-mcp', '--allow-tool <pattern>']) expect(stdout).toContain(flag);
    const environment = stdout.slice(stdout.indexOf('\nEnvironment:\n'));
    for (const name of ENV_NAMES) expect(environment).toMatch(new RegExp(`\\n  ${name}\\b`));
  }
});

test('toolSessionSettings: the environment is read from the argument; --project-mcp left alone sets nothing', () => {
  expect(toolSessionSettings({ projectMcp: true }, { LOOPWRIGHT_TOOLS: 'a,b' })).toEqual({ tools: ['a', 'b'] });
  expect(toolSessionSettings({ mcpConfig: [] }, {})).toEqual({});
  // A file with no server adds none, and sets no field.
  expect(toolSessionSettings({ mcpConfig: [file('empty.json', { mcpServers: {} })] }, {})).toEqual({});
});

test('run and chat: the delegation flags reach the session input; files host defaults to this machine', async () => {
  expect((await runStarts()).delegation).toBeUndefined();
  started.length = 0;
  const run = await runStarts('--no-delegation', '--delegate-to', 'pm, bmm/*', '--delegation-depth', '0', '--delegations-per-turn', '3', '--files-host', 'gpu-1');
  expect(run.delegation).toEqual({ enabled: false, agents: ['pm', 'bmm/*'], maxDepth: 0, maxChildren: 3 });
  expect(run.filesHost).toBe('gpu-1');
  started.length = 0;
  const chat = await chatStarts('--delegate-to', 'analyst', '--files-host', 'any');
  expect(chat.delegation).toEqual({ agents: ['analyst'] });
  expect(chat.filesHost).toBeUndefined();
  started.length = 0;
  expect((await runStarts()).filesHost).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*$/);
  const bad = await cli(['run', 'b', 'a', 'hi', '--no-check', '--delegate-to', 'a b']);
  expect(bad.code).toBe(EXIT.USAGE);
  expect(bad.stderr).toContain('"a b": an agent id or pattern');
});
