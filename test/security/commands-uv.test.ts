/**
 * uv inside the command sandbox, through the real `run_command` tool on the real bwrap and uv: it
 * reaches no network (not even a package index on the host's loopback, with its offline switch
 * taken away), reads no configuration (the worker user's, the project's), runs the machine's
 * Python with its cache in the command's private /tmp, and where the worker has no uv the command
 * fails saying how to install it. See activities/commands/uv-tool.ts.
 */
import { promises as fs } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RuntimeContext } from '../../common/runtime-context';
import { runCommandTool } from '../../activities/tools/run-command';
import { UV_VERSION } from '../../activities/commands/uv-tool';
import { makeSandboxProject, SANDBOX_UID, type SandboxProject } from '../unit/commands-sandbox/sandbox-fixture';
import { reachableUv, uvTestsSkipped } from '../unit/commands-sandbox/uv-fixture';

jest.setTimeout(30_000);

const SUITE = 'uv in the command sandbox';
/** A PEP 723 script with no dependencies: where it runs from, with what Python. */
const WHERE = '# /// script\n# requires-python = ">=3.8"\n# ///\nimport sys\nprint(sys.base_prefix, sys.version_info[0])\n';
/** One that needs a package from an index. */
const NEEDS_SIX = '# /// script\n# dependencies = ["six"]\n# ///\nimport six\n';
/** A uv.toml no uv that read it would accept. */
const BROKEN_CONFIG = '[[index]]\nurl =\n';

if (uvTestsSkipped(SUITE) === undefined) {
  let fx: SandboxProject;
  let ctx: RuntimeContext;
  let restoreUv: () => Promise<void>;

  beforeAll(async () => {
    restoreUv = await reachableUv();
    fx = await makeSandboxProject();
    await fs.writeFile(path.join(fx.out, 'where.py'), WHERE);
    await fs.writeFile(path.join(fx.out, 'needs-six.py'), NEEDS_SIX);
    ctx = {
      bundleRoot: fx.project,
      coreRoot: fx.project,
      projectRoot: fx.project,
      variables: { 'project-root': fx.project, output_folder: fx.out },
      readRoots: [fx.project],
      writeRoots: [fx.out],
      maxReadBytes: 1_000_000,
      commands: { network: false, allowUnsandboxed: false, timeoutMs: 20_000 },
    };
  });

  afterAll(async () => {
    await restoreUv?.();
    await fx?.cleanup();
  });

  test("uv: a script with no dependencies runs offline on the machine's Python, with its cache in the private /tmp", async () => {
    const result = await runCommandTool(ctx, { command: 'uv run {output_folder}/where.py && uv cache dir && env | grep ^UV_ | sort' });
    expect(result).toMatchObject({ success: true, sandboxed: true });
    const [where, cache, ...env] = String(result.stdout).trim().split('\n');
    expect(where).toMatch(/^\/usr(\/local)? 3$/);
    expect(cache).toBe('/tmp/home/.cache/uv');
    expect(env).toEqual(expect.arrayContaining(['UV_NO_CONFIG=1', 'UV_OFFLINE=1', 'UV_PYTHON_DOWNLOADS=never', expect.stringMatching(/^UV_PYTHON=\/usr(\/local)?\/bin\/python3$/)]));
  });

  test('uv: offline, a missing dependency is named; with the offline switch taken away, an index on the host loopback is never reached (unless the session allows the network)', async () => {
    const offline = await runCommandTool(ctx, { command: 'uv run {output_folder}/needs-six.py' });
    expect(offline).toMatchObject({ success: false, exitCode: 1 });
    expect(String(offline.stderr)).toMatch(/six was not found in the cache/);

    let connections = 0;
    const index = net.createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => index.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = index.address() as net.AddressInfo;
      const result = await runCommandTool(ctx, { command: `env -u UV_OFFLINE UV_HTTP_RETRIES=0 uv run --index-url http://127.0.0.1:${port}/simple {output_folder}/needs-six.py` });
      expect(result).toMatchObject({ success: false, sandboxed: true });
      expect(String(result.stderr)).toMatch(/Failed to fetch: `?http:\/\/127\.0\.0\.1:\d+\/simple\/six\/`?/);
      expect(String(result.stderr)).toMatch(/Connection refused|client error \(Connect\)/);
      expect(connections).toBe(0);
      // The control: the same command in a session that allows the network reaches it.
      await runCommandTool({ ...ctx, commands: { ...ctx.commands!, network: true } }, { command: `UV_HTTP_RETRIES=0 uv run --index-url http://127.0.0.1:${port}/simple {output_folder}/needs-six.py` });
      expect(connections).toBeGreaterThan(0);
    } finally {
      await new Promise((resolve) => index.close(resolve));
    }
  });

  test("uv: no configuration is read, neither the worker user's (HOME, XDG_CONFIG_HOME) nor the project's uv.toml", async () => {
    const home = await fs.mkdtemp(path.join(os.tmpdir(), 'lw-uv-home-'));
    await fs.mkdir(path.join(home, '.config', 'uv'), { recursive: true });
    await fs.writeFile(path.join(home, '.config', 'uv', 'uv.toml'), BROKEN_CONFIG);
    await fs.writeFile(path.join(fx.project, 'uv.toml'), BROKEN_CONFIG);
    if (process.getuid?.() === 0) await fs.lchown(path.join(fx.project, 'uv.toml'), SANDBOX_UID, SANDBOX_UID);
    const saved = { HOME: process.env.HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME };
    process.env.HOME = home;
    process.env.XDG_CONFIG_HOME = path.join(home, '.config');
    try {
      // Inside, the command's own HOME gets a broken config too: still not read.
      const result = await runCommandTool(ctx, {
        command: 'mkdir -p ~/.config/uv && cp uv.toml ~/.config/uv/uv.toml && uv run out/where.py && echo ran; env -u UV_NO_CONFIG uv run out/where.py || echo "would read it"',
        cwd: '.',
      });
      expect(result).toMatchObject({ success: true });
      expect(String(result.stdout)).toMatch(/^\/usr(\/local)? 3\nran\nwould read it\n$/);
      // The control: without UV_NO_CONFIG, uv reads the project's file and fails on it.
      expect(String(result.stderr)).toMatch(/Failed to parse: `?uv\.toml`?/);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await fs.rm(home, { recursive: true, force: true });
      await fs.rm(path.join(fx.project, 'uv.toml'));
    }
  });

  test('uv: a worker with no uv fails the command with UvNotFoundError saying how to install it; other commands still run', async () => {
    const empty = await fs.mkdtemp(path.join(os.tmpdir(), 'lw-no-tools-'));
    const saved = { PATH: process.env.PATH, LOOPWRIGHT_TOOLS_DIR: process.env.LOOPWRIGHT_TOOLS_DIR };
    process.env.PATH = '/usr/sbin:/usr/bin:/sbin:/bin';
    process.env.LOOPWRIGHT_TOOLS_DIR = empty;
    try {
      const systemUv = await fs.access('/usr/bin/uv').then(
        () => true,
        () => false,
      );
      if (!systemUv) {
        const result = await runCommandTool(ctx, { command: 'uv run {output_folder}/where.py' });
        expect(result).toMatchObject({ success: false, exitCode: 127, errorType: 'UvNotFoundError' });
        expect(String(result.error)).toContain(`uv is not available to commands on this worker: none was found in the tools folder (${empty}/venv/bin/uv) nor on the worker's PATH.`);
        expect(String(result.error)).toContain(`npm run setup`);
        expect(String(result.error)).toContain(`uv==${UV_VERSION}`);
      }
      expect(await runCommandTool(ctx, { command: 'echo still runs' })).toMatchObject({ success: true, stdout: 'still runs\n' });
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await fs.rm(empty, { recursive: true, force: true });
    }
  });
}
