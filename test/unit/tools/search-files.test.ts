import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { MAX_LINE_CHARS, MAX_MATCHES, searchFilesTool } from '../../../activities/tools/search-files';
import { makeFixture, writeTree, type Fixture } from './fixture';

let fx: Fixture;
beforeEach(async () => {
  fx = await makeFixture();
  await writeTree(fx.project, {
    'docs/prd.md': '---\nstepsCompleted: []\n---\n# PRD\n\n## Goals\nShip the harbour app.\r\n',
    'docs/deep/epic-1.md': '# Epic 1\nGoals: none yet\n',
    'docs/notes.txt': 'goals are listed in the PRD\n',
  });
});
afterEach(async () => {
  await fx.cleanup();
});

describe('search_files', () => {
  test('search_files: matching lines as path:line: text, in path order, paths relative to the project root', async () => {
    await expect(searchFilesTool(fx.ctx, { pattern: 'Goals', path: 'docs' })).resolves.toEqual({
      success: true,
      matches: ['docs/deep/epic-1.md:2: Goals: none yet', 'docs/prd.md:6: ## Goals'],
      searched: 3,
    });
    // A carriage return ending a line is not part of its text.
    await expect(searchFilesTool(fx.ctx, { pattern: 'harbour app\\.$', path: '{project-root}/docs' })).resolves.toMatchObject({ matches: ['docs/prd.md:7: Ship the harbour app.'] });
  });

  test('search_files: ignore_case, a glob (one without / matches names at any depth), one file as path', async () => {
    const anyCase = await searchFilesTool(fx.ctx, { pattern: '^goals', path: 'docs', ignore_case: true });
    expect(anyCase.matches).toEqual(['docs/deep/epic-1.md:2: Goals: none yet', 'docs/notes.txt:1: goals are listed in the PRD']);
    const md = await searchFilesTool(fx.ctx, { pattern: 'goals', ignore_case: true, glob: '*.md' });
    // The Markdown files of the bundle (inside the project) are searched too: 3, and 2 under docs.
    expect(md).toMatchObject({ matches: ['docs/deep/epic-1.md:2: Goals: none yet', 'docs/prd.md:6: ## Goals'], searched: 5 });
    const top = await searchFilesTool(fx.ctx, { pattern: 'goals', ignore_case: true, path: 'docs', glob: '*/*.md' });
    expect(top.matches).toEqual(['docs/deep/epic-1.md:2: Goals: none yet']);
    await expect(searchFilesTool(fx.ctx, { pattern: 'stepsCompleted', path: 'docs/prd.md' })).resolves.toEqual({ success: true, matches: ['docs/prd.md:2: stepsCompleted: []'], searched: 1 });
    await expect(searchFilesTool(fx.ctx, { pattern: 'x', path: 'docs', glob: '*.yaml' })).resolves.toEqual({
      success: true,
      matches: [],
      searched: 0,
      note: 'No file to search: nothing under path matches the glob.',
    });
  });

  test('search_files: a catastrophic-backtracking pattern on a long line returns (linear-time engine)', async () => {
    // With a backtracking engine, (a+)+$ against a run of a's ending in b takes exponential time.
    await writeTree(fx.project, { 'hostile/line.txt': `${'a'.repeat(100_000)}b\n`, 'hostile/short.txt': `${'a'.repeat(40)}!\n` });
    await expect(searchFilesTool(fx.ctx, { pattern: '(a+)+$', path: 'hostile' })).resolves.toEqual({ success: true, matches: [], searched: 2 });
    await expect(searchFilesTool(fx.ctx, { pattern: '^(a|aa)+$', path: 'hostile' })).resolves.toEqual({ success: true, matches: [], searched: 2 });
    await expect(searchFilesTool(fx.ctx, { pattern: '(x+x+)+y', path: 'hostile' })).resolves.toMatchObject({ success: true, matches: [] });
  });

  test('search_files: an invalid or too long regular expression is an error naming it', async () => {
    await expect(searchFilesTool(fx.ctx, { pattern: '(unclosed' })).resolves.toEqual({
      success: false,
      error: 'Invalid regular expression: "(unclosed" (error parsing regexp: missing closing ): `(unclosed`); write it in RE2 syntax (no lookaround, no backreferences)',
    });
    const lookbehind = await searchFilesTool(fx.ctx, { pattern: '(?<!x)y' });
    expect(lookbehind).toMatchObject({ success: false, error: expect.stringMatching(/^Invalid regular expression: "\(\?<!x\)y" \(/) });
    const backreference = await searchFilesTool(fx.ctx, { pattern: '(a)\\1' });
    expect(backreference).toMatchObject({ success: false, error: expect.stringContaining('Invalid regular expression: "(a)\\1"') });
    await expect(searchFilesTool(fx.ctx, { pattern: 'a'.repeat(1001) })).resolves.toEqual({
      success: false,
      error: 'Invalid regular expression: it is 1001 characters long; the limit is 1000',
    });
    await expect(searchFilesTool(fx.ctx, { pattern: 'x', glob: '../*' })).resolves.toEqual({
      success: false,
      error: 'Invalid glob: "../*": it must be relative to path and stay below it',
    });
  });

  test('search_files: secret files, paths outside the roots and symlinks escaping them are never searched', async () => {
    await writeTree(fx.project, { 'docs/.env': 'GOALS_KEY=hunter2\n', 'docs/id_rsa': 'Goals key\n' });
    await fs.symlink(path.join(fx.outside, 'secret.txt'), path.join(fx.project, 'docs', 'leak.md'));
    await fs.symlink(fx.outside, path.join(fx.project, 'docs', 'escape'));
    const all = await searchFilesTool(fx.ctx, { pattern: 'secret|hunter2|Goals key' });
    expect(all).toEqual({ success: true, matches: [], searched: expect.any(Number) });
    await expect(searchFilesTool(fx.ctx, { pattern: 'secret', path: 'docs/escape' })).resolves.toEqual({ success: false, error: 'Security violation: Access denied' });
    await expect(searchFilesTool(fx.ctx, { pattern: 'secret', path: 'docs/leak.md' })).resolves.toEqual({ success: false, error: 'Security violation: Access denied' });
    await expect(searchFilesTool(fx.ctx, { pattern: 'secret', path: fx.outside })).resolves.toEqual({ success: false, error: 'Security violation: Access denied' });
    await expect(searchFilesTool(fx.ctx, { pattern: 'KEY', path: 'docs/.env' })).resolves.toMatchObject({ success: false, error: expect.stringMatching(/secret file/i) });
    // The user's own setting lets them through, as it does for read_file.
    const allowed = await searchFilesTool({ ...fx.ctx, allowSecretFiles: true }, { pattern: 'hunter2' });
    expect(allowed.matches).toEqual(['docs/.env:1: GOALS_KEY=hunter2']);
  });

  test('search_files: binary, too large and hard-linked files are skipped and counted; node_modules and .git are not entered', async () => {
    await writeTree(fx.project, {
      'docs/logo.png': Buffer.concat([Buffer.from('Goals'), Buffer.from([0x00, 0x01])]),
      'docs/big.md': `Goals\n${'x'.repeat(2000)}\n`,
      'node_modules/pkg/readme.md': 'Goals\n',
      '.git/description': 'Goals\n',
    });
    await fs.link(path.join(fx.project, 'docs', 'notes.txt'), path.join(fx.project, 'docs', 'notes-link.txt'));
    const result = await searchFilesTool({ ...fx.ctx, maxReadBytes: 1000 }, { pattern: 'Goals' });
    expect(result).toEqual({
      success: true,
      matches: ['docs/deep/epic-1.md:2: Goals: none yet', 'docs/prd.md:6: ## Goals'],
      searched: expect.any(Number),
      note: '4 files were skipped (binary, too large or not readable as text).',
    });
  });

  test('search_files: at most MAX_MATCHES matches, long lines cut around the match', async () => {
    await writeTree(fx.project, { 'many/lines.txt': Array.from({ length: MAX_MATCHES + 50 }, (_, i) => `hit ${i}`).join('\n') });
    const many = await searchFilesTool(fx.ctx, { pattern: '^hit', path: 'many' });
    expect(many.matches).toHaveLength(MAX_MATCHES);
    expect((many.matches as string[]).at(-1)).toBe(`many/lines.txt:${MAX_MATCHES}: hit ${MAX_MATCHES - 1}`);
    expect(many.note).toBe('Stopped at 200 matches: narrow the pattern, path or glob to see the rest.');

    await writeTree(fx.project, { 'long/line.txt': `${'a'.repeat(5000)}NEEDLE${'b'.repeat(5000)}\n` });
    const long = await searchFilesTool(fx.ctx, { pattern: 'NEEDLE', path: 'long' });
    const [match] = long.matches as string[];
    const text = match!.slice('long/line.txt:1: '.length);
    expect(text).toContain('NEEDLE');
    expect(text.startsWith('…') && text.endsWith('…')).toBe(true);
    expect(text.length).toBe(MAX_LINE_CHARS + 2);
  });

  test('search_files: bad arguments and unknown variables are errors naming them', async () => {
    await expect(searchFilesTool(fx.ctx, { pattern: 'x', ignore_case: 'yes' })).resolves.toEqual({
      success: false,
      error: 'Invalid arguments for search_files: ignore_case: expected boolean, received string',
    });
    await expect(searchFilesTool(fx.ctx, { pattern: 'x', path: '{stories}' })).resolves.toMatchObject({ success: false, error: expect.stringMatching(/^Config variable not found: stories\n/) });
    await expect(searchFilesTool(fx.ctx, { pattern: 'x', path: 'nope' })).resolves.toMatchObject({ success: false, error: expect.stringMatching(/^ENOENT: no such file or directory/) });
  });
});
