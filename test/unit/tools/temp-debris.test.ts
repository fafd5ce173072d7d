/**
 * Debris of crashed writes: a worker killed between creating its temporary file and renaming it
 * leaves `.<name>.<pid>.<random>.tmp` beside the output. The next write to that folder (the retry
 * included) removes such files when they are stale, and only those: never a write in flight, never
 * a file of a live writer younger than the bound, never a file of another naming.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { saveOutputTool } from '../../../activities/tools/save-output';
import { isEngineTempName, releaseTempName, reserveTempName, STALE_TEMP_AGE_MS } from '../../../bundle/sandbox/stale-temp';
import { makeFixture, type Fixture } from './fixture';

const REPO = path.resolve(__dirname, '../../..');

let fx: Fixture;
let children: ChildProcess[] = [];
beforeEach(async () => {
  fx = await makeFixture();
  children = [];
  await fs.mkdir(path.join(fx.output, 'docs'));
});
afterEach(async () => {
  jest.restoreAllMocks();
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await fx.cleanup();
});

/** The pid of a process that has exited (checked: no process has it now). */
function deadPid(): number {
  const pid = spawnSync(process.execPath, ['-e', '']).pid as number;
  expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  return pid;
}

/** The pid of a running process (stopped after the test). */
function livePid(): number {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  children.push(child);
  return child.pid as number;
}

/** A temporary file name of the engine's naming for `name`, written by `pid`. */
function tempOf(name: string, pid: number, hex = 'a1b2c3d4e5f6'): string {
  return `.${name}.${pid}.${hex}.tmp`;
}

async function put(rel: string, content = 'half a docu'): Promise<string> {
  const file = path.join(fx.output, rel);
  await fs.writeFile(file, content);
  return file;
}

async function names(rel = 'docs'): Promise<string[]> {
  return (await fs.readdir(path.join(fx.output, rel))).sort();
}

async function writeTo(rel: string, content = 'whole\n'): Promise<void> {
  await expect(saveOutputTool(fx.ctx, { file_path: `{output_folder}/${rel}`, content })).resolves.toMatchObject({ success: true });
}

describe('stale temporary files are removed at the next write to their folder', () => {
  test('temp debris: a temp file of a dead pid is removed by a write of another file to the folder', async () => {
    const stale = tempOf('report.md', deadPid());
    await put(`docs/${stale}`);
    await writeTo('docs/other.md');
    expect(await names()).toEqual(['other.md']);
  });

  test('temp debris: a temp file of this pid that no write of this process holds is removed (a restarted worker with the same pid)', async () => {
    await put(`docs/${tempOf('report.md', process.pid)}`);
    await writeTo('docs/report.md');
    expect(await names()).toEqual(['report.md']);
  });

  test("temp debris: a live pid's temp file younger than the bound is kept; older than the bound (pid reused) it is removed", async () => {
    const pid = livePid();
    const young = tempOf('a.md', pid, '000000000001');
    const old = tempOf('b.md', pid, '000000000002');
    await put(`docs/${young}`);
    const oldFile = await put(`docs/${old}`);
    const then = new Date(Date.now() - STALE_TEMP_AGE_MS - 60_000);
    await fs.utimes(oldFile, then, then);
    await writeTo('docs/c.md');
    expect(await names()).toEqual([young, 'c.md'].sort());
  });

  test('temp debris: a temp file reserved by a write in flight in this process is kept, and removed once released', async () => {
    const temp = reserveTempName('report.md');
    try {
      await put(`docs/${temp}`);
      await writeTo('docs/other.md');
      expect(await names()).toEqual([temp, 'other.md'].sort());
    } finally {
      releaseTempName(temp);
    }
    await writeTo('docs/other.md');
    expect(await names()).toEqual(['other.md']);
  });

  test('temp debris: a real write held after creating its temp file keeps it while another write sweeps the folder', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const open = fs.open;
    jest.spyOn(fs, 'open').mockImplementation(async (file, flags, mode) => {
      const handle = await open(file, flags, mode);
      if (/\.held\.md\.\d+\.[0-9a-f]{12}\.tmp$/.test(String(file))) await gate;
      return handle;
    });
    const held = saveOutputTool(fx.ctx, { file_path: '{output_folder}/docs/held.md', content: 'held\n' });
    while (!(await names()).some(isEngineTempName)) await new Promise((resolve) => setTimeout(resolve, 5));
    const inFlight = (await names()).filter(isEngineTempName);
    await writeTo('docs/other.md');
    expect(await names()).toEqual([...inFlight, 'other.md'].sort());
    release();
    await expect(held).resolves.toMatchObject({ success: true });
    expect(await names()).toEqual(['held.md', 'other.md']);
  });

  test("temp debris: many concurrent writes into one folder all succeed (no write sweeps away another's temp file)", async () => {
    const content = 'x'.repeat(256 * 1024);
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => saveOutputTool(fx.ctx, { file_path: `{output_folder}/docs/part-${i % 6}.md`, content })));
    for (const result of results) expect(result).toMatchObject({ success: true });
    expect(await names()).toEqual(Array.from({ length: 6 }, (_, i) => `part-${i}.md`));
  });

  test('temp debris: files of a similar but different naming are never touched', async () => {
    const dead = deadPid();
    const lookalikes = [
      `report.md.${dead}.a1b2c3d4e5f6.tmp`, // no leading dot
      `.report.md.${dead}.a1b2c3.tmp`, // too few hex digits
      `.report.md.${dead}.a1b2c3d4e5f6a.tmp`, // too many
      `.report.md.${dead}.A1B2C3D4E5F6.tmp`, // upper case
      `.report.md.${dead}.a1b2c3d4e5f6.tmp.bak`,
      `.report.md.${dead}.a1b2c3d4e5f6.temp`,
      `.report.md.x${dead}.a1b2c3d4e5f6.tmp`, // not a pid
      `.report.md.0.a1b2c3d4e5f6.tmp`, // pid 0 is no writer
      `.${dead}.a1b2c3d4e5f6.tmp`, // no target name
      '.report.md.swp',
      'notes.tmp',
    ];
    for (const name of lookalikes) await put(`docs/${name}`);
    // The exact naming, but not a regular file: a folder, and a symlink to a file outside.
    const asFolder = tempOf('folder.md', dead, '0000000000aa');
    const asLink = tempOf('link.md', dead, '0000000000bb');
    await fs.mkdir(path.join(fx.output, 'docs', asFolder));
    await fs.symlink(path.join(fx.outside, 'secret.txt'), path.join(fx.output, 'docs', asLink));
    await writeTo('docs/report.md');
    expect(await names()).toEqual([...lookalikes, asFolder, asLink, 'report.md'].sort());
    await expect(fs.readFile(path.join(fx.outside, 'secret.txt'), 'utf8')).resolves.toBe('top secret\n');
  });

  test('temp debris: only the folder written to is swept', async () => {
    const stale = tempOf('report.md', deadPid());
    await put(stale);
    await writeTo('docs/other.md');
    expect(await fs.readdir(fx.output)).toContain(stale);
  });
});

describe('a worker killed in the middle of save_output', () => {
  /** A child worker that starts save_output and stops for good once its temporary file exists. */
  const CHILD = [
    "require('ts-node').register({ transpileOnly: true, project: 'tsconfig.json' });",
    "const fs = require('node:fs');",
    'const open = fs.promises.open;',
    'fs.promises.open = async (...args) => {',
    '  const handle = await open(...args);',
    "  if (String(args[0]).endsWith('.tmp')) { process.stdout.write('held\\n'); await new Promise(() => {}); }",
    '  return handle;',
    '};',
    'setInterval(() => {}, 1000);',
    "const { saveOutputTool } = require('./activities/tools/save-output');",
    "saveOutputTool(JSON.parse(process.argv[1]), { file_path: '{output_folder}/docs/report.md', content: 'from the crash\\n' });",
  ].join('\n');

  test('temp debris: SIGKILL after the temp file exists; the retry leaves exactly the final file', async () => {
    const child = spawn(process.execPath, ['-e', CHILD, JSON.stringify(fx.ctx)], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk).includes('held\n') && resolve());
      child.once('exit', (code) => reject(new Error(`the child exited (${code}) before holding its write`)));
    });
    const debris = await names();
    expect(debris).toEqual([expect.stringMatching(new RegExp(`^\\.report\\.md\\.${child.pid}\\.[0-9a-f]{12}\\.tmp$`))]);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;

    const retry = await saveOutputTool(fx.ctx, { file_path: '{output_folder}/docs/report.md', content: 'from the crash\n' });
    expect(retry).toEqual({ success: true, path: path.join(fx.output, 'docs/report.md'), size: 15 });
    expect(await names()).toEqual(['report.md']);
    await expect(fs.readFile(path.join(fx.output, 'docs/report.md'), 'utf8')).resolves.toBe('from the crash\n');
  }, 60_000);
});
