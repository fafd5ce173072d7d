/**
 * The rest of the hostile-command suite, on the real bwrap: a symlink race (the write root and a
 * folder inside it swapped for links to a folder outside while commands write through them) never
 * lets a write land outside. The other hostile cases (writes outside the roots, credentials and the
 * home folder, network, a fork bomb, endless output, SIGTERM ignored, a killed worker, an interrupt)
 * are in commands-sandbox.test.ts, unit/commands-sandbox/sandbox-runner.test.ts,
 * crash/command-crash.test.ts and workflow/command-interrupt.test.ts.
 */
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { runSandboxed } from '../../activities/commands/sandbox-runner';
import { makeSandboxProject, SANDBOX_UID, type SandboxProject } from '../unit/commands-sandbox/sandbox-fixture';

jest.setTimeout(60_000);

let fx: SandboxProject;
beforeAll(async () => {
  fx = await makeSandboxProject();
});
afterAll(async () => {
  await fx.cleanup();
});

const own = async (p: string) => {
  if (process.getuid?.() === 0) await fs.lchown(p, SANDBOX_UID, SANDBOX_UID);
};

/**
 * Swaps `link` between a real folder and a symlink to `target`, in a shell loop of its own (so it
 * truly runs beside the worker's checks and bwrap's mounts), until stopped.
 */
function flipper(link: string, target: string): { stop(): Promise<number> } {
  const owner = process.getuid?.() === 0 ? `chown -h ${SANDBOX_UID}:${SANDBOX_UID} "$L" 2>/dev/null;` : '';
  const loop = `L='${link}'; T='${target}'; n=0; trap 'echo $n; exit 0' TERM; while :; do mv "$L" "$L.real" 2>/dev/null; ln -s "$T" "$L" 2>/dev/null; ${owner} rm -f "$L"; mv "$L.real" "$L" 2>/dev/null; n=$((n+1)); sleep 0.01; done`;
  const child = spawn('bash', ['-c', loop], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const ended = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return {
    async stop() {
      child.kill('SIGTERM');
      await ended;
      // Leave the folder in place whichever state the loop stopped in.
      await fs.rm(link, { force: true }).catch(() => undefined);
      await fs.rename(`${link}.real`, link).catch(() => undefined);
      return Number(out.trim() || '0');
    },
  };
}

async function outsideUntouched(): Promise<void> {
  expect(await fs.readdir(fx.outside)).toEqual(['target.txt']);
  expect(await fs.readFile(path.join(fx.outside, 'target.txt'), 'utf8')).toBe('untouched\n');
}

test('symlink race inside the write root: a folder swapped for a link outside while the command writes through it', async () => {
  const inner = path.join(fx.out, 'flip');
  await fs.mkdir(inner);
  await own(inner);
  const flip = flipper(inner, fx.outside);
  try {
    // Each command writes through the folder 200 times while the host swaps it.
    for (let round = 0; round < 5; round++) {
      const result = await runSandboxed({
        command: { shell: 'for i in $(seq 200); do echo pwned > out/flip/pwned-$i.txt 2>/dev/null; done; echo done' },
        projectRoot: fx.project,
        writeRoots: [fx.out],
      });
      expect(result.stdout).toBe('done\n');
    }
  } finally {
    expect(await flip.stop()).toBeGreaterThan(0);
  }
  await outsideUntouched();
});

test('symlink race on the write root itself: swapped for a link outside between commands and while they start', async () => {
  const root = path.join(fx.project, 'racy');
  await fs.mkdir(root);
  await own(root);
  const flip = flipper(root, fx.outside);
  const outcomes = { ran: 0, refused: 0 };
  try {
    for (let round = 0; round < 40; round++) {
      try {
        await runSandboxed({ command: { shell: 'echo pwned > racy/pwned.txt 2>/dev/null; echo pwned > /tmp/x' }, projectRoot: fx.project, writeRoots: [root] });
        outcomes.ran += 1;
      } catch (error) {
        // A root that is a link when checked is refused with a typed error naming it.
        if (!/SecurityViolationError|SandboxSetupError|SandboxRequestError/.test((error as Error).name)) throw error;
        outcomes.refused += 1;
      }
    }
  } finally {
    await flip.stop();
  }
  console.log(outcomes);
  expect(outcomes.ran + outcomes.refused).toBe(40);
  await outsideUntouched();
});
