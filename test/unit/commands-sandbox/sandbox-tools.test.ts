/**
 * The worker's programs offered to a command (`SandboxRequest.tools`, uv in practice), on the real
 * bwrap: where they are mounted and how they are found, what is left out and why; and uv's pure
 * parts (its environment, the shell's "not found").
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { bwrapArgs, type SystemLayout } from '../../../activities/commands/bwrap-args';
import { SANDBOX_TOOLS_BIN, sandboxEnv } from '../../../activities/commands/sandbox-env';
import { SandboxRequestError } from '../../../activities/commands/sandbox-errors';
import type { SandboxRequest } from '../../../activities/commands/sandbox-request';
import { runSandboxed } from '../../../activities/commands/sandbox-runner';
import { resolveTools } from '../../../activities/commands/sandbox-tools';
import { saysUvNotFound, uvEnvironment } from '../../../activities/commands/uv-tool';
import { makeSandboxProject, SANDBOX_UID, type SandboxProject } from './sandbox-fixture';

jest.setTimeout(20_000);
const IS_ROOT = process.getuid?.() === 0;
const NOBODY = { uid: 65534, gid: 65534 };

let fx: SandboxProject;
/** A program outside every root: prints its name and where it runs from. */
let tool: string;
beforeAll(async () => {
  fx = await makeSandboxProject();
  await fs.mkdir(path.join(fx.dir, 'tools'), { mode: 0o755 });
  tool = path.join(fx.dir, 'tools', 'hello-tool');
  await fs.writeFile(tool, '#!/bin/sh\necho "hello from $0"\n', { mode: 0o755 });
});
afterAll(async () => {
  await fx.cleanup();
});

const run = (line: string, more: Partial<SandboxRequest> = {}) => runSandboxed({ command: { shell: line }, projectRoot: fx.project, writeRoots: [fx.out], ...more });

describe('sandbox tools', () => {
  it('bwrapArgs: each tool is mounted read-only in the tools folder, after the secrets and before the root goes read-only', () => {
    const layout: SystemLayout = { links: [], mounts: ['/usr'] };
    const paths = { projectRoot: '/p', writeRoots: [], cwd: '/p', readOnly: [], hidden: [{ path: '/p/.env', kind: 'file' as const }] };
    const args = bwrapArgs({ paths, network: false, tmpBytes: 1000, argv: ['true'], tools: [{ name: 'uv', path: '/t/venv/bin/uv' }] }, layout);
    const bind = args.indexOf('/t/venv/bin/uv');
    expect(args.slice(bind - 1, bind + 2)).toEqual(['--ro-bind', '/t/venv/bin/uv', `${SANDBOX_TOOLS_BIN}/uv`]);
    expect(bind).toBeGreaterThan(args.indexOf('/p/.env'));
    expect(bind).toBeLessThan(args.findIndex((arg, i) => arg === '--remount-ro' && args[i + 1] === '/'));
  });

  it('runSandboxed: a tool is found by its name, first on the PATH, and cannot be changed', async () => {
    const result = await run(`hello-tool; echo "$PATH"; echo x > ${SANDBOX_TOOLS_BIN}/hello-tool || echo refused; ls ${SANDBOX_TOOLS_BIN}; ls ${path.dirname(tool)} || echo absent`, {
      tools: [{ name: 'hello-tool', path: tool }],
    });
    expect(result.stdout.split('\n')).toEqual([
      `hello from ${SANDBOX_TOOLS_BIN}/hello-tool`,
      `${SANDBOX_TOOLS_BIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
      'refused',
      'hello-tool',
      'absent',
      '',
    ]);
    expect(result.toolsLeftOut).toEqual([]);
    expect(await fs.readFile(tool, 'utf8')).toContain('hello from');
  });

  it('runSandboxed: without tools the PATH is the base one and the tools folder does not exist', async () => {
    const result = await run(`echo "$PATH"; ls ${SANDBOX_TOOLS_BIN} || echo absent`);
    expect(result.stdout).toBe('/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nabsent\n');
  });

  it('resolveTools: a relative path or a bad name is refused; a missing file or a folder is left out with the reason', async () => {
    await expect(resolveTools([{ name: 'uv', path: 'venv/bin/uv' }], NOBODY)).rejects.toBeInstanceOf(SandboxRequestError);
    await expect(resolveTools([{ name: '../uv', path: tool }], NOBODY)).rejects.toMatchObject({ field: 'tools[0].name' });
    const resolved = await resolveTools(
      [
        { name: 'gone', path: path.join(fx.dir, 'no-such-tool') },
        { name: 'dir', path: fx.dir },
        { name: 'hello', path: tool },
        { name: 'hello', path: '/bin/true' },
      ],
      { uid: SANDBOX_UID, gid: SANDBOX_UID },
    );
    expect(resolved.offered).toEqual([{ name: 'hello', path: tool }]);
    expect(resolved.leftOut).toEqual([
      { name: 'gone', path: path.join(fx.dir, 'no-such-tool'), reason: expect.stringContaining('ENOENT') },
      { name: 'dir', path: fx.dir, reason: expect.stringMatching(/not a file|EACCES/) },
    ]);
  });

  (IS_ROOT ? it : it.skip)('runSandboxed: a tool in a folder closed to the command user is left out, and the command still runs', async () => {
    const closed = await fs.mkdtemp(path.join(fx.dir, 'closed-tools-'));
    await fs.chmod(closed, 0o700);
    const hidden = path.join(closed, 'hello-tool');
    await fs.copyFile(tool, hidden);
    await fs.chmod(hidden, 0o755);
    const result = await run('hello-tool || echo missing', { tools: [{ name: 'hello-tool', path: hidden }] });
    expect(result).toMatchObject({ exitCode: 0, stdout: 'missing\n' });
    expect(result.toolsLeftOut).toEqual([{ name: 'hello-tool', path: hidden, reason: expect.stringContaining(`lies in ${closed}, which the command's user (uid 65534) cannot enter`) }]);
  });

  it('runSandboxed: unsandboxed, the tools are linked from a folder of the fresh HOME, first on the PATH', async () => {
    const fakeBwrap = path.join(fx.dir, 'fake-bwrap');
    await fs.writeFile(fakeBwrap, '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    const result = await run('hello-tool; echo "$PATH" | cut -d: -f1', { tools: [{ name: 'hello-tool', path: tool }], bwrapPath: fakeBwrap, allowUnsandboxed: true });
    const [ran, first] = result.stdout.trim().split('\n');
    expect(result.sandboxed).toBe(false);
    expect(first).toMatch(/loopwright-command-.*\/\.loopwright-tools$/);
    expect(ran).toBe(`hello from ${first}/hello-tool`);
  });
});

describe('uv parts', () => {
  it("uvEnvironment: the machine's Python, no downloads, no configuration files; offline unless the network is allowed", () => {
    const offline = uvEnvironment({ network: false, python: '/usr/bin/python3' });
    expect(offline).toEqual({ UV_NO_CONFIG: '1', UV_PYTHON_DOWNLOADS: 'never', UV_NO_MANAGED_PYTHON: '1', UV_PYTHON: '/usr/bin/python3', UV_OFFLINE: '1', UV_NO_PROGRESS: '1' });
    expect(uvEnvironment({ network: true })).not.toHaveProperty('UV_OFFLINE');
    expect(uvEnvironment({ network: true })).not.toHaveProperty('UV_PYTHON');
    // No name of it looks like a credential to the sandbox's environment rules.
    expect(sandboxEnv(offline)).toMatchObject(offline);
  });

  it("saysUvNotFound: dash's and bash's messages for uv and uvx, not other programs", () => {
    expect(saysUvNotFound('/bin/sh: 1: uv: not found\n')).toBe(true);
    expect(saysUvNotFound('bash: line 1: uvx: command not found\n')).toBe(true);
    expect(saysUvNotFound('sh: 1: uvicorn: not found\n')).toBe(false);
    expect(saysUvNotFound('error: file not found\n')).toBe(false);
  });
});
