import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { ToolResult } from '../../../common/messages';
import { writeFileAtomic } from '../../../bundle/sandbox/atomic-write';
import { TOOL_ACTIVITIES } from '../../../activities/tools/dispatch';
import { ALREADY_APPENDED, saveOutputTool } from '../../../activities/tools/save-output';
import { listFiles, makeFixture, writeTree, type Fixture } from './fixture';

let fx: Fixture;
beforeEach(async () => {
  fx = await makeFixture();
});
afterEach(async () => {
  await fx.cleanup();
});

describe('save_output', () => {
  test('save_output: resolves {output_folder} and {date}, writes the file and returns path and byte size', async () => {
    const content = '# Requirements\n\nÜber alles: naïve café\n';
    const result = await saveOutputTool(fx.ctx, { file_path: '{output_folder}/requirements-{date}.md', content });
    expect(result.success).toBe(true);
    expect(result.path).toMatch(new RegExp(`^${fx.output}/requirements-\\d{4}-\\d{2}-\\d{2}\\.md$`));
    expect(result.size).toBe(Buffer.byteLength(content));
    expect(result.size).not.toBe(content.length);
    await expect(fs.readFile(result.path as string, 'utf8')).resolves.toBe(content);
  });

  test('save_output: creates missing nested folders', async () => {
    const result = await saveOutputTool(fx.ctx, { file_path: '{output_folder}/a/b/c/doc.md', content: 'x' });
    expect(result).toEqual({ success: true, path: path.join(fx.output, 'a/b/c/doc.md'), size: 1 });
    await expect(fs.readFile(path.join(fx.output, 'a/b/c/doc.md'), 'utf8')).resolves.toBe('x');
  });

  test('save_output: an output root that does not exist yet is created', async () => {
    const ctx = { ...fx.ctx, writeRoots: [path.join(fx.project, '.loopwright/output')] };
    const result = await saveOutputTool(ctx, { file_path: path.join(fx.project, '.loopwright/output/r.md'), content: 'ok' });
    expect(result).toMatchObject({ success: true, size: 2 });
  });

  test('save_output: a relative path is taken from the first output root', async () => {
    const result = await saveOutputTool(fx.ctx, { file_path: 'notes/today.md', content: 'n' });
    expect(result).toMatchObject({ success: true, path: path.join(fx.output, 'notes/today.md') });
  });

  test('save_output: writing the same content twice is harmless and leaves no temporary files', async () => {
    const args = { file_path: '{output_folder}/doc.md', content: 'same bytes\n' };
    const first = await saveOutputTool(fx.ctx, args);
    const second = await saveOutputTool(fx.ctx, args);
    expect(second).toEqual(first);
    expect(await listFiles(fx.output)).toEqual(['doc.md']);
    await expect(fs.readFile(path.join(fx.output, 'doc.md'), 'utf8')).resolves.toBe('same bytes\n');
  });

  test('save_output: replaces an existing file whole', async () => {
    await saveOutputTool(fx.ctx, { file_path: '{output_folder}/doc.md', content: 'a much longer first version\n' });
    await saveOutputTool(fx.ctx, { file_path: '{output_folder}/doc.md', content: 'short\n' });
    await expect(fs.readFile(path.join(fx.output, 'doc.md'), 'utf8')).resolves.toBe('short\n');
  });

  test('save_output: a failed write removes its temporary file and reports the error', async () => {
    // The target is an existing non-empty folder, so the final rename fails.
    await fs.mkdir(path.join(fx.output, 'taken/inner'), { recursive: true });
    const result = await saveOutputTool(fx.ctx, { file_path: '{output_folder}/taken', content: 'x' });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/^(EISDIR|ENOTEMPTY|EEXIST)/);
    // The message names the real paths, not the folder descriptor the write went through.
    expect(result.error).toContain(path.join(fx.output, 'taken'));
    expect(result.error).not.toContain('/proc/self/fd');
    expect(await fs.readdir(fx.output)).toEqual(['taken']);
  });

  test('save_output: a bad argument names the field', async () => {
    await expect(saveOutputTool(fx.ctx, { file_path: '{output_folder}/x.md' })).resolves.toEqual({
      success: false,
      error: 'Invalid arguments for save_output: content: required string is missing',
    });
    await expect(saveOutputTool(fx.ctx, { file_path: '', content: 'x' })).resolves.toEqual({
      success: false,
      error: 'Invalid arguments for save_output: file_path: must not be empty',
    });
  });

  test('save_output: a missing variable gives the spec message', async () => {
    const result = await saveOutputTool(fx.ctx, { file_path: '{docs_folder}/x.md', content: 'x' });
    expect(result.error).toMatch(/^Config variable not found: docs_folder\nAvailable variables: /);
  });

  test.each([
    ['a .. escape', () => '{output_folder}/../../outside/evil.md'],
    ['an absolute path elsewhere', () => path.join(fx.outside, 'evil.md')],
    ['the bundle (readable but not writable)', () => '{bundle-root}/config.yaml'],
    ['the output root itself', () => '{output_folder}'],
  ])('save_output: refuses %s and writes nothing', async (_label, filePath) => {
    const before = await listFiles(fx.dir);
    const result = await saveOutputTool(fx.ctx, { file_path: filePath(), content: 'pwned' });
    expect(result).toEqual({ success: false, error: 'Security violation: Access denied' });
    expect(await listFiles(fx.dir)).toEqual(before);
  });

  test('save_output: refuses writing through a symlink that points out of the output root', async () => {
    await fs.symlink(fx.outside, path.join(fx.output, 'escape'));
    await fs.symlink(path.join(fx.outside, 'secret.txt'), path.join(fx.output, 'file-link.md'));
    await fs.symlink(path.join(fx.outside, 'new.md'), path.join(fx.output, 'dangling.md'));
    for (const p of ['{output_folder}/escape/evil.md', '{output_folder}/file-link.md', '{output_folder}/dangling.md']) {
      const result = await saveOutputTool(fx.ctx, { file_path: p, content: 'pwned' });
      expect(result).toEqual({ success: false, error: 'Security violation: Access denied' });
    }
    await expect(fs.readFile(path.join(fx.outside, 'secret.txt'), 'utf8')).resolves.toBe('top secret\n');
    expect(await listFiles(fx.outside)).toEqual(['config.yaml', 'secret.txt']);
  });

  test('save_output: with no output root every write is refused', async () => {
    const result = await saveOutputTool({ ...fx.ctx, writeRoots: [] }, { file_path: '/tmp/x.md', content: 'x' });
    expect(result).toEqual({ success: false, error: 'Security violation: Access denied' });
  });
});

describe('save_output: append mode', () => {
  const append = (file_path: string, content: string) => ({ file_path, content, mode: 'append' });

  test('save_output append: creates a missing file (and its folders), then adds each section at its end', async () => {
    const file = path.join(fx.output, 'docs/prd.md');
    const first = await saveOutputTool(fx.ctx, append('{output_folder}/docs/prd.md', '# PRD\n'));
    expect(first).toEqual({ success: true, path: file, size: 6, appended: 6, created: true });
    const second = await saveOutputTool(fx.ctx, append('{output_folder}/docs/prd.md', '\n## Goals\n\nLend tools.\n'));
    expect(second).toEqual({ success: true, path: file, size: 29, appended: 23 });
    await expect(fs.readFile(file, 'utf8')).resolves.toBe('# PRD\n\n## Goals\n\nLend tools.\n');
    expect(await listFiles(fx.output)).toEqual(['docs/prd.md']);
  });

  test('save_output append: the content goes exactly after the last character; replace (explicit or default) still replaces', async () => {
    const file = path.join(fx.output, 'a.md');
    await saveOutputTool(fx.ctx, { file_path: '{output_folder}/a.md', content: 'no newline', mode: 'replace' });
    await saveOutputTool(fx.ctx, append('{output_folder}/a.md', ' — café'));
    await expect(fs.readFile(file, 'utf8')).resolves.toBe('no newline — café');
    await saveOutputTool(fx.ctx, { file_path: '{output_folder}/a.md', content: 'whole' });
    await expect(fs.readFile(file, 'utf8')).resolves.toBe('whole');
  });

  test('save_output append: keeps a byte-order mark; appended counts bytes', async () => {
    const file = path.join(fx.output, 'bom.md');
    await writeTree(fx.output, { 'bom.md': Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('a\n')]) });
    await expect(saveOutputTool(fx.ctx, append('{output_folder}/bom.md', 'é\n'))).resolves.toMatchObject({ success: true, size: 8, appended: 3 });
    const bytes = await fs.readFile(file);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.subarray(3).toString('utf8')).toBe('a\né\n');
  });

  test('save_output append: a bad mode names the field and the allowed values', async () => {
    const result = await saveOutputTool(fx.ctx, { file_path: '{output_folder}/a.md', content: 'x', mode: 'prepend' });
    expect(result).toMatchObject({ success: false, error: expect.stringMatching(/^Invalid arguments for save_output: mode: .*"replace"\|"append"/) });
    expect(await listFiles(fx.output)).toEqual([]);
  });

  test('save_output append: the existing file is read as read_file reads it (limit, binary, hard links), and left unchanged when refused', async () => {
    await writeTree(fx.output, { 'big.md': 'x'.repeat(17), 'blob.bin': Buffer.from([0x61, 0x00]) });
    await expect(saveOutputTool({ ...fx.ctx, maxReadBytes: 16 }, append('{output_folder}/big.md', 'y'))).resolves.toEqual({
      success: false,
      error: `File too large: ${path.join(fx.output, 'big.md')} is 17 bytes; the read limit is 16 bytes`,
      path: path.join(fx.output, 'big.md'),
    });
    await expect(saveOutputTool(fx.ctx, append('{output_folder}/blob.bin', 'y'))).resolves.toMatchObject({ success: false, error: expect.stringMatching(/^Binary file refused/) });
    await fs.link(path.join(fx.outside, 'secret.txt'), path.join(fx.output, 'linked.md'));
    await expect(saveOutputTool(fx.ctx, append('{output_folder}/linked.md', 'y'))).resolves.toMatchObject({ success: false, error: expect.stringMatching(/^Hard-linked file refused/) });
    await expect(fs.readFile(path.join(fx.outside, 'secret.txt'), 'utf8')).resolves.toBe('top secret\n');
    await expect(fs.readFile(path.join(fx.output, 'big.md'), 'utf8')).resolves.toBe('x'.repeat(17));
  });

  test('save_output append: refuses what a replace refuses (outside, symlinks out, protected and secret files)', async () => {
    await fs.symlink(path.join(fx.outside, 'secret.txt'), path.join(fx.output, 'file-link.md'));
    for (const p of ['{output_folder}/../../outside/secret.txt', path.join(fx.outside, 'secret.txt'), '{output_folder}/file-link.md', '{bundle-root}/notes.txt']) {
      await expect(saveOutputTool(fx.ctx, append(p, 'pwned'))).resolves.toEqual({ success: false, error: 'Security violation: Access denied' });
    }
    const project = { ...fx.ctx, writeRoots: [fx.project] };
    await expect(saveOutputTool(project, append(path.join(fx.bundle, 'config.yaml'), 'evil: 1\n'))).resolves.toMatchObject({
      success: false,
      error: expect.stringMatching(/bundle's own files/),
    });
    await expect(saveOutputTool(project, append(path.join(fx.project, '.env'), 'X=1\n'))).resolves.toMatchObject({ success: false, error: expect.stringMatching(/^Secret file refused/) });
    await expect(fs.readFile(path.join(fx.outside, 'secret.txt'), 'utf8')).resolves.toBe('top secret\n');
    await expect(fs.readFile(path.join(fx.bundle, 'config.yaml'), 'utf8')).resolves.not.toContain('evil');
    expect(await listFiles(fx.project).then((files) => files.filter((f) => f.startsWith('.')))).toEqual([]);
  });

  test('save_output append retry: content already at the end is not appended again, with a note', async () => {
    const file = path.join(fx.output, 'prd.md');
    await saveOutputTool(fx.ctx, append('{output_folder}/prd.md', '# PRD\n'));
    await saveOutputTool(fx.ctx, append('{output_folder}/prd.md', '## Goals\n'));
    const again = await saveOutputTool(fx.ctx, append('{output_folder}/prd.md', '## Goals\n'), { attempt: 2 });
    expect(again).toEqual({ success: true, path: file, size: 15, appended: 0, note: ALREADY_APPENDED });
    await expect(fs.readFile(file, 'utf8')).resolves.toBe('# PRD\n## Goals\n');
  });

  test('save_output append retry: a first attempt appends even a repeated section; a retry that finds nothing appends', async () => {
    const file = path.join(fx.output, 'log.md');
    await saveOutputTool(fx.ctx, append('{output_folder}/log.md', '---\n'));
    await saveOutputTool(fx.ctx, append('{output_folder}/log.md', '---\n'));
    await expect(fs.readFile(file, 'utf8')).resolves.toBe('---\n---\n');
    await expect(saveOutputTool(fx.ctx, append('{output_folder}/log.md', 'end\n'), { attempt: 4 })).resolves.toMatchObject({ success: true, appended: 4 });
    await expect(fs.readFile(file, 'utf8')).resolves.toBe('---\n---\nend\n');
  });

  test('save_output append retry: the activity passes its attempt to the tool (a mock activity on attempt 2)', async () => {
    const file = path.join(fx.output, 'prd.md');
    const args = append('{output_folder}/prd.md', '## Goals\n');
    await saveOutputTool(fx.ctx, args);
    const retried = new MockActivityEnvironment({ attempt: 2 }, { logger: new DefaultLogger('ERROR', () => undefined) });
    await expect(retried.run(TOOL_ACTIVITIES.save_output, fx.ctx, args) as Promise<ToolResult>).resolves.toMatchObject({ success: true, note: ALREADY_APPENDED });
    const first = new MockActivityEnvironment({ attempt: 1 }, { logger: new DefaultLogger('ERROR', () => undefined) });
    await expect(first.run(TOOL_ACTIVITIES.save_output, fx.ctx, args) as Promise<ToolResult>).resolves.toMatchObject({ success: true, appended: 9 });
    await expect(fs.readFile(file, 'utf8')).resolves.toBe('## Goals\n## Goals\n');
  });
});

describe('writeFileAtomic', () => {
  test('writeFileAtomic: concurrent writes of the same content end with that content and no temp files', async () => {
    const target = path.join(fx.output, 'race.md');
    const sizes = await Promise.all(Array.from({ length: 20 }, () => writeFileAtomic(target, 'stable\n')));
    expect(new Set(sizes)).toEqual(new Set([7]));
    expect(await listFiles(fx.output)).toEqual(['race.md']);
  });

  test('writeFileAtomic: fails without leaving a temp file when the folder is missing', async () => {
    await expect(writeFileAtomic(path.join(fx.output, 'missing/x.md'), 'x')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await listFiles(fx.output)).toEqual([]);
  });
});
