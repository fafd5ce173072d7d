/**
 * The approval preview of an edit: a compact unified diff of its old text against its new text,
 * bounded in line length and in size whatever the texts (it is computed in workflow code).
 */
import type { ToolCall } from '../../../common/messages';
import { editDiff, MAX_DIFF_CHARS } from '../../../workflows/turn/edit-diff';
import { previewOf } from '../../../workflows/turn/approvals';

const call = (args: unknown): ToolCall => ({ id: 'c1', type: 'function', function: { name: 'edit_file', arguments: JSON.stringify(args) } });

describe('edit diff', () => {
  test('editDiff: the changed lines with two lines of context, one hunk per group of changes, no "No newline" markers', () => {
    const before = ['---', 'title: PRD', 'stepsCompleted: []', 'status: draft', '---', '# PRD', '', 'a', 'b', 'c', 'd', 'Owner: Sam'].join('\n');
    const after = before.replace('stepsCompleted: []', 'stepsCompleted: [1, 2]').replace('Owner: Sam', 'Owner: Ada');
    expect(editDiff(before, after, 200)).toBe(
      ['@@ -1,5 +1,5 @@', ' ---', ' title: PRD', '-stepsCompleted: []', '+stepsCompleted: [1, 2]', ' status: draft', ' ---', '@@ -10,3 +10,3 @@', ' c', ' d', '-Owner: Sam', '+Owner: Ada'].join('\n'),
    );
  });

  test('editDiff: a deletion shows the removed lines; an insertion the added ones', () => {
    expect(editDiff('## Draft\nremove me\n', '', 200)).toBe('@@ -1,2 +0,0 @@\n-## Draft\n-remove me');
    expect(editDiff('## Goals\n', '## Goals\n- Ship it\n', 200)).toBe('@@ -1,1 +1,2 @@\n ## Goals\n+- Ship it');
  });

  test('editDiff: long lines are cut, a long diff is cut at MAX_DIFF_CHARS with a count of the lines left out', () => {
    expect(editDiff('x'.repeat(500), 'y', 50)).toBe(`@@ -1,1 +1,1 @@\n-${'x'.repeat(49)}…\n+y`);
    const before = Array.from({ length: 400 }, (_, i) => `line ${i}`).join('\n');
    const after = Array.from({ length: 400 }, (_, i) => `LINE ${i}`).join('\n');
    const diff = editDiff(before, after, 200);
    expect(diff.length).toBeLessThanOrEqual(MAX_DIFF_CHARS + 40);
    expect(diff).toMatch(/^@@ -1,400 \+1,400 @@\n-line 0\n-line 1\n/);
    const left = Number(/… (\d+) more diff lines$/.exec(diff)?.[1]);
    expect(left + diff.split('\n').length - 1).toBe(801);
  });

  test('editDiff: texts too different for the bounded diff show every old line removed and every new line added', () => {
    // Far more changes than the diff looks for: it gives up at once and says the whole text changes.
    const before = Array.from({ length: 3000 }, (_, i) => `old ${i}`).join('\n');
    const after = Array.from({ length: 3000 }, (_, i) => `new ${i}`).join('\n');
    const diff = editDiff(before, after, 200);
    expect(diff).toMatch(/^@@ -1,3000 \+1,3000 @@\n-old 0\n/);
    expect(diff).toMatch(/… \d+ more diff lines$/);
  });

  test('previewOf: an edit is a size line, with its modes, then the diff', () => {
    const args = { file_path: '{output_folder}/prd.md', old_text: 'status: draft\nsteps: []\n', new_text: 'status: draft\nsteps: [1]\n' };
    expect(previewOf(call(args), { output_folder: '/out' })).toEqual({
      path: '/out/prd.md',
      preview: 'replace 24 bytes with 25 bytes:\n@@ -1,2 +1,2 @@\n status: draft\n-steps: []\n+steps: [1]',
    });
    expect(previewOf(call({ ...args, replace_all: true }), {}).preview).toMatch(/^\[replace_all\] replace 24 bytes with 25 bytes:\n@@ /);
  });
});
