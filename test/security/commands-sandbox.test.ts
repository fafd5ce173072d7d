/**
 * The command sandbox against hostile commands, on the real bwrap (`npm run setup` installs it):
 * what a command may not see, write, reach or leave behind. See activities/commands/sandbox-runner.ts.
 */
import { promises as fs } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { runSandboxed } from '../../activities/commands/sandbox-runner';
import { SecretEnvironmentError } from '../../activities/commands/sandbox-errors';
import type { SandboxRequest } from '../../activities/commands/sandbox-request';
import { SecurityViolationError } from '../../bundle/errors';
import { makeSandboxProject, namespaceOf, PLANTED_KEY, liveProcessesInNamespace, processesWithMarker, SANDBOX_UID, type SandboxProject } from '../unit/commands-sandbox/sandbox-fixture';

jest.setTimeout(20_000);

let fx: SandboxProject;
beforeAll(async () => {
  fx = await makeSandboxProject();
});
afterAll(async () => {
  await fx.cleanup();
});

const sh = (line: string, more: Partial<SandboxRequest> = {}) => runSandboxed({ command: { shell: line }, projectRoot: fx.project, writeRoots: [fx.out], ...more });

describe('command sandbox: file system', () => {
  it('sandbox: writes inside the write root land on the host; writes to the project, /usr or /etc fail', async () => {
    const result = await sh(
      'echo made > out/made.txt && echo ok1; echo x > README.md || echo refused1; echo x > new.txt || echo refused2; echo x > /usr/x || echo refused3; echo x > /etc/x || echo refused4; echo x > /x || echo refused5; echo x > /dev/x || echo refused6',
    );
    expect(result.stdout.split('\n')).toEqual(['ok1', 'refused1', 'refused2', 'refused3', 'refused4', 'refused5', 'refused6', '']);
    expect(result.stderr).toMatch(/Read-only file system/);
    expect(await fs.readFile(path.join(fx.out, 'made.txt'), 'utf8')).toBe('made\n');
    expect(await fs.readFile(path.join(fx.project, 'README.md'), 'utf8')).toBe('hello from the project\n');
    await expect(fs.access(path.join(fx.project, 'new.txt'))).rejects.toThrow(/ENOENT/);
  });

  it('sandbox: the host folder beside the project does not exist inside, and /tmp is private', async () => {
    const marker = `loopwright-sbx-host-tmp-${process.pid}-${Date.now()}`;
    const result = await sh(`ls ${fx.outside} || echo absent; echo x > ${fx.outside}/x.txt || echo refused; echo private > /tmp/${marker} && cat /tmp/${marker}`);
    expect(result.stdout).toBe('absent\nrefused\nprivate\n');
    expect(await fs.readdir(fx.outside)).toEqual(['target.txt']);
    await expect(fs.access(path.join('/tmp', marker))).rejects.toThrow(/ENOENT/);
  });

  it('sandbox: a symlink in the project pointing outside cannot be used to write there', async () => {
    await fs.symlink(fx.outside, path.join(fx.out, 'escape'));
    await fs.symlink(path.join(fx.outside, 'target.txt'), path.join(fx.out, 'target-link'));
    if (process.getuid?.() === 0) await fs.lchown(path.join(fx.out, 'escape'), SANDBOX_UID, SANDBOX_UID);
    try {
      const result = await sh('echo pwned > out/escape/pwned.txt || echo refused1; echo pwned > out/target-link || echo refused2; cat out/target-link || echo refused3');
      expect(result.stdout).toBe('refused1\nrefused2\nrefused3\n');
      expect(await fs.readdir(fx.outside)).toEqual(['target.txt']);
      expect(await fs.readFile(path.join(fx.outside, 'target.txt'), 'utf8')).toBe('untouched\n');
      // Nor can the link be the working folder: the file sandbox refuses it before anything runs.
      await expect(sh('pwd', { cwd: 'out/escape' })).rejects.toBeInstanceOf(SecurityViolationError);
    } finally {
      await fs.rm(path.join(fx.out, 'escape'));
      await fs.rm(path.join(fx.out, 'target-link'));
    }
  });

  it("sandbox: the user's home folder and /root/.ssh are not there", async () => {
    const marker = path.join(os.homedir(), `.loopwright-sbx-home-${process.pid}`);
    await fs.writeFile(marker, PLANTED_KEY);
    try {
      const result = await sh(`cat ${marker} || echo no-marker; ls /root/.ssh || echo no-ssh; ls /home || echo no-home; ls -A $HOME; echo "home=$HOME"`);
      expect(result.stdout).toBe('no-marker\nno-ssh\nno-home\nhome=/tmp/home\n');
      expect(result.stdout + result.stderr).not.toContain(PLANTED_KEY);
    } finally {
      await fs.rm(marker, { force: true });
    }
  });

  it('sandbox: .env, .ssh/ and .git/ of the project are hidden, and out/.env cannot be overwritten', async () => {
    const result = await sh(
      'cat .env || echo no-env; ls -A .ssh; cat .ssh/id_rsa || echo no-key; ls -A .git; cat out/.env || echo no-out-env; echo x > out/.env || echo refused; grep -r sk- . || echo none',
    );
    expect(result.stdout).toBe('no-env\nno-key\nno-out-env\nrefused\nnone\n');
    expect(result.stdout + result.stderr).not.toContain(PLANTED_KEY);
    expect(result.hiddenPaths.sort()).toEqual([path.join(fx.out, '.env'), path.join(fx.project, '.env'), path.join(fx.project, '.git'), path.join(fx.project, '.ssh')].sort());
    expect(await fs.readFile(path.join(fx.out, '.env'), 'utf8')).toBe(`OUT_TOKEN=${PLANTED_KEY}\n`);
  });

  it('sandbox: the user who allows secret files gets them', async () => {
    const result = await sh('cat .env', { allowSecretFiles: true });
    expect(result.stdout).toBe(`OPENAI_API_KEY=${PLANTED_KEY}\n`);
    expect(result.hiddenPaths).toEqual([]);
  });

  it('sandbox: protected paths inside the write root stay read-only, and secrets in them hidden', async () => {
    const agents = path.join(fx.out, 'agents');
    await fs.mkdir(agents);
    await fs.writeFile(path.join(agents, 'pm.md'), '# PM\n');
    await fs.writeFile(path.join(agents, '.env'), `KEY=${PLANTED_KEY}\n`);
    if (process.getuid?.() === 0) for (const p of [agents, path.join(agents, 'pm.md'), path.join(agents, '.env')]) await fs.chown(p, SANDBOX_UID, SANDBOX_UID);
    try {
      const result = await sh(
        'echo hacked > out/agents/pm.md || echo refused1; echo new > out/agents/new.md || echo refused2; cat out/agents/.env || echo hidden; echo fine > out/other.md && echo ok',
        {
          readOnlyPaths: [agents],
        },
      );
      expect(result.stdout).toBe('refused1\nrefused2\nhidden\nok\n');
      expect(await fs.readFile(path.join(agents, 'pm.md'), 'utf8')).toBe('# PM\n');
    } finally {
      await fs.rm(agents, { recursive: true });
    }
  });

  it('sandbox: /etc holds only the listed entries (no shadow, no ssh keys)', async () => {
    const result = await sh('ls /etc; cat /etc/shadow || echo no-shadow; ls /etc/ssh || echo no-ssh');
    expect(result.stdout).toContain('passwd\n');
    expect(result.stdout).toContain('ld.so.cache\n');
    expect(result.stdout).not.toMatch(/^(shadow|gshadow|sudoers|npmrc|pip\.conf)$/m);
    expect(result.stdout).toMatch(/no-shadow\nno-ssh\n$/);
  });
});

describe('command sandbox: privileges, network, environment', () => {
  it('sandbox: the command runs as a non-root user without capabilities, and sees only its own processes', async () => {
    const result = await sh('id -u; grep -E "^Cap(Prm|Eff|Bnd):" /proc/self/status; ls /proc | grep -c "^[0-9]"; ls -l /proc/self/fd');
    const [uid, prm, eff, bnd, processes, ...lines] = result.stdout.trim().split('\n');
    expect(Number(uid)).toBe(SANDBOX_UID);
    expect(Number(uid)).not.toBe(0);
    expect([prm, eff, bnd]).toEqual(['CapPrm:\t0000000000000000', 'CapEff:\t0000000000000000', 'CapBnd:\t0000000000000000']);
    expect(Number(processes)).toBeLessThan(10);
    // stdin, stdout, stderr and the folder `ls` reads; a descriptor the worker inherited open is /dev/null here.
    const fds = new Map<string, string>();
    for (const line of lines) {
      const link = / (\d+) -> (.*)$/.exec(line);
      if (link) fds.set(link[1], link[2]);
    }
    expect(fds.get('0')).toBe('/dev/null');
    expect(fds.get('1')).toMatch(/^(socket|pipe):/);
    expect(fds.get('2')).toMatch(/^(socket|pipe):/);
    const others = [...fds].filter(([fd, target]) => Number(fd) > 2 && !/^\/proc\/\d+\/fd$/.test(target));
    expect(others.filter(([, target]) => target !== '/dev/null')).toEqual([]);
    expect(result.uid).toBe(SANDBOX_UID);
  });

  it('sandbox: no network by default (a listener on the host is unreachable); network: true reaches it', async () => {
    const server = net.createServer((socket) => socket.end('hello from the host\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const probe = `
      const s = require('net').connect(${port}, '127.0.0.1');
      s.on('data', (d) => { process.stdout.write('got ' + d); s.destroy(); });
      s.on('error', (e) => { console.log(e.code); });`;
    try {
      const isolated = await runSandboxed({ command: ['node', '-e', probe], projectRoot: fx.project });
      expect(isolated.stdout).toBe('ECONNREFUSED\n');
      const shared = await runSandboxed({ command: ['node', '-e', probe], projectRoot: fx.project, network: true });
      expect(shared.stdout).toBe('got hello from the host\n');
    } finally {
      server.close();
    }
  });

  it('sandbox: no route out of the sandbox without network (only its own loopback)', async () => {
    const result = await sh('cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "; cat /proc/net/route | tail -n +2 | wc -l');
    expect(result.stdout).toBe('lo\n0\n');
  });

  it("sandbox: the worker's OPENAI_API_KEY never reaches the command; passing it is refused", async () => {
    const before = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = PLANTED_KEY;
    try {
      const result = await sh('env');
      expect(result.stdout).not.toContain(PLANTED_KEY);
      expect(result.stdout).not.toMatch(/OPENAI|TEMPORAL|LOOPWRIGHT/);
      expect(
        result.stdout
          .split('\n')
          .filter(Boolean)
          .map((line) => line.split('=')[0])
          .sort(),
      ).toEqual(['HOME', 'LANG', 'PATH', 'PWD', 'TMPDIR']);
      const refused = sh('env', { env: { OPENAI_API_KEY: PLANTED_KEY } });
      await expect(refused).rejects.toBeInstanceOf(SecretEnvironmentError);
      await expect(refused).rejects.toMatchObject({ variable: 'OPENAI_API_KEY', field: 'env.OPENAI_API_KEY' });
    } finally {
      if (before === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = before;
    }
  });
});

describe('command sandbox: limits', () => {
  it('sandbox: RLIMIT_NPROC holds inside: no more than maxProcesses processes can be started', async () => {
    // dash gives up at the first failed fork; the count is read by a builtin, which needs no fork.
    const result = await sh('sh -c \'i=0; while :; do sleep 30 & i=$((i+1)); echo $i > /tmp/n; done\' 2>/dev/null; read n < /tmp/n; echo "$n"', { maxProcesses: 64, timeoutMs: 10_000 });
    const started = Number(result.stdout.trim());
    expect(started).toBeGreaterThan(50);
    expect(started).toBeLessThan(64);
    expect(result.timedOut).toBe(false);
  });

  it('sandbox: a fork bomb ends within the timeout and leaves no process', async () => {
    const marker = `loopwright-bomb-${process.pid}`;
    const started = performance.now();
    const result = await sh(`readlink /proc/self/ns/pid; bomb() { bomb | bomb & }; bomb 2>/dev/null; sleep 30; : ${marker}`, { timeoutMs: 2_000, killGraceMs: 500 });
    const took = performance.now() - started;
    expect(result.timedOut).toBe(true);
    expect(result.killed).toBe(true);
    // The shell would sleep 30 s: ending well before that shows the timeout killed it. The bound is
    // loose on purpose (the bomb itself loads the machine; 5 s was once missed by 0.3 s).
    expect(took).toBeLessThan(15_000);
    expect(await liveProcessesInNamespace(namespaceOf(result.stdout))).toEqual([]);
    expect(await processesWithMarker(marker)).toEqual([]);
  });

  it('sandbox: memoryBytes limits the address space: a 512 MiB allocation fails under 256 MiB', async () => {
    const result = await runSandboxed({ command: ['python3', '-c', 'bytearray(512 * 1024 * 1024)'], projectRoot: fx.project, memoryBytes: 256 * 1024 * 1024 });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('MemoryError');
    const fits = await runSandboxed({ command: ['python3', '-c', 'bytearray(64 * 1024 * 1024); print("ok")'], projectRoot: fx.project, memoryBytes: 256 * 1024 * 1024 });
    expect(fits.stdout).toBe('ok\n');
  });

  it('sandbox: endless output is cut at the cap and the command killed, leaving nothing', async () => {
    const result = await sh('readlink /proc/self/ns/pid; exec yes sandbox', { maxOutputBytes: 64 * 1024 });
    expect(result.outputLimited).toBe(true);
    expect(result.killed).toBe(true);
    expect(result.stdoutTruncated).toBe(true);
    expect(result.stderrTruncated).toBe(false);
    expect(Buffer.byteLength(result.stdout)).toBe(64 * 1024);
    expect(result.signal).toBe('SIGTERM');
    expect(await liveProcessesInNamespace(namespaceOf(result.stdout))).toEqual([]);
  });
});
