/**
 * The `run_command` tool on the real sandbox (bubblewrap): refused in a session with commands off;
 * path variables filled in; a write into the output folder lands, one elsewhere in the project does
 * not; the exit status, a timeout and a folder outside the roots come back as results the model can
 * read, never as exceptions; the planted credentials of the project stay hidden.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { RuntimeContext } from '../../../common/runtime-context';
import { runCommandTool } from '../../../activities/tools/run-command';
import { forgetSandboxAvailability } from '../../../activities/commands/sandbox-availability';
import { makeSandboxProject, PLANTED_KEY, type SandboxProject } from '../commands-sandbox/sandbox-fixture';

let fx: SandboxProject;
let ctx: RuntimeContext;

beforeAll(async () => {
  fx = await makeSandboxProject();
  ctx = {
    bundleRoot: fx.project,
    coreRoot: fx.project,
    projectRoot: fx.project,
    variables: { 'project-root': fx.project, output_folder: fx.out },
    readRoots: [fx.project],
    writeRoots: [fx.out],
    maxReadBytes: 1_000_000,
    commands: { network: false, allowUnsandboxed: false, timeoutMs: 10_000 },
  };
});

afterAll(() => fx?.cleanup());

test('a session with commands off is told so, and nothing runs', async () => {
  const { commands: _off, ...off } = ctx;
  await expect(runCommandTool(off, { command: `touch ${fx.out}/should-not-exist` })).resolves.toEqual({
    success: false,
    error: 'run_command is not offered in this session: commands are off (commands.enabled, --commands)',
  });
  await expect(fs.stat(path.join(fx.out, 'should-not-exist'))).rejects.toMatchObject({ code: 'ENOENT' });
});

test('path variables are filled in; a write into the output folder lands and its output comes back', async () => {
  const result = await runCommandTool(ctx, { command: 'echo made > {output_folder}/made.txt && cat {project-root}/README.md' });
  expect(result).toMatchObject({
    success: true,
    exitCode: 0,
    stdout: 'hello from the project\n',
    stderr: '',
    sandboxed: true,
    command: `echo made > ${fx.out}/made.txt && cat ${fx.project}/README.md`,
  });
  expect(await fs.readFile(path.join(fx.out, 'made.txt'), 'utf8')).toBe('made\n');
});

test('a write elsewhere in the project fails with its exit status, and the file does not appear', async () => {
  const result = await runCommandTool(ctx, { command: 'echo x > {project-root}/docs/new.md' });
  expect(result).toMatchObject({ success: false, exitCode: 2, error: 'The command exited with status 2' });
  expect(String(result.stderr)).toMatch(/Read-only file system/);
  await expect(fs.stat(path.join(fx.project, 'docs', 'new.md'))).rejects.toMatchObject({ code: 'ENOENT' });
});

test('the working folder is taken relative to the project; the credentials planted in it stay hidden', async () => {
  const result = await runCommandTool(ctx, { command: 'pwd; cat .env .ssh/id_rsa 2>/dev/null | wc -c; env | grep -c KEY || true', cwd: '.' });
  expect(result.success).toBe(true);
  expect(String(result.stdout).split('\n').slice(0, 3)).toEqual([fx.project, '0', '0']);
  expect(JSON.stringify(result)).not.toContain(PLANTED_KEY);
});

test('a command past its timeout is ended, and the result says so', async () => {
  const result = await runCommandTool({ ...ctx, commands: { ...ctx.commands!, timeoutMs: 500 } }, { command: 'sleep 30' });
  expect(result).toMatchObject({ success: false, error: 'The command did not finish: it ran past its 0.5 s and was ended' });
  expect(Number(result.durationMs)).toBeLessThan(10_000);
});

test("a folder outside the roots is the path guard's refusal, as a result that names no path", async () => {
  const result = await runCommandTool(ctx, { command: 'ls', cwd: fx.outside });
  expect(result).toEqual({ success: false, error: 'Security violation: Access denied', command: 'ls' });
});

test('without a sandbox (nothing it needs on the PATH) the command is refused with how to fix it', async () => {
  const saved = process.env.PATH;
  try {
    // The runner looks its programs up on the worker's PATH: this one has none of them.
    process.env.PATH = fx.outside;
    forgetSandboxAvailability();
    const result = await runCommandTool(ctx, { command: 'true' });
    expect(result).toMatchObject({ success: false, errorType: 'SandboxUnavailableError', command: 'true' });
    expect(String(result.error)).toMatch(/^Commands cannot run in a sandbox on this machine: .+ Install /);
  } finally {
    process.env.PATH = saved;
    forgetSandboxAvailability();
  }
});

test('a variable whose value the shell would split or expand is filled in quoted: one word, nothing run', async () => {
  const odd = { ...ctx, variables: { ...ctx.variables, odd: "a b $(touch pwned);'q" } };
  const result = await runCommandTool(odd, { command: 'printf "%s|" {odd}' });
  expect(result).toMatchObject({ success: true, stdout: "a b $(touch pwned);'q|" });
  await expect(fs.stat(path.join(fx.out, 'pwned'))).rejects.toMatchObject({ code: 'ENOENT' });
});
