/**
 * The command line's own behaviour, in this process: help for every command (usage, an example,
 * the environment variables it reads), `--version`, usage mistakes named and exiting 2, unknown
 * commands with a suggestion, and `--json` failures for a usage mistake and for a Temporal server
 * that does not answer (exit 3).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { EXIT } from '../../../cli/exit-codes';
import { cli } from './cli-capture';

const REPO = path.resolve(__dirname, '../../..');
const VERSION = (JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;

const COMMANDS = [
  'run',
  'chat',
  'send',
  'interrupt',
  'status',
  'tools',
  'list',
  'transcript',
  'approve',
  'deny',
  'extend',
  'rewind',
  'branch',
  'end',
  'worker',
  'server',
  'serve',
  'codec-server',
  'demo',
  'inspect',
  'validate',
];

/** Variables each command's help must name (a sample: the ones it cannot work without). */
const ENV_NAMED: Record<string, string[]> = {
  run: ['TEMPORAL_ADDRESS', 'LOOPWRIGHT_TASK_QUEUE', 'OPENAI_API_KEY', 'LOOPWRIGHT_MODEL'],
  chat: ['TEMPORAL_ADDRESS', 'OPENAI_BASE_URL'],
  worker: ['TEMPORAL_ADDRESS', 'OPENAI_API_KEY', 'LOOPWRIGHT_METRICS'],
  server: ['LOOPWRIGHT_STATE_DIR', 'TEMPORAL_CLI_PATH'],
  serve: ['LOOPWRIGHT_SERVE_TOKEN', 'TEMPORAL_ADDRESS', 'OPENAI_API_KEY'],
  'codec-server': ['LOOPWRIGHT_CODEC_KEY', 'LOOPWRIGHT_CODEC_TOKEN'],
  demo: ['OPENAI_API_KEY'],
};

test.each(COMMANDS)('cli: `%s --help` prints its usage, options, an example and the environment variables it reads', async (name) => {
  const { code, stdout, stderr } = await cli([name, '--help']);
  expect(code).toBe(0);
  expect(stderr).toBe('');
  expect(stdout).toMatch(new RegExp(`^Usage: loopwright ${name} `));
  expect(stdout).toContain('Options:');
  expect(stdout).toMatch(new RegExp(`\\nExamples?:\\n  \\$ (\\S+=\\S+ )?loopwright ${name}\\b`));
  const environment = /\nEnvironment:\n((?: {2}.*\n?)+)/.exec(stdout);
  expect(environment).not.toBeNull();
  if (['inspect', 'validate'].includes(name)) expect(environment![1]).toContain('reads no environment variable');
  else expect(environment![1]).toMatch(/ {2}[A-Z][A-Z_]+/);
  for (const variable of ENV_NAMED[name] ?? []) expect(environment![1]).toContain(variable);
});

test('cli: the help of every command lists its options with their defaults', async () => {
  const run = (await cli(['run', '--help'])).stdout;
  for (const flag of [
    '--json',
    '--once',
    '--detach',
    '--max-iterations <n>',
    '--model <model>',
    '--id <id>',
    '--project-root <dir>',
    '--output <dir>',
    '--strict',
    '--no-check',
    '--allow-broad-project-root',
    '--user-skills',
    '--skills-folder <dir>',
    '--allow-secret-files',
    '--allow-hard-links',
  ]) {
    expect(run).toContain(flag);
  }
  expect((await cli(['list', '--help'])).stdout).toMatch(/--limit <n> +at most this many \(default: 50\)/);
  expect((await cli(['chat', '--help'])).stdout).toMatch(/--approve <policy>[^]*\(default:\s+"writes"\)/);
  expect((await cli(['codec-server', '--help'])).stdout).toMatch(/--port <n> +port \(default: 8888\)/);
});

test('cli: --help lists every command, the exit statuses and the --json failure shape', async () => {
  const { code, stdout } = await cli(['--help']);
  expect(code).toBe(0);
  expect(stdout).toMatch(/^Usage: loopwright <command> \[options\]/);
  for (const name of COMMANDS) expect(stdout).toMatch(new RegExp(`\\n  ${name}\\b`));
  expect(stdout).toContain('loopwright <command> --help');
  for (const status of [EXIT.OK, EXIT.FAILED, EXIT.USAGE, EXIT.UNREACHABLE, EXIT.SIGINT]) expect(stdout).toMatch(new RegExp(`\\n  ${status} +\\S`));
  expect(stdout).toContain('{"error": "<message>", "type": "<failure type>"}');
});

test('cli: --version and `version` print the package version; `help <command>` is `<command> --help`', async () => {
  expect(await cli(['--version'])).toEqual({ code: 0, stdout: VERSION, stderr: '' });
  expect(await cli(['-V'])).toEqual({ code: 0, stdout: VERSION, stderr: '' });
  expect(await cli(['version'])).toEqual({ code: 0, stdout: VERSION, stderr: '' });
  const a = await cli(['help', 'send']);
  const b = await cli(['send', '-h']);
  expect(a.code).toBe(0);
  expect(a.stdout).toBe(b.stdout);
});

test('cli: no command prints the help on stderr and exits 2', async () => {
  const { code, stdout, stderr } = await cli([]);
  expect(code).toBe(EXIT.USAGE);
  expect(stdout).toBe('');
  expect(stderr).toMatch(/^Usage: loopwright <command>/);
});

test('cli: an unknown option is named, with the closest one, the usage line and where the help is; exit 2', async () => {
  const { code, stdout, stderr } = await cli(['transcript', 'some-id', '--frm', '3']);
  expect(code).toBe(EXIT.USAGE);
  expect(stdout).toBe('');
  expect(stderr.split('\n')).toEqual([
    "error: unknown option '--frm'",
    '(Did you mean --from?)',
    'Usage: loopwright transcript [options] <id>',
    'Run "loopwright transcript --help" for its options, examples and the environment variables it reads.',
  ]);
});

test('cli: bad values and missing arguments name the option or argument; exit 2', async () => {
  const bad = await cli(['run', 'b', 'a', 'hi', '--max-iterations', 'lots']);
  expect(bad.code).toBe(EXIT.USAGE);
  expect(bad.stderr).toMatch(/^error: option '--max-iterations <n>' argument 'lots' is invalid\. Expected a positive whole number\./);
  const missing = await cli(['run', 'b']);
  expect(missing.code).toBe(EXIT.USAGE);
  expect(missing.stderr).toMatch(/^error: missing required argument 'agent'\nUsage: loopwright run \[options\] <bundle> <agent> <message>/);
  const required = await cli(['rewind', 'some-id']);
  expect(required.code).toBe(EXIT.USAGE);
  expect(required.stderr).toMatch(/^error: required option '--to-turn <k>' not specified/);
  const extra = await cli(['status', 'a', 'b']);
  expect(extra.code).toBe(EXIT.USAGE);
  expect(extra.stderr).toMatch(/^error: too many arguments for 'status'/);
  const policy = await cli(['chat', 'b', 'a', '--approve', ',']);
  expect(policy.code).toBe(EXIT.USAGE);
  expect(policy.stderr).toContain("error: option '--approve <policy>' argument ',' is invalid.");
  // A mistake only the command itself can see is reported the same way.
  const empty = await cli(['run', 'b', 'a', '  ']);
  expect(empty.code).toBe(EXIT.USAGE);
  expect(empty.stderr).toMatch(/^error: the message must not be empty\nUsage: loopwright run /);
});

test('cli: an unknown command exits 2 and suggests the closest one', async () => {
  const typo = await cli(['stauts', 'some-id']);
  expect(typo.code).toBe(EXIT.USAGE);
  expect(typo.stderr).toBe('error: unknown command \'stauts\'\n(Did you mean status?)\nRun "loopwright --help" for the list of commands.');
  const unknown = await cli(['frobnicate']);
  expect(unknown.code).toBe(EXIT.USAGE);
  expect(unknown.stderr).toMatch(/^error: unknown command 'frobnicate'\nRun "loopwright --help"/);
});

test('cli: server has start (the default), stop, status and install, each with its help; the server layer runs them', async () => {
  const help = await cli(['server', '--help']);
  for (const action of ['start', 'stop', 'status', 'install']) expect(help.stdout).toMatch(new RegExp(`\\n  ${action} +\\S`));
  const start = await cli(['server', 'help', 'start']);
  expect(start.code).toBe(0);
  for (const flag of ['-d, --detach', '--port <n>', '--ui-port <n>', '--headless', '--state-dir <dir>']) expect(start.stdout).toContain(flag);
  expect(start.stdout).toMatch(/\nEnvironment:\n {2}LOOPWRIGHT_STATE_DIR/);
  const typo = await cli(['server', 'stauts']);
  expect(typo.code).toBe(EXIT.USAGE);
  expect(typo.stderr).toMatch(/^error: unknown command 'stauts'\n\(Did you mean status\?\)\nUsage: loopwright server /);
  const port = await cli(['server', '--port', '70000']);
  expect(port.code).toBe(EXIT.USAGE);
  expect(port.stderr).toMatch(/^error: option '--port <n>' argument '70000' is invalid\. Expected a port number \(1-65535\)\.\nUsage: loopwright server start \[options\]/);
  // The options reach the server layer: stop looks in the state folder it was given.
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-cli-server-'));
  try {
    const stop = await cli(['server', 'stop', '--state-dir', stateDir]);
    expect(stop).toEqual({ code: 0, stdout: `No embedded Temporal server is running (state folder ${stateDir}).`, stderr: '' });
  } finally {
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
});

test('cli: with --json a usage mistake is one JSON object on stdout, type UsageError, exit 2', async () => {
  const { code, stdout, stderr } = await cli(['transcript', 'some-id', '--json', '--frm']);
  expect(code).toBe(EXIT.USAGE);
  expect(stderr).toBe('');
  expect(JSON.parse(stdout)).toEqual({ error: "unknown option '--frm' (Did you mean --from?)", type: 'UsageError' });
  const value = await cli(['run', 'b', 'a', 'hi', '--json', '--max-iterations', '0']);
  expect(value.code).toBe(EXIT.USAGE);
  expect(JSON.parse(value.stdout)).toEqual({ error: "option '--max-iterations <n>' argument '0' is invalid. Expected a positive whole number.", type: 'UsageError' });
});

describe('a Temporal server that cannot be reached', () => {
  const saved: Record<string, string | undefined> = {};
  const set = (name: string, value: string | undefined): void => {
    if (!(name in saved)) saved[name] = process.env[name];
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  };
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
      delete saved[name];
    }
  });

  /** A port nothing listens on: one the system just gave out and took back. */
  async function closedPort(): Promise<number> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    return port;
  }

  test('cli: --json prints {error, type: ServerUnreachable} and the command exits 3', async () => {
    for (const name of Object.keys(process.env)) if (/^(TEMPORAL_|OTEL_)/.test(name)) set(name, undefined);
    const address = `127.0.0.1:${await closedPort()}`;
    set('TEMPORAL_ADDRESS', address);
    // A short connect deadline (the SDK's is 10 s): both wait it out, side by side.
    set('LOOPWRIGHT_CONNECT_TIMEOUT', '300ms');
    const [{ code, stdout }, text] = await Promise.all([cli(['status', 'no-such-session', '--json']), cli(['send', 'no-such-session', 'hello'])]);
    expect(code).toBe(EXIT.UNREACHABLE);
    const failure = JSON.parse(stdout) as { error: string; type: string };
    expect(failure.type).toBe('ServerUnreachable');
    expect(failure.error).toContain(`cannot reach the Temporal server at ${address}`);

    expect(text.code).toBe(EXIT.UNREACHABLE);
    expect(text.stdout).toBe('');
    expect(text.stderr).toMatch(new RegExp(`^Error: cannot reach the Temporal server at ${address.replace(/\./g, '\\.')} \\(TEMPORAL_ADDRESS\\): `));
  }, 60_000);

  test('cli: an unreachable address from a temporal.toml profile is named with its profile and file', async () => {
    for (const name of Object.keys(process.env)) if (/^(TEMPORAL_|OTEL_)/.test(name)) set(name, undefined);
    const address = `127.0.0.1:${await closedPort()}`;
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lw-toml-')), 'temporal.toml');
    fs.writeFileSync(file, `[profile.staging]\naddress = "${address}"\n`);
    set('TEMPORAL_CONFIG_FILE', file);
    set('TEMPORAL_PROFILE', 'staging');
    set('LOOPWRIGHT_CONNECT_TIMEOUT', '300');
    const { code, stdout } = await cli(['status', 'no-such-session', '--json']);
    expect(code).toBe(EXIT.UNREACHABLE);
    expect(JSON.parse(stdout)).toMatchObject({ type: 'ServerUnreachable', error: expect.stringContaining(`cannot reach the Temporal server at ${address} (profile "staging" of ${file}): `) });
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }, 60_000);

  test('cli: bad connection settings exit 3 with type TemporalConfigError', async () => {
    for (const name of Object.keys(process.env)) if (/^(TEMPORAL_|OTEL_)/.test(name)) set(name, undefined);
    set('TEMPORAL_ADDRESS', 'not an address');
    const { code, stdout } = await cli(['list', '--json']);
    expect(code).toBe(EXIT.UNREACHABLE);
    expect(JSON.parse(stdout)).toMatchObject({ type: 'TemporalConfigError', error: expect.stringContaining('TEMPORAL_ADDRESS') });
  });

  test('cli: a connect timeout that is not a duration exits 3 naming LOOPWRIGHT_CONNECT_TIMEOUT', async () => {
    for (const name of Object.keys(process.env)) if (/^(TEMPORAL_|OTEL_)/.test(name)) set(name, undefined);
    set('TEMPORAL_ADDRESS', `127.0.0.1:${await closedPort()}`);
    for (const bad of ['soon', '-5', '0']) {
      set('LOOPWRIGHT_CONNECT_TIMEOUT', bad);
      const { code, stdout } = await cli(['status', 'no-such-session', '--json']);
      expect(code).toBe(EXIT.UNREACHABLE);
      expect(JSON.parse(stdout)).toEqual({ type: 'TemporalConfigError', error: `Invalid LOOPWRIGHT_CONNECT_TIMEOUT: expected milliseconds or a duration such as 3s (got "${bad}")` });
    }
  });
});

test.concurrent('cli: --help loads neither the Temporal SDK, a provider SDK nor a command module', async () => {
  // A fresh process, as a user runs it: which modules did printing the help load?
  const script = [
    "require('ts-node').register({ transpileOnly: true, project: 'tsconfig.json' });",
    "require('./cli/cli').main(['--help'], { log() {}, error() {} }).then(() => {",
    '  const loaded = Object.keys(require.cache);',
    '  console.log(JSON.stringify(loaded.filter((f) => /@temporalio|@anthropic-ai|[\\\\/]cli[\\\\/]commands[\\\\/](?!option-values)/.test(f))));',
    '});',
  ].join('\n');
  const loaded = JSON.parse((await promisify(execFile)(process.execPath, ['-e', script], { cwd: REPO, encoding: 'utf8' })).stdout) as string[];
  expect(loaded).toEqual([]);
});

test.concurrent('cli: serve --help loads neither the Temporal SDK nor the HTTP server', async () => {
  const script = [
    "require('ts-node').register({ transpileOnly: true, project: 'tsconfig.json' });",
    "require('./cli/cli').main(['serve', '--help'], { log() {}, error() {} }).then(() => {",
    '  const loaded = Object.keys(require.cache);',
    '  console.log(JSON.stringify(loaded.filter((f) => /@temporalio|fastify|[\\\\/]serve[\\\\/]|[\\\\/]cli[\\\\/]commands[\\\\/](?!option-values)/.test(f))));',
    '});',
  ].join('\n');
  const loaded = JSON.parse((await promisify(execFile)(process.execPath, ['-e', script], { cwd: REPO, encoding: 'utf8' })).stdout) as string[];
  expect(loaded).toEqual([]);
});
