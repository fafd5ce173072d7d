/** The sandbox's pure parts: the bwrap command line, the output cap, the variable rules, and what is hidden. */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { BoundedOutput } from '../../../activities/commands/bounded-output';
import { bwrapArgs, limitsWrapper, type SystemLayout } from '../../../activities/commands/bwrap-args';
import { sandboxEnv, secretNameReason } from '../../../activities/commands/sandbox-env';
import { resolveSandboxPaths, type SandboxPaths } from '../../../activities/commands/sandbox-paths';
import { RACY_MS } from '../../../activities/commands/folder-listings';
import { makeSandboxProject, type SandboxProject } from './sandbox-fixture';

const LAYOUT: SystemLayout = { links: [{ path: '/bin', target: 'usr/bin' }], mounts: ['/usr', '/etc/passwd'] };
const PATHS: SandboxPaths = {
  projectRoot: '/p',
  writeRoots: ['/p/out'],
  cwd: '/p',
  readOnly: ['/p/out/agents'],
  hidden: [
    { path: '/p/out/agents/.env', kind: 'file' },
    { path: '/p/.ssh', kind: 'folder' },
  ],
};

describe('bwrapArgs', () => {
  it('bwrapArgs: no network unless asked; every namespace new, no capabilities, no user namespaces inside', () => {
    const args = bwrapArgs({ paths: PATHS, network: false, tmpBytes: 1000, argv: ['true'] }, LAYOUT);
    expect(args.slice(0, 9)).toEqual(['--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--hostname', 'sandbox']);
    expect(args).not.toContain('--share-net');
    expect(bwrapArgs({ paths: PATHS, network: true, tmpBytes: 1000, argv: ['true'] }, LAYOUT)).toContain('--share-net');
  });

  it('bwrapArgs: the project read-only, then the write roots, then protected paths, then secrets, then the root read-only', () => {
    const line = bwrapArgs({ paths: PATHS, network: false, tmpBytes: 1000, argv: ['prlimit', '--', 'true'] }, LAYOUT).join(' ');
    const order = [
      '--ro-bind /p /p',
      '--bind /p/out /p/out',
      '--ro-bind /p/out/agents /p/out/agents',
      '--ro-bind /dev/null /p/out/agents/.env',
      '--perms 0555 --tmpfs /p/.ssh --remount-ro /p/.ssh',
      '--remount-ro / --chdir /p -- prlimit -- true',
    ].map((part) => line.indexOf(part));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(line).toContain('--size 1000 --tmpfs /tmp --perms 0700 --dir /tmp/home');
    expect(line).toContain('--size 1000 --tmpfs /dev/shm --remount-ro /dev');
    expect(line).toContain('--symlink usr/bin /bin');
  });

  it('limitsWrapper: address space, processes and no core files', () => {
    expect(limitsWrapper('/usr/bin/prlimit', { memoryBytes: 1024, maxProcesses: 8 })).toEqual(['/usr/bin/prlimit', '--as=1024', '--nproc=8', '--core=0', '--']);
  });
});

describe('BoundedOutput', () => {
  it('BoundedOutput: keeps the first bytes, counts the rest, and says it was cut', () => {
    const out = new BoundedOutput(5);
    expect(out.push(Buffer.from('abc'))).toBe(true);
    expect(out.push(Buffer.from('de'))).toBe(true);
    expect(out.truncated).toBe(false);
    expect(out.push(Buffer.from('fgh'))).toBe(false);
    expect([out.text(), out.total, out.truncated]).toEqual(['abcde', 8, true]);
  });

  it('BoundedOutput: a character cut at the limit becomes U+FFFD', () => {
    const out = new BoundedOutput(2);
    out.push(Buffer.from('aé'));
    expect(out.text()).toBe('a\ufffd');
  });
});

describe('sandboxEnv', () => {
  it('sandboxEnv: the base is PATH, HOME, LANG and TMPDIR only', () => {
    expect(Object.keys(sandboxEnv()).sort()).toEqual(['HOME', 'LANG', 'PATH', 'TMPDIR']);
  });

  it('secretNameReason: credentials by name, prefixes of cloud and model clients; ordinary names pass', () => {
    for (const name of [
      'OPENAI_API_KEY',
      'openai_base_url',
      'ANTHROPIC_API_KEY',
      'AWS_PROFILE',
      'NPM_TOKEN',
      'PGPASSWORD',
      'client_secret',
      'AUTH',
      'HTTP_AUTHORIZATION',
      'DATABASE_URL',
      'GOOGLE_APPLICATION_CREDENTIALS',
    ]) {
      expect([name, secretNameReason(name)]).toEqual([name, expect.any(String)]);
    }
    for (const name of ['GIT_AUTHOR_NAME', 'NODE_ENV', 'CI', 'PYTHONPATH', 'RUST_LOG', 'LANG', 'SSL_CERT_FILE']) {
      expect([name, secretNameReason(name)]).toEqual([name, undefined]);
    }
  });
});

describe('resolveSandboxPaths', () => {
  let fx: SandboxProject;
  beforeAll(async () => {
    fx = await makeSandboxProject();
    await fs.mkdir(path.join(fx.out, 'agents'));
    await fs.writeFile(path.join(fx.out, 'agents', 'pm.md'), '# PM\n');
    await fs.mkdir(path.join(fx.project, '.aws'));
    await fs.writeFile(path.join(fx.project, '.aws', 'credentials'), '[default]\n');
    await fs.writeFile(path.join(fx.project, '.aws', 'config'), '[default]\n');
    await fs.symlink('.env', path.join(fx.project, 'env-link'));
  });
  afterAll(async () => {
    await fx.cleanup();
  });

  it('resolveSandboxPaths: secret files and all-secret folders are hidden; links are left to the view they lead into', async () => {
    const paths = await resolveSandboxPaths({ projectRoot: fx.project, writeRoots: [fx.out], readOnlyPaths: [path.join(fx.out, 'AGENTS')] });
    const hidden = paths.hidden.map((h) => `${h.kind} ${path.relative(fx.project, h.path)}`).sort();
    expect(hidden).toEqual(['file .env', 'file out/.env', 'folder .aws', 'folder .git', 'folder .ssh']);
    // Protected paths match without regard to case, as the file sandbox's.
    expect(paths.readOnly).toEqual([path.join(fx.out, 'agents')]);
    expect(paths).toMatchObject({ projectRoot: fx.project, writeRoots: [fx.out], cwd: fx.project });
  });

  it("resolveSandboxPaths: a project's rules apply, and a let-through file stays visible in a folder otherwise hidden", async () => {
    const secretFiles = [
      { pattern: '!**/.aws/config', source: 'test:1' },
      { pattern: '/docs/', source: 'test:2' },
    ];
    const paths = await resolveSandboxPaths({ projectRoot: fx.project, writeRoots: [fx.out], secretFiles });
    const hidden = paths.hidden.map((h) => path.relative(fx.project, h.path)).sort();
    expect(hidden).toEqual(['.aws/credentials', '.env', '.git', '.ssh', 'docs', 'out/.env']);
  });

  it('resolveSandboxPaths: a secret created after a listing was kept is hidden the next time', async () => {
    // Listings of folders changed in the last RACY_MS are not kept: this listing is made as if the
    // project had settled (the clock read RACY_MS later), so its folders are kept.
    const now = Date.now();
    const clock = jest.spyOn(Date, 'now').mockReturnValue(now + RACY_MS + 100);
    const before = await resolveSandboxPaths({ projectRoot: fx.project, writeRoots: [fx.out] }).finally(() => clock.mockRestore());
    expect(before.hidden.map((h) => h.path)).not.toContain(path.join(fx.project, 'docs', '.env'));
    // The changes below land in a later clock tick of the file system than the listing (its
    // timestamps are coarse, a few milliseconds): they are what the kept listing must not hide.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await fs.writeFile(path.join(fx.project, 'docs', '.env'), 'KEY=x\n');
    // A folder replaced by another one at the same path, holding a key.
    await fs.rename(path.join(fx.out, 'agents'), path.join(fx.dir, 'agents-away'));
    await fs.mkdir(path.join(fx.out, 'agents'));
    await fs.writeFile(path.join(fx.out, 'agents', 'id_ed25519'), 'key\n');
    const after = await resolveSandboxPaths({ projectRoot: fx.project, writeRoots: [fx.out] });
    expect(after.hidden.map((h) => h.path)).toEqual(expect.arrayContaining([path.join(fx.project, 'docs', '.env'), path.join(fx.out, 'agents', 'id_ed25519')]));
    expect(after.hidden).toHaveLength(before.hidden.length + 2);
  });

  it('resolveSandboxPaths: allowSecretFiles hides nothing', async () => {
    expect((await resolveSandboxPaths({ projectRoot: fx.project, allowSecretFiles: true })).hidden).toEqual([]);
  });
});
