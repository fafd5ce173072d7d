/**
 * `save_output` against a folder swapped for a symlink while it writes. The path guard checks a
 * path; the write comes later. A folder under the output folder renamed away and replaced by a
 * symlink to an outside folder in between must not let the temporary file, the final file or a new
 * folder appear outside: every file and folder is created through checked folder descriptors.
 *
 * The race is real: a separate node process flips the folder in a tight loop while this process
 * writes. Around it, deterministic swaps at the exact steps (after the check, before the rename),
 * and what must keep working: symlinks that stay inside the roots, nested folders, overwrites,
 * retries.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { ToolResult } from '../../common/messages';
import * as pathGuard from '../../bundle/sandbox/path-guard';
import { saveOutputTool } from '../../activities/tools/save-output';
import { listFiles, makeFixture, type Fixture } from '../unit/tools/fixture';

jest.setTimeout(60_000);

const DENIED = 'Security violation: Access denied';

let fx: Fixture;
/** An empty folder outside every root: the symlinks point here, and it must stay empty. */
let outside: string;
let flipper: ChildProcess | undefined;
beforeEach(async () => {
  fx = await makeFixture();
  outside = path.join(fx.dir, 'elsewhere');
  await fs.mkdir(outside);
  await fs.mkdir(path.join(fx.output, 'target'));
});
afterEach(async () => {
  jest.restoreAllMocks();
  if (flipper !== undefined && flipper.exitCode === null && flipper.signalCode === null) flipper.kill('SIGKILL');
  flipper = undefined;
  await fx.cleanup();
});

/** Everything below `dir` (files, folders, links), as relative paths. */
async function everything(dir: string): Promise<string[]> {
  return (await fs.readdir(dir, { recursive: true })).map(String).sort();
}

/**
 * In a tight loop: rename `dir` away (to a fresh name inside the output folder), put a symlink to
 * `target` in its place, then take the link away and rename the folder back. Stops, with the
 * folder back in place, when `stopFile` appears; prints the number of flips.
 */
const FLIPPER = `
const fs = require('node:fs');
const [dir, target, stopFile] = process.argv.slice(1);
const deadline = Date.now() + 50000;
// Holds a state for a random moment up to maxNs, busy (a sleep would give the writer whole milliseconds).
const hold = (maxNs) => { const until = process.hrtime.bigint() + BigInt(Math.floor(Math.random() * maxNs)); while (process.hrtime.bigint() < until); };
let flips = 0;
process.stdout.write('ready\\n');
for (let i = 0; Date.now() < deadline; i++) {
  if (i % 64 === 0 && fs.existsSync(stopFile)) break;
  const away = dir + '.away-' + i;
  try { fs.renameSync(dir, away); } catch { continue; }
  try { fs.symlinkSync(target, dir); flips++; } catch {}
  hold(300000);
  try { if (fs.lstatSync(dir).isSymbolicLink()) fs.unlinkSync(dir); } catch {}
  try { fs.renameSync(away, dir); } catch {}
  hold(3000000);
}
try { if (fs.lstatSync(dir).isSymbolicLink()) fs.unlinkSync(dir); } catch {}
process.stdout.write(JSON.stringify({ flips }) + '\\n');
`;

/** Starts the flipper on `dir`, resolved once it runs; `stop()` ends it and returns its flip count. */
async function startFlipper(dir: string, target: string): Promise<{ stop(): Promise<number> }> {
  const stopFile = path.join(fx.dir, 'stop-flipping');
  const child = spawn(process.execPath, ['-e', FLIPPER, dir, target, stopFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  flipper = child;
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.stdout?.on('data', () => out.includes('ready\n') && resolve());
  });
  return {
    async stop() {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      await fs.writeFile(stopFile, '');
      await exited;
      return (JSON.parse(out.trim().split('\n').pop() as string) as { flips: number }).flips;
    },
  };
}

/** A call's outcome: its result, or what it threw (a typed error carries a code). */
async function outcomeOf(call: Promise<ToolResult>): Promise<ToolResult | { thrown: unknown }> {
  return call.catch((thrown: unknown) => ({ thrown }));
}

/** Lets the path guard pass, then swaps `{output_folder}/target` for a symlink to the outside folder. */
function swapAfterTheCheck(): void {
  const guardWrite = pathGuard.guardWrite;
  jest.spyOn(pathGuard, 'guardWrite').mockImplementation(async (...args) => {
    const real = await guardWrite(...args);
    const target = path.join(fx.output, 'target');
    await fs.rename(target, `${target}.away`);
    await fs.symlink(outside, target);
    return real;
  });
}

describe('save_output: a folder flipped to an outside symlink by a concurrent process', () => {
  test('save_output race: nothing ever appears outside; every call succeeds inside the roots or fails with a typed error', async () => {
    const target = path.join(fx.output, 'target');
    const race = await startFlipper(target, outside);
    const outcomes: { content: string; outcome: ToolResult | { thrown: unknown } }[] = [];
    const started = Date.now();
    for (let round = 0; round < 150 && Date.now() - started < 8000; round++) {
      const batch = Array.from({ length: 8 }, (_, i) => {
        const n = round * 8 + i;
        const rel = n % 2 === 0 ? `target/doc-${n}.md` : `target/new-${n}/deeper/doc.md`;
        const content = `document ${n}\n`;
        return outcomeOf(saveOutputTool(fx.ctx, { file_path: `{output_folder}/${rel}`, content })).then((outcome) => ({ content, outcome }));
      });
      outcomes.push(...(await Promise.all(batch)));
    }
    const flips = await race.stop();

    expect(flips).toBeGreaterThan(100);
    expect(await everything(outside)).toEqual([]);
    const inside = await listFiles(fx.output);
    const contents = new Set(await Promise.all(inside.map((f) => fs.readFile(path.join(fx.output, f), 'utf8'))));
    let succeeded = 0;
    for (const { content, outcome } of outcomes) {
      if ('thrown' in outcome) {
        expect(outcome.thrown).toMatchObject({ code: expect.stringMatching(/^E[A-Z]+$/) });
        continue;
      }
      if (outcome.success) {
        succeeded++;
        expect(pathGuard.isInside(outcome.path as string, fx.output, true)).toBe(true);
        expect(contents.has(content)).toBe(true);
      } else {
        expect(outcome.error).toMatch(/^(Security violation: Access denied$|E[A-Z]+: )/);
        expect(outcome.error).not.toContain('/proc/self/fd');
        expect(outcome.error).not.toContain(outside);
      }
    }
    expect(succeeded).toBeGreaterThan(0);
    // No temporary file is left inside either.
    expect(inside.filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('save_output: a folder swapped at a precise step', () => {
  test.each(['target/doc.md', 'target/new/deeper/doc.md'])('save_output: %s, its folder swapped for a symlink after the check, is refused and nothing is created outside', async (rel) => {
    swapAfterTheCheck();
    const result = await saveOutputTool(fx.ctx, { file_path: `{output_folder}/${rel}`, content: 'pwned' });
    expect(result).toEqual({ success: false, error: DENIED });
    expect(await everything(outside)).toEqual([]);
  });

  test('save_output: a folder moved out of the root just before the rename: the file is removed again and the write refused', async () => {
    const target = path.join(fx.output, 'target');
    const moved = path.join(fx.dir, 'moved-out');
    const rename = fs.rename;
    jest.spyOn(fs, 'rename').mockImplementationOnce(async (from, to) => {
      await rename(target, moved);
      return rename(from, to);
    });
    const result = await saveOutputTool(fx.ctx, { file_path: '{output_folder}/target/doc.md', content: 'pwned' });
    expect(result).toEqual({ success: false, error: DENIED });
    expect(await everything(moved)).toEqual([]);
  });

  test('save_output: a folder moved out of the root as the temporary file is created: it is removed again', async () => {
    const target = path.join(fx.output, 'target');
    const moved = path.join(fx.dir, 'moved-out');
    const open = fs.open;
    jest.spyOn(fs, 'open').mockImplementation(async (file, flags, mode) => {
      if (String(file).endsWith('.tmp')) await fs.rename(target, moved).catch(() => undefined);
      return open(file, flags, mode);
    });
    const result = await saveOutputTool(fx.ctx, { file_path: '{output_folder}/target/doc.md', content: 'pwned' });
    expect(result.success).toBe(false);
    expect(await everything(moved)).toEqual([]);
  });
});

describe('save_output: what the descriptors must still allow', () => {
  test('save_output: a symlinked folder that stays inside the roots is written through, to its real path', async () => {
    await fs.mkdir(path.join(fx.output, 'real'));
    await fs.symlink(path.join(fx.output, 'real'), path.join(fx.output, 'alias'));
    const result = await saveOutputTool(fx.ctx, { file_path: '{output_folder}/alias/sub/doc.md', content: 'ok' });
    expect(result).toEqual({ success: true, path: path.join(fx.output, 'real/sub/doc.md'), size: 2 });
    await expect(fs.readFile(path.join(fx.output, 'real/sub/doc.md'), 'utf8')).resolves.toBe('ok');
  });

  test("save_output: an output root reached through a symlink (the user's setting) is written", async () => {
    const link = path.join(fx.dir, 'out-link');
    await fs.symlink(fx.output, link);
    const result = await saveOutputTool({ ...fx.ctx, writeRoots: [link] }, { file_path: path.join(link, 'a/doc.md'), content: 'ok' });
    expect(result).toEqual({ success: true, path: path.join(fx.output, 'a/doc.md'), size: 2 });
  });

  test('save_output: nested new folders are created, an output root still missing too', async () => {
    const root = path.join(fx.project, '.loopwright/output');
    const ctx = { ...fx.ctx, writeRoots: [root] };
    const result = await saveOutputTool(ctx, { file_path: path.join(root, 'x/y/z/doc.md'), content: 'deep' });
    expect(result).toEqual({ success: true, path: path.join(root, 'x/y/z/doc.md'), size: 4 });
    await expect(fs.readFile(path.join(root, 'x/y/z/doc.md'), 'utf8')).resolves.toBe('deep');
  });

  test('save_output: overwriting replaces the file; a retry writes the same bytes and leaves no temporary file', async () => {
    const args = { file_path: '{output_folder}/target/doc.md', content: 'second\n' };
    await saveOutputTool(fx.ctx, { file_path: '{output_folder}/target/doc.md', content: 'first, longer\n' });
    const once = await saveOutputTool(fx.ctx, args);
    const again = await saveOutputTool(fx.ctx, args);
    expect(again).toEqual(once);
    expect(once).toMatchObject({ success: true, size: 7 });
    await expect(fs.readFile(path.join(fx.output, 'target/doc.md'), 'utf8')).resolves.toBe('second\n');
    expect(await everything(fx.output)).toEqual(['target', 'target/doc.md']);
  });
});

describe('save_output where /proc/self/fd is not available (other systems: checked by path, not race-free)', () => {
  const platform = Object.getOwnPropertyDescriptor(process, 'platform') as PropertyDescriptor;
  beforeEach(() => Object.defineProperty(process, 'platform', { ...platform, value: 'darwin' }));
  afterEach(() => Object.defineProperty(process, 'platform', platform));

  test('save_output fallback: writes, nested folders, overwrites and symlinks inside the roots still work', async () => {
    await fs.mkdir(path.join(fx.output, 'real'));
    await fs.symlink(path.join(fx.output, 'real'), path.join(fx.output, 'alias'));
    const open = jest.spyOn(fs, 'open');
    await expect(saveOutputTool(fx.ctx, { file_path: '{output_folder}/target/a/b/doc.md', content: 'one' })).resolves.toMatchObject({ success: true });
    await expect(saveOutputTool(fx.ctx, { file_path: '{output_folder}/target/a/b/doc.md', content: 'two' })).resolves.toMatchObject({ success: true });
    await expect(saveOutputTool(fx.ctx, { file_path: '{output_folder}/alias/doc.md', content: 'ok' })).resolves.toMatchObject({
      success: true,
      path: path.join(fx.output, 'real/doc.md'),
    });
    await expect(fs.readFile(path.join(fx.output, 'target/a/b/doc.md'), 'utf8')).resolves.toBe('two');
    expect(open).toHaveBeenCalled();
    expect(open.mock.calls.filter(([file]) => String(file).startsWith('/proc/'))).toEqual([]);
  });

  test('save_output fallback: a folder swapped for a symlink after the check is still refused', async () => {
    swapAfterTheCheck();
    const result = await saveOutputTool(fx.ctx, { file_path: '{output_folder}/target/new/doc.md', content: 'pwned' });
    expect(result).toEqual({ success: false, error: DENIED });
    expect(await everything(outside)).toEqual([]);
  });
});
