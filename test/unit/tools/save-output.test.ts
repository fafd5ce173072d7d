import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic } from '../../../activities/tools/atomic-write';
import { saveOutputTool } from '../../../activities/tools/save-output';
import { listFiles, makeFixture, type Fixture } from './fixture';

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
