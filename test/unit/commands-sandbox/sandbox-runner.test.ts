/**
 * runSandboxed on the real bwrap (`npm run setup` installs it): how a command runs and how it is
 * ended, what is refused before anything runs, and the fallback where no sandbox can be made.
 * The hostile cases (escapes, secrets, network, fork bomb) are in test/security/commands-sandbox.test.ts.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runSandboxed } from '../../../activities/commands/sandbox-runner';
import { SandboxRequestError, SandboxSetupError, SandboxUnavailableError } from '../../../activities/commands/sandbox-errors';
import type { SandboxRequest } from '../../../activities/commands/sandbox-request';
import { SecurityViolationError } from '../../../bundle/errors';
import { SecretFileError } from '../../../bundle/sandbox/secret-files';
import { liveProcessesInNamespace, makeSandboxProject, namespaceOf, PLANTED_KEY, processesWithMarker, SANDBOX_UID, type SandboxProject } from './sandbox-fixture';

jest.setTimeout(20_000);
const IS_ROOT = process.getuid?.() === 0;

let fx: SandboxProject;
beforeAll(async () => {
  fx = await makeSandboxProject();
});
afterAll(async () => {
  await fx.cleanup();
});

const run = (command: SandboxRequest['command'], more: Partial<SandboxRequest> = {}) => runSandboxed({ command, projectRoot: fx.project, writeRoots: [fx.out], ...more });

describe('runSandboxed: running', () => {
  it('runSandboxed: an argv runs as given, no shell, in the project root', async () => {
    const result = await run(['printf', '%s|', 'a b', '$HOME', "c'd;ls", '']);
    expect(result).toMatchObject({ sandboxed: true, exitCode: 0, signal: null, stdout: "a b|$HOME|c'd;ls||", stderr: '', timedOut: false, killed: false, outputLimited: false, aborted: false });
    expect(result.uid).toBe(SANDBOX_UID);
    expect((await run(['pwd'])).stdout).toBe(`${fx.project}\n`);
  });

  it('runSandboxed: a shell line runs under /bin/sh -c, with its exit code and both streams', async () => {
    const result = await run({ shell: 'echo out; echo err >&2; exit 3' });
    expect(result).toMatchObject({ exitCode: 3, signal: null, stdout: 'out\n', stderr: 'err\n', stdoutTruncated: false, stderrTruncated: false });
    expect(result.durationMs).toBeGreaterThan(0);
  });

  it('runSandboxed: a missing program is the command failing, not an error', async () => {
    const result = await run(['no-such-program-here']);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toMatch(/no-such-program-here/);
  });

  it('runSandboxed: the working folder may be relative to the project or in a write root', async () => {
    expect((await run(['pwd'], { cwd: 'docs' })).stdout).toBe(`${path.join(fx.project, 'docs')}\n`);
    expect((await run({ shell: 'pwd; echo here > here.txt' }, { cwd: fx.out })).stdout).toBe(`${fx.out}\n`);
    expect(await fs.readFile(path.join(fx.out, 'here.txt'), 'utf8')).toBe('here\n');
  });

  it('runSandboxed: variables passed explicitly reach the command over the base environment', async () => {
    const result = await run({ shell: 'echo "$GREETING $GIT_AUTHOR_NAME $LANG $TMPDIR $HOME"' }, { env: { GREETING: 'hi', GIT_AUTHOR_NAME: 'Ada', LANG: 'en_GB.UTF-8' } });
    expect(result.stdout).toBe('hi Ada en_GB.UTF-8 /tmp /tmp/home\n');
  });

  it('runSandboxed: stderr is capped on its own, saying which stream was cut', async () => {
    const result = await run({ shell: 'echo fine; head -c 100000 /dev/zero | tr "\\0" e >&2' }, { maxOutputBytes: 1000 });
    expect(result).toMatchObject({ stdout: 'fine\n', stdoutTruncated: false, stderrTruncated: true, outputLimited: true, killed: true });
    expect(result.stderr).toBe('e'.repeat(1000));
  });
});

describe('runSandboxed: ending a command', () => {
  it('runSandboxed: past its timeout a command gets SIGTERM and, honouring it, ends at once', async () => {
    const result = await run(['sleep', '30'], { timeoutMs: 300, killGraceMs: 5_000 });
    expect(result).toMatchObject({ timedOut: true, killed: true, aborted: false, exitCode: null, signal: 'SIGTERM' });
    expect(result.durationMs).toBeGreaterThanOrEqual(300);
    expect(result.durationMs).toBeLessThan(2_000);
  });

  it('runSandboxed: a command that ignores SIGTERM is killed after the grace, with everything it started', async () => {
    const result = await run({ shell: 'readlink /proc/self/ns/pid; trap "" TERM; sleep 30 & sleep 30' }, { timeoutMs: 300, killGraceMs: 700 });
    expect(result).toMatchObject({ timedOut: true, killed: true, signal: 'SIGKILL' });
    expect(result.durationMs).toBeGreaterThanOrEqual(950);
    expect(result.durationMs).toBeLessThan(3_000);
    expect(await liveProcessesInNamespace(namespaceOf(result.stdout))).toEqual([]);
  });

  it('runSandboxed: aborting the signal mid-command ends it at once and nothing remains', async () => {
    const marker = `loopwright-abort-${process.pid}`;
    const controller = new AbortController();
    const pending = run({ shell: `readlink /proc/self/ns/pid; sleep 30 & sleep 31; : ${marker}` }, { signal: controller.signal, timeoutMs: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await processesWithMarker(marker)).length).toBeGreaterThan(0);
    const abortedAt = performance.now();
    controller.abort(new Error('activity cancelled'));
    const result = await pending;
    expect(performance.now() - abortedAt).toBeLessThan(1_000);
    expect(result).toMatchObject({ aborted: true, killed: true, timedOut: false, signal: 'SIGTERM' });
    expect(await liveProcessesInNamespace(namespaceOf(result.stdout))).toEqual([]);
    expect(await processesWithMarker(marker)).toEqual([]);
  });

  it('runSandboxed: a signal aborted before the start runs nothing and throws its reason', async () => {
    const controller = new AbortController();
    controller.abort(new Error('cancelled before start'));
    await expect(run({ shell: 'echo ran > out/ran.txt' }, { signal: controller.signal })).rejects.toThrow('cancelled before start');
    await expect(fs.access(path.join(fx.out, 'ran.txt'))).rejects.toThrow(/ENOENT/);
  });

  it('runSandboxed: processes the command leaves in the background, even in a new session, end with it', async () => {
    const marker = `loopwright-background-${process.pid}`;
    // In a session of its own and re-parented to the sandbox's init once its parent exits.
    const result = await run({ shell: `readlink /proc/self/ns/pid; setsid sh -c 'sleep 30; : ${marker}' >/dev/null 2>&1 & echo started` });
    expect(result.stdout).toMatch(/started\n$/);
    expect(result.durationMs).toBeLessThan(2_000);
    expect(await liveProcessesInNamespace(namespaceOf(result.stdout))).toEqual([]);
    expect(await processesWithMarker(marker)).toEqual([]);
  });
});

describe('runSandboxed: refused before anything runs', () => {
  it('runSandboxed: bad roots, working folders and limits are refused naming the field', async () => {
    await expect(runSandboxed({ command: ['true'], projectRoot: 'relative/project' })).rejects.toMatchObject({ name: 'SandboxRequestError', field: 'projectRoot' });
    await expect(runSandboxed({ command: ['true'], projectRoot: '/' })).rejects.toMatchObject({ name: 'SandboxRequestError', field: 'projectRoot' });
    await expect(run(['true'], { writeRoots: [os.tmpdir()] })).rejects.toMatchObject({ name: 'SandboxRequestError', field: 'writeRoots[0]' });
    await expect(run(['true'], { writeRoots: ['/proc/self'] })).rejects.toMatchObject({ name: 'SandboxRequestError', field: 'writeRoots[0]' });
    await expect(run(['true'], { timeoutMs: -1 })).rejects.toMatchObject({ name: 'SandboxRequestError', field: 'timeoutMs' });
    await expect(run([])).rejects.toMatchObject({ name: 'SandboxRequestError', field: 'command' });
    await expect(run(['true'], { cwd: fx.outside })).rejects.toBeInstanceOf(SecurityViolationError);
    await expect(run(['true'], { cwd: '../outside' })).rejects.toBeInstanceOf(SecurityViolationError);
    await expect(run(['true'], { cwd: '.git' })).rejects.toBeInstanceOf(SecretFileError);
    await expect(run(['true'], { writeRoots: [path.join(fx.project, '.git')] })).rejects.toBeInstanceOf(SecretFileError);
    // Not secret by name, but everything in it would be: no write root either.
    await expect(run(['true'], { writeRoots: [path.join(fx.project, '.ssh')] })).rejects.toBeInstanceOf(SecretFileError);
  });

  it('runSandboxed: credential-like variables are refused, naming the variable', async () => {
    for (const name of ['OPENAI_API_KEY', 'ANTHROPIC_BASE_URL', 'AWS_REGION', 'GITHUB_TOKEN', 'DB_PASSWORD', 'MY_SECRET', 'SSH_AUTH_SOCK', 'TEMPORAL_ADDRESS', 'HTTP_AUTH', 'api_key']) {
      await expect(run(['true'], { env: { [name]: 'x' } })).rejects.toMatchObject({ name: 'SecretEnvironmentError', variable: name });
    }
    await expect(run(['true'], { env: { MIRROR: 'https://user:hunter2@example.com/' } })).rejects.toMatchObject({ name: 'SecretEnvironmentError', variable: 'MIRROR' });
    await expect(run(['true'], { env: { 'BAD-NAME': 'x' } })).rejects.toBeInstanceOf(SandboxRequestError);
  });
});

describe('runSandboxed: where no sandbox can be made', () => {
  let fakeBwrap: string;
  beforeAll(async () => {
    // What bwrap says where user namespaces are not allowed.
    fakeBwrap = path.join(fx.dir, 'bwrap');
    await fs.writeFile(fakeBwrap, '#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n', { mode: 0o755 });
  });

  it('runSandboxed: no bwrap: SandboxUnavailableError says why and how to install it', async () => {
    const refused = run(['true'], { bwrapPath: path.join(fx.dir, 'no-such-bwrap') });
    await expect(refused).rejects.toBeInstanceOf(SandboxUnavailableError);
    await expect(refused).rejects.toMatchObject({ reason: expect.stringContaining('no-such-bwrap'), fix: expect.stringContaining('apt-get install bubblewrap') });
  });

  it('runSandboxed: a bwrap that fails its self-check: SandboxUnavailableError with its message', async () => {
    await expect(run(['true'], { bwrapPath: fakeBwrap })).rejects.toMatchObject({
      name: 'SandboxUnavailableError',
      reason: expect.stringContaining('setting up uid map: Permission denied'),
      fix: expect.stringContaining('user namespaces'),
    });
  });

  it('runSandboxed: allowUnsandboxed runs it directly with the same environment and limits, and says so', async () => {
    process.env.OPENAI_API_KEY = PLANTED_KEY;
    try {
      const result = await run({ shell: 'env; id -u; ulimit -v; echo "$HOME"' }, { bwrapPath: fakeBwrap, allowUnsandboxed: true, memoryBytes: 512 * 1024 * 1024 });
      expect(result.sandboxed).toBe(false);
      expect(result.stdout).not.toContain(PLANTED_KEY);
      const lines = result.stdout.trim().split('\n');
      const names = lines.slice(0, -3).map((line) => line.split('=')[0]);
      expect(names.sort()).toEqual(['HOME', 'LANG', 'PATH', 'PWD', 'TMPDIR']);
      const [uid, addressSpaceKb, home] = lines.slice(-3);
      expect([uid, addressSpaceKb]).toEqual([String(SANDBOX_UID), String(512 * 1024)]);
      // HOME is a folder of its own, removed after the command.
      expect(home).toMatch(/loopwright-command-/);
      await expect(fs.access(home)).rejects.toThrow(/ENOENT/);
      expect(result.hiddenPaths).toEqual([]);
    } finally {
      delete process.env.OPENAI_API_KEY;
    }
  });

  it('runSandboxed: unsandboxed, a timeout kills the whole process group', async () => {
    const marker = `loopwright-unsandboxed-${process.pid}`;
    const result = await run({ shell: `trap "" TERM; sh -c 'sleep 30; : ${marker}' & sleep 31` }, { bwrapPath: fakeBwrap, allowUnsandboxed: true, timeoutMs: 300, killGraceMs: 300 });
    expect(result).toMatchObject({ sandboxed: false, timedOut: true, killed: true, signal: 'SIGKILL' });
    expect(await processesWithMarker(marker)).toEqual([]);
  });
});

(IS_ROOT ? describe : describe.skip)('runSandboxed: the user a root worker runs commands as', () => {
  it('runSandboxed: runAs picks the user; a project owned by root runs as nobody', async () => {
    expect((await run(['id', '-u'], { runAs: { uid: 12345, gid: 12345 } })).stdout).toBe('12345\n');
    const rootOwned = await fs.mkdtemp(path.join(fx.dir, 'root-project-'));
    await fs.chmod(rootOwned, 0o755);
    const result = await runSandboxed({ command: { shell: 'id -u; echo x > x.txt || echo refused' }, projectRoot: rootOwned });
    expect(result.stdout).toBe('65534\nrefused\n');
    expect(result.uid).toBe(65534);
  });

  it('runSandboxed: a root the command user cannot reach is a SandboxSetupError naming it', async () => {
    const closed = await fs.mkdtemp(path.join(fx.dir, 'closed-'));
    await fs.chmod(closed, 0o700);
    const project = path.join(closed, 'project');
    await fs.mkdir(project);
    await fs.chown(project, 65534, 65534);
    const refused = runSandboxed({ command: ['true'], projectRoot: project });
    await expect(refused).rejects.toBeInstanceOf(SandboxSetupError);
    await expect(refused).rejects.toThrow(/Permission denied.*uid 65534/s);
  });
});
