/**
 * A project on disk for the sandbox tests, and ways to see what the sandbox left running. The
 * project belongs to nobody (65534) when the tests run as root, so the sandbox runs as nobody, as
 * it would for a project of a non-root user; run as another user, it runs as that user.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The uid the sandboxed commands run as in these tests. */
export const SANDBOX_UID = process.getuid?.() === 0 ? 65534 : (process.getuid?.() ?? -1);

export interface SandboxProject {
  /** Temp folder holding everything (mode 0755, so the sandbox's user can reach the project). */
  dir: string;
  /** project/: the project root. */
  project: string;
  /** project/out: the write root. */
  out: string;
  /** A world-writable folder outside every root: the sandbox, not permissions, keeps writes out of it. */
  outside: string;
  cleanup(): Promise<void>;
}

/** Planted in the project's `.env`: a command must never print it. */
export const PLANTED_KEY = 'sk-planted-sandbox-test-0123456789';

/** Creates the project: README.md, .env, .ssh/id_rsa, .git/config, out/notes.md, out/.env, and `outside/`. */
export async function makeSandboxProject(): Promise<SandboxProject> {
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'loopwright-sbx-')));
  await fs.chmod(dir, 0o755);
  const project = path.join(dir, 'project');
  const out = path.join(project, 'out');
  const outside = path.join(dir, 'outside');
  const files: Record<string, string> = {
    'README.md': 'hello from the project\n',
    '.env': `OPENAI_API_KEY=${PLANTED_KEY}\n`,
    '.ssh/id_rsa': `-----BEGIN OPENSSH PRIVATE KEY-----\n${PLANTED_KEY}\n`,
    '.git/config': '[core]\n',
    'docs/guide.md': '# Guide\n',
    'out/notes.md': 'notes\n',
    'out/.env': `OUT_TOKEN=${PLANTED_KEY}\n`,
  };
  for (const [rel, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(project, rel)), { recursive: true });
    await fs.writeFile(path.join(project, rel), content);
  }
  await fs.mkdir(outside);
  await fs.chmod(outside, 0o777);
  await fs.writeFile(path.join(outside, 'target.txt'), 'untouched\n');
  await fs.chmod(path.join(outside, 'target.txt'), 0o666);
  if (process.getuid?.() === 0) await chownTree(project, SANDBOX_UID, SANDBOX_UID);
  return { dir, project, out, outside, cleanup: () => fs.rm(dir, { recursive: true, force: true }) };
}

async function chownTree(root: string, uid: number, gid: number): Promise<void> {
  await fs.lchown(root, uid, gid);
  for (const entry of await fs.readdir(root, { withFileTypes: true })) {
    const full = path.join(root, entry.name);
    if (entry.isDirectory()) await chownTree(full, uid, gid);
    else await fs.lchown(full, uid, gid);
  }
}

/** Processes whose command line contains `marker`. */
export async function processesWithMarker(marker: string): Promise<number[]> {
  return scanProc(async (pid) => (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8')).includes(marker));
}

/**
 * Processes in the pid namespace `link` (`pid:[4026532327]`, as `readlink /proc/self/ns/pid` prints
 * it inside) that have not ended. Left out: bwrap's own init once it has exited, which bwrap leaves
 * to the host's init to reap (a zombie, for a moment or, under an init that never reaps, for good);
 * any other zombie is reported, named.
 */
export async function liveProcessesInNamespace(link: string): Promise<string[]> {
  const pids = await scanProc(async (pid) => (await fs.readlink(`/proc/${pid}/ns/pid`)) === link);
  const live: string[] = [];
  for (const pid of pids) {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    if (stat === '') continue;
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'Z' && name === 'bwrap') continue;
    live.push(`${pid} ${name} ${state}`);
  }
  return live;
}

async function scanProc(test: (pid: string) => Promise<boolean>): Promise<number[]> {
  const found: number[] = [];
  for (const name of await fs.readdir('/proc')) {
    if (!/^[0-9]+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (await test(name)) found.push(Number(name));
    } catch {
      // ended meanwhile, or not ours to read
    }
  }
  return found;
}

/** The pid namespace a command printed on its first line (`readlink /proc/self/ns/pid`). */
export function namespaceOf(stdout: string): string {
  const first = stdout.split('\n')[0];
  if (!/^pid:\[\d+\]$/.test(first)) throw new Error(`No pid namespace on the first line of: ${stdout.slice(0, 200)}`);
  return first;
}
