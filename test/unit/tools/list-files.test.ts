import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { listFilesTool, MAX_LISTED_FILES } from '../../../activities/tools/list-files';
import { makeFixture, writeTree, type Fixture } from './fixture';

let fx: Fixture;
beforeEach(async () => {
  fx = await makeFixture();
  await writeTree(fx.project, {
    'docs/prd.md': '# PRD\n',
    'docs/arch.md': '# Architecture\n',
    'docs/notes.txt': 'notes\n',
    'docs/deep/epic-1.md': '# Epic 1\n',
    '_bmad/bmm/agents/pm.md': '# PM\n',
    '_bmad/bmm/data/list.csv': 'a,b\n',
  });
});
afterEach(async () => {
  await fx.cleanup();
});

describe('list_files', () => {
  test('list_files: a glob from the project root gives sorted paths relative to it', async () => {
    await expect(listFilesTool(fx.ctx, { pattern: '_bmad/**/*.md' })).resolves.toEqual({ success: true, files: ['_bmad/bmm/agents/pm.md'] });
    await expect(listFilesTool(fx.ctx, { pattern: 'docs/**/*.md' })).resolves.toEqual({ success: true, files: ['docs/arch.md', 'docs/deep/epic-1.md', 'docs/prd.md'] });
    await expect(listFilesTool(fx.ctx, { pattern: '{docs,_bmad/bmm/data}/*.{txt,csv}' })).resolves.toEqual({ success: true, files: ['_bmad/bmm/data/list.csv', 'docs/notes.txt'] });
  });

  test('list_files: a pattern may start with a path variable; a relative one may be taken from path', async () => {
    await expect(listFilesTool(fx.ctx, { pattern: '{project-root}/docs/*.md' })).resolves.toEqual({ success: true, files: ['docs/arch.md', 'docs/prd.md'] });
    await expect(listFilesTool(fx.ctx, { pattern: '*.md', path: '{project-root}/docs' })).resolves.toEqual({ success: true, files: ['docs/arch.md', 'docs/prd.md'] });
    await expect(listFilesTool(fx.ctx, { pattern: '**/*.md', path: 'docs/deep' })).resolves.toEqual({ success: true, files: ['docs/deep/epic-1.md'] });
    // An absolute pattern names its own folder; path is then ignored.
    await expect(listFilesTool(fx.ctx, { pattern: '{bundle-root}/workflows/*/workflow.yaml', path: 'docs' })).resolves.toEqual({
      success: true,
      files: ['bundle/workflows/intake/workflow.yaml', 'bundle/workflows/plain/workflow.yaml'],
    });
  });

  test('list_files: a pattern without wildcards lists the file it names, or every file below the folder', async () => {
    await expect(listFilesTool(fx.ctx, { pattern: 'docs/prd.md' })).resolves.toEqual({ success: true, files: ['docs/prd.md'] });
    await expect(listFilesTool(fx.ctx, { pattern: 'docs/deep' })).resolves.toEqual({ success: true, files: ['docs/deep/epic-1.md'] });
  });

  test('list_files: nothing matching is a result that says why', async () => {
    await expect(listFilesTool(fx.ctx, { pattern: 'stories/*.md' })).resolves.toEqual({ success: true, files: [], note: 'Nothing matches: stories does not exist.' });
    const none = await listFilesTool(fx.ctx, { pattern: '*.md' });
    expect(none).toMatchObject({ success: true, files: [] });
    expect(none.note).toMatch(/^No file matches\. Patterns are relative to the project root; \*\* matches any number of folders/);
  });

  test('list_files: secret files are left out as read_file refuses them, unless the user allows them', async () => {
    await writeTree(fx.project, { 'docs/.env': 'KEY=1\n', 'docs/keys/id_rsa': 'key\n', 'docs/server.pem': 'pem\n', 'docs/private.secret': 's\n', '.git/config': '[core]\n' });
    const ctx = { ...fx.ctx, secretFiles: [{ pattern: '*.secret', source: 'test' }] };
    await expect(listFilesTool(ctx, { pattern: 'docs/**' })).resolves.toEqual({ success: true, files: ['docs/arch.md', 'docs/deep/epic-1.md', 'docs/notes.txt', 'docs/prd.md'] });
    await expect(listFilesTool(ctx, { pattern: '.git/*' })).resolves.toEqual({
      success: false,
      error: expect.stringMatching(/secret file/i),
    });
    const allowed = await listFilesTool({ ...ctx, allowSecretFiles: true }, { pattern: 'docs/**' });
    expect(allowed.files).toEqual(expect.arrayContaining(['docs/.env', 'docs/keys/id_rsa', 'docs/server.pem', 'docs/private.secret']));
  });

  test('list_files: symlinks are neither followed nor listed, so one escaping the roots shows nothing; outside paths are refused', async () => {
    await fs.symlink(fx.outside, path.join(fx.project, 'docs', 'escape'));
    await fs.symlink(path.join(fx.outside, 'secret.txt'), path.join(fx.project, 'docs', 'leak.md'));
    await fs.symlink(path.join(fx.project, 'docs', 'prd.md'), path.join(fx.project, 'docs', 'alias.md'));
    const all = await listFilesTool(fx.ctx, { pattern: '**/*' });
    expect(all.success).toBe(true);
    expect((all.files as string[]).filter((f) => f.startsWith('docs/'))).toEqual(['docs/arch.md', 'docs/deep/epic-1.md', 'docs/notes.txt', 'docs/prd.md']);
    expect(JSON.stringify(all)).not.toContain('secret');
    // Naming the link as the folder goes through the guard, which sees where it leads.
    await expect(listFilesTool(fx.ctx, { pattern: 'docs/escape/*' })).resolves.toEqual({ success: false, error: 'Security violation: Access denied' });
    await expect(listFilesTool(fx.ctx, { pattern: '../outside/*' })).resolves.toEqual({ success: false, error: 'Security violation: Access denied' });
    await expect(listFilesTool(fx.ctx, { pattern: 'docs/**/../../../outside/*' })).resolves.toEqual({ success: false, error: 'Security violation: Access denied' });
    await expect(listFilesTool(fx.ctx, { pattern: '*', path: fx.outside })).resolves.toEqual({ success: false, error: 'Security violation: Access denied' });
  });

  test('list_files: binary files are left out and counted; node_modules and .git are not entered unless named', async () => {
    await writeTree(fx.project, {
      'docs/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]),
      'docs/latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
      'node_modules/pkg/readme.md': '# pkg\n',
      'docs/node_modules/x/readme.md': '# x\n',
    });
    await expect(listFilesTool(fx.ctx, { pattern: 'docs/**' })).resolves.toEqual({
      success: true,
      files: ['docs/arch.md', 'docs/deep/epic-1.md', 'docs/notes.txt', 'docs/prd.md'],
      note: '2 binary files are not listed.',
    });
    const md = await listFilesTool(fx.ctx, { pattern: '**/readme.md' });
    expect(md).toEqual({ success: true, files: [], note: expect.stringMatching(/^No file matches/) });
    await expect(listFilesTool(fx.ctx, { pattern: 'node_modules/**/*.md' })).resolves.toEqual({ success: true, files: ['node_modules/pkg/readme.md'] });
  });

  test('list_files: at most MAX_LISTED_FILES paths, with a note saying how many more match', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < MAX_LISTED_FILES + 5; i++) files[`many/f${String(i).padStart(4, '0')}.md`] = 'x\n';
    await writeTree(fx.project, files);
    const result = await listFilesTool(fx.ctx, { pattern: 'many/*.md' });
    expect(result.files).toHaveLength(MAX_LISTED_FILES);
    expect((result.files as string[])[0]).toBe('many/f0000.md');
    expect((result.files as string[]).at(-1)).toBe('many/f0999.md');
    expect(result.note).toBe('Only the first 1,000 files are listed; 5 more paths match: narrow the pattern or path.');
  });

  test('list_files: bad arguments and unknown variables are errors naming them', async () => {
    await expect(listFilesTool(fx.ctx, { pattern: '' })).resolves.toEqual({ success: false, error: 'Invalid arguments for list_files: pattern: must not be empty' });
    const unknown = await listFilesTool(fx.ctx, { pattern: '{stories}/*.md' });
    expect(unknown).toMatchObject({ success: false, error: expect.stringMatching(/^Config variable not found: stories\n/) });
  });
});
