/**
 * The package as another project gets it: `npm pack`, install the tarball into an empty folder,
 * and there run the installed `loopwright` command (`--version`, a one-shot session against the
 * fake model) and a consumer TypeScript program whose own worker registers Loopwright's workflow
 * and activities beside one of its own and starts a session through the exported client.
 *
 * Dependencies install from npm's cache when it has them (`--prefer-offline`), from the registry
 * otherwise. Once installed, the tests that run something run side by side (each on a task queue of
 * its own); the one that only reads the installed files runs after them. The Temporal dev server and the fake model run in this process's reach, on free ports.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { TestTemporal } from '../support/temporal-server';
import type { ChatMessage } from '../../common/messages';
import { type FakeOpenAI, type Step, startFakeOpenAI, text, toolCalls } from '../../fake-model/server';
import { startTestTemporal, stopTestTemporal } from '../support/temporal-server';

jest.setTimeout(300_000);

const run = promisify(execFile);
const REPO = path.resolve(__dirname, '../..');
const TSC = path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

let work: string;
let app: string;
let home: string;
let server: TestTemporal;
let fake: FakeOpenAI;
/** The consumer program's compile, started once the package is installed. */
let compiled: Promise<unknown>;

/** The fake model: `call shout` asks for the consumer's tool, then reports its result; anything else is echoed. */
function reply(messages: ChatMessage[]): Step {
  const said = lastUser(messages);
  const result = messages.at(-1)?.role === 'tool' ? String(messages.at(-1)!.content) : undefined;
  if (said === 'call shout' && result === undefined) return toolCalls([{ name: 'shout', arguments: { text: 'plugin' } }]);
  if (result !== undefined) return text(`tool said: ${result}`);
  return text(`echo: ${said}`);
}

/** The last user message of a request, which the fake model echoes. */
function lastUser(messages: ChatMessage[]): string {
  const user = [...messages].reverse().find((m) => m.role === 'user');
  return user ? String(user.content) : '';
}

/** The extra TLS authorities the machine names, which the test set-up keeps out of every other process (test/support/jest-global-setup.js): npm may need them to reach the registry. */
function registryAuthorities(): NodeJS.ProcessEnv {
  const extra = process.env.LOOPWRIGHT_TEST_NODE_EXTRA_CA_CERTS;
  return extra === undefined ? {} : { NODE_EXTRA_CA_CERTS: extra };
}

/** Environment for the installed command and the consumer: nothing of this repository's settings. */
function appEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^(TEMPORAL_|OPENAI_|LOOPWRIGHT_|OTEL_)/.test(key)) env[key] = value;
  return { ...env, HOME: home, OPENAI_API_KEY: 'test', ...extra };
}

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'loopwright-pack-'));
  app = path.join(work, 'app');
  home = path.join(work, 'home');
  fs.mkdirSync(app);
  fs.mkdirSync(home);
  // The servers start while the package is packed and installed.
  const servers = Promise.all([startTestTemporal(), startFakeOpenAI({ responder: (request) => reply(request.body?.messages ?? []) })]);
  servers.catch(() => undefined);
  try {
    // What `npm pack` ships is dist/ as built now: rebuild it when a source is newer.
    await run(process.execPath, [path.join(REPO, 'scripts', 'build.js'), '--if-stale'], { cwd: REPO });
    const packed = await run(NPM, ['pack', '--json', '--pack-destination', work], { cwd: REPO, maxBuffer: 64 * 1024 * 1024 });
    const [{ filename }] = JSON.parse(packed.stdout) as Array<{ filename: string }>;
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
    await run(NPM, ['install', path.join(work, filename), '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: app,
      env: { ...process.env, HOME: process.env.HOME ?? home, ...registryAuthorities() },
    });
    // The consumer program compiles against the installed declarations while the command's tests run;
    // its test awaits the outcome.
    compiled = compileConsumer();
    compiled.catch(() => undefined);
  } finally {
    [server, fake] = await servers;
  }
});

/**
 * Copies the consumer program into the app folder and compiles it there, checking it with Node's own
 * resolution (exports; this run emits out/) and with the older one (typesVersions), side by side.
 */
function compileConsumer(): Promise<unknown> {
  const consumer = path.join(__dirname, 'consumer');
  for (const file of ['main.ts', 'workflows.ts', 'plugin.ts', 'tsconfig.json']) fs.copyFileSync(path.join(consumer, file), path.join(app, file));
  const typeRoots = path.join(REPO, 'node_modules', '@types');
  return Promise.all([
    run(process.execPath, [TSC, '-p', 'tsconfig.json', '--typeRoots', typeRoots], { cwd: app }),
    run(process.execPath, [TSC, '-p', 'tsconfig.json', '--noEmit', '--module', 'commonjs', '--moduleResolution', 'node10', '--typeRoots', typeRoots], { cwd: app }),
  ]);
}

afterAll(async () => {
  await compiled?.catch(() => undefined);
  await fake?.close();
  if (server) await stopTestTemporal(server);
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

test.concurrent('the installed command prints its version and runs a one-shot session, keeping no state in node_modules', async () => {
  const bin = path.join(app, 'node_modules', '.bin', 'loopwright');
  const expected = (JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
  const bundle = path.join(app, 'node_modules', 'loopwright', 'bundles', 'requirements-facilitator');
  const env = appEnv({ TEMPORAL_ADDRESS: server.address, OPENAI_BASE_URL: fake.baseURL, LOOPWRIGHT_TASK_QUEUE: `pack-cli-${process.pid}` });
  // Two independent runs of the command, side by side.
  const [version, once] = await Promise.all([
    run(bin, ['--version'], { cwd: app, env: appEnv({}) }),
    run(bin, ['run', bundle, 'facilitator', 'hello from the installed command', '--once', '--json'], { cwd: app, env, timeout: 120_000 }),
  ]);
  expect(version.stdout.trim()).toBe(expected);

  const result = JSON.parse(once.stdout) as { status: string; response: string };
  expect(result).toMatchObject({ status: 'completed', response: 'echo: hello from the installed command' });
  // State and tools of an installed package live under ~/.loopwright, never inside node_modules.
  const installed = path.join(app, 'node_modules', 'loopwright');
  expect(fs.readdirSync(installed).filter((name) => name.startsWith('.'))).toEqual([]);
  expect(fs.readdirSync(path.join(installed, 'bundles', 'requirements-facilitator'))).not.toContain('docs');
});

test.concurrent('the installed demo finds its example bundle in the package and keeps its project under ~/.loopwright', async () => {
  const bin = path.join(app, 'node_modules', '.bin', 'loopwright');
  // No OPENAI_* setting: the demo uses its scripted model.
  const { OPENAI_API_KEY: _key, ...env } = appEnv({ TEMPORAL_ADDRESS: server.address });
  const demo = await run(bin, ['demo'], { cwd: app, env, timeout: 120_000 });
  expect(demo.stderr).toContain('Session completed after 1 turn(s)');
  const docs = path.join(home, '.loopwright', 'state', 'demo', 'docs');
  expect(fs.readdirSync(docs).filter((f) => f.endsWith('.md'))).toHaveLength(1);
  const installed = path.join(app, 'node_modules', 'loopwright');
  expect(fs.readdirSync(installed).filter((name) => name.startsWith('.'))).toEqual([]);
});

test.concurrent('a consumer program registers Loopwright beside its own workflow and starts a session through the exported client', async () => {
  // Node's own resolution (exports) and the older one (typesVersions) both find the types.
  await compiled;
  const bundle = path.join(app, 'node_modules', 'loopwright', 'bundles', 'requirements-facilitator');
  const taskQueue = `pack-consumer-${process.pid}`;
  const { stdout } = await run(process.execPath, [path.join(app, 'out', 'main.js'), server.address, fake.baseURL, bundle, taskQueue], {
    cwd: app,
    env: appEnv({}),
    timeout: 180_000,
  });
  const outcome = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, string>;
  expect(outcome).toEqual({
    greeting: 'hello LOOPWRIGHT',
    workflowType: 'agentSession',
    expectedType: 'agentSession',
    status: 'completed',
    reply: 'echo: hello from the consumer',
  });
});

test.concurrent('a consumer worker adds Loopwright with LoopwrightPlugin and a tool of its own, which the model calls', async () => {
  // Compiled with main.ts (the consumer's tsconfig takes every .ts file of the folder).
  await compiled;
  expect(fs.existsSync(path.join(app, 'out', 'plugin.js'))).toBe(true);
  const bundle = path.join(app, 'node_modules', 'loopwright', 'bundles', 'requirements-facilitator');
  const { stdout } = await run(process.execPath, [path.join(app, 'out', 'plugin.js'), server.address, fake.baseURL, bundle, `pack-plugin-${process.pid}`], {
    cwd: app,
    env: appEnv({}),
    timeout: 180_000,
  });
  const outcome = JSON.parse(stdout.trim().split('\n').pop()!) as { status: string; reply: string; tools: string[] };
  expect(outcome.status).toBe('completed');
  expect(outcome.reply).toBe('tool said: {"success":true,"content":"PLUGIN!"}');
  expect(outcome.tools).toEqual(expect.arrayContaining(['read_file:builtin', 'shout:custom']));
});

test('the tarball holds the compiled code and the prebuilt workflow bundle, not the sources', () => {
  const installed = path.join(app, 'node_modules', 'loopwright');
  for (const file of ['dist/client/index.js', 'dist/client/index.d.ts', 'dist/worker/index.js', 'dist/workflows/index.js', 'dist/workflow-bundle.js', 'bin/loopwright.js']) {
    expect(fs.existsSync(path.join(installed, file))).toBe(true);
  }
  for (const folder of ['client', 'cli', 'workflows', 'activities', 'test', 'scripts']) expect(fs.existsSync(path.join(installed, folder))).toBe(false);
  const manifest = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  expect(Object.keys(manifest.dependencies)).not.toEqual(expect.arrayContaining(['ts-node']));
  expect(Object.keys(manifest.dependencies)).not.toEqual(expect.arrayContaining(['typescript']));
  expect(fs.existsSync(path.join(app, 'node_modules', 'ts-node'))).toBe(false);
});
