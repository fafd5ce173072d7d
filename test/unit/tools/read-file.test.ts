import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { readFileTool } from '../../../activities/tools/read-file';
import { makeFixture, type Fixture } from './fixture';

let fx: Fixture;
beforeEach(async () => {
  fx = await makeFixture();
});
afterEach(async () => {
  await fx.cleanup();
});

describe('read_file', () => {
  test('read_file: returns real path, content and size in bytes for a bundle file given with {bundle-root}', async () => {
    const result = await readFileTool(fx.ctx, { file_path: '{bundle-root}/notes.txt' });
    expect(result).toEqual({
      success: true,
      path: path.join(fx.bundle, 'notes.txt'),
      content: 'héllo wörld\n',
      size: Buffer.byteLength('héllo wörld\n'),
    });
  });

  test('read_file: accepts the raw JSON text of the arguments', async () => {
    const result = await readFileTool(fx.ctx, JSON.stringify({ file_path: '{bundle-root}/config.yaml' }));
    expect(result.success).toBe(true);
    expect(result.content).toContain('user_name: Bryan');
  });

  test('read_file: a relative path is taken from the bundle root', async () => {
    const result = await readFileTool(fx.ctx, { file_path: 'workflows/plain/steps.md' });
    expect(result).toMatchObject({ success: true, content: 'Just talk.\n' });
  });

  test('read_file: a bad argument names the field and does not throw', async () => {
    await expect(readFileTool(fx.ctx, { file_path: 42 })).resolves.toEqual({
      success: false,
      error: 'Invalid arguments for read_file: file_path: expected string, received number',
    });
    await expect(readFileTool(fx.ctx, {})).resolves.toEqual({
      success: false,
      error: 'Invalid arguments for read_file: file_path: required string is missing',
    });
    const notJson = await readFileTool(fx.ctx, '{"file_path": ');
    expect(notJson.success).toBe(false);
    expect(notJson.error).toMatch(/^Arguments for read_file are not valid JSON/);
  });

  test('read_file: a missing config variable gives the spec message with the sorted available variables', async () => {
    const result = await readFileTool(fx.ctx, { file_path: '{invalid_var}/x.md' });
    expect(result.success).toBe(false);
    expect(result.error).toBe('Config variable not found: invalid_var\nAvailable variables: bundle-root, core-root, output_folder, project-root, project_root, user_name');
  });

  test('read_file: a missing file inside the roots reports ENOENT', async () => {
    const result = await readFileTool(fx.ctx, { file_path: '{bundle-root}/nope.md' });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/^ENOENT: no such file or directory/);
  });

  test('read_file: refuses a file over the size limit, saying size and limit', async () => {
    const result = await readFileTool({ ...fx.ctx, maxReadBytes: 8 }, { file_path: '{bundle-root}/notes.txt' });
    const size = Buffer.byteLength('héllo wörld\n');
    expect(result).toEqual({
      success: false,
      error: `File too large: ${path.join(fx.bundle, 'notes.txt')} is ${size} bytes; the read limit is 8 bytes`,
      path: path.join(fx.bundle, 'notes.txt'),
    });
  });

  test('read_file: a file exactly at the limit is read', async () => {
    const size = Buffer.byteLength('héllo wörld\n');
    const result = await readFileTool({ ...fx.ctx, maxReadBytes: size }, { file_path: '{bundle-root}/notes.txt' });
    expect(result).toMatchObject({ success: true, size });
  });

  test('read_file: refuses binary files (NUL byte, invalid UTF-8)', async () => {
    await fs.writeFile(path.join(fx.bundle, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
    await fs.writeFile(path.join(fx.bundle, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    for (const name of ['image.png', 'latin1.txt']) {
      const result = await readFileTool(fx.ctx, { file_path: `{bundle-root}/${name}` });
      expect(result.success).toBe(false);
      expect(result.error).toBe(`Binary file refused: ${path.join(fx.bundle, name)} is not UTF-8 text; only text files can be read`);
    }
  });

  test('read_file: a folder is not a file', async () => {
    const result = await readFileTool(fx.ctx, { file_path: '{bundle-root}/workflows' });
    expect(result).toMatchObject({ success: false, error: `Not a file: ${path.join(fx.bundle, 'workflows')}` });
  });

  test.each([
    ['a .. escape', () => '{bundle-root}/../../outside/secret.txt'],
    ['an absolute path elsewhere', () => path.join(fx.outside, 'secret.txt')],
    ['a missing file outside', () => path.join(fx.outside, 'missing.txt')],
    ['/etc/passwd', () => '{bundle-root}/../../../../../../../../etc/passwd'],
  ])('read_file: refuses %s without revealing the path', async (_label, filePath) => {
    const result = await readFileTool(fx.ctx, { file_path: filePath() });
    expect(result).toEqual({ success: false, error: 'Security violation: Access denied' });
  });

  test('read_file: refuses a symlink that points out of the roots', async () => {
    await fs.symlink(path.join(fx.outside, 'secret.txt'), path.join(fx.bundle, 'link.txt'));
    await fs.symlink(fx.outside, path.join(fx.bundle, 'linked-dir'));
    for (const p of ['{bundle-root}/link.txt', '{bundle-root}/linked-dir/secret.txt']) {
      const result = await readFileTool(fx.ctx, { file_path: p });
      expect(result).toEqual({ success: false, error: 'Security violation: Access denied' });
      expect(JSON.stringify(result)).not.toContain('secret');
    }
  });

  test('read_file: follows a symlink that stays inside, reporting the real path', async () => {
    await fs.symlink(path.join(fx.bundle, 'notes.txt'), path.join(fx.bundle, 'alias.txt'));
    const result = await readFileTool(fx.ctx, { file_path: '{bundle-root}/alias.txt' });
    expect(result).toMatchObject({ success: true, path: path.join(fx.bundle, 'notes.txt') });
  });

  test('read_file: a symlink cycle is refused', async () => {
    await fs.symlink(path.join(fx.bundle, 'b.lnk'), path.join(fx.bundle, 'a.lnk'));
    await fs.symlink(path.join(fx.bundle, 'a.lnk'), path.join(fx.bundle, 'b.lnk'));
    const result = await readFileTool(fx.ctx, { file_path: '{bundle-root}/a.lnk' });
    expect(result).toEqual({ success: false, error: 'Security violation: Access denied' });
  });
});
