/**
 * The checklist parser on real BMAD checklists (read from the corpus on disk: a missing corpus
 * fails these tests, it does not skip them) and on crafted edge cases.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { MAX_ITEM_TEXT_CHARS, parseChecklist } from '../../../activities/verify/checklist';
import { MAX_CHECKLIST_ITEMS } from '../../../common/verify-types';
import { CORPUS } from '../../support/corpus';

const WORKFLOWS = path.join(CORPUS, 'v6.0.0-alpha.5', 'bmad', 'bmm', 'workflows');
const read = (rel: string): string => readFileSync(path.join(WORKFLOWS, rel, 'checklist.md'), 'utf8');

/** Every checklist.md below `dir`. */
function checklists(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return checklists(full);
    return name === 'checklist.md' ? [full] : [];
  });
}

describe('parseChecklist on the corpus', () => {
  it('sprint-planning: task items with their nearest heading; the ✓ lines of a plain code block are no items', () => {
    const parsed = parseChecklist(read('4-implementation/sprint-planning'));
    expect(parsed.kind).toBe('task');
    expect(parsed.total).toBe(7);
    expect(parsed.items[0]).toEqual({ text: 'Every epic found in epic\\*.md files appears in sprint-status.yaml', section: 'Complete Coverage Check' });
    expect(parsed.items.at(-1)!.section).toBe('Final Check');
    expect(parsed.items.some((item) => item.text.includes('✓'))).toBe(false);
  });

  it('create-story: task items inside its ```xml wrapper, nested ones too, under numbered headings', () => {
    const parsed = parseChecklist(read('4-implementation/create-story'));
    expect(parsed.kind).toBe('task');
    expect(parsed.total).toBe(81);
    expect(parsed.items[0]).toEqual({ text: 'Load story file: {{story_file_path}}', section: '1. Load Story and Extract Metadata' });
    expect(parsed.items.map((item) => item.text)).toContain('References to NEW files from previous story → If missing → **MAJOR ISSUE**');
  });

  it('testarch/ci: numbered `1. [ ]` items count, and `- [ ]` ones', () => {
    const parsed = parseChecklist(read('testarch/ci'));
    expect(parsed.total).toBe(119);
    expect(parsed.items.map((item) => item.text)).toEqual(expect.arrayContaining(['Commit CI configuration', 'Run `gate` workflow for quality gates', 'All quality checks passed']));
    expect(parsed.items.find((item) => item.text === 'Commit CI configuration')!.section).toBe('Post-Workflow Actions');
  });

  it('dev-story: the YAML front matter lists are skipped', () => {
    const parsed = parseChecklist(read('4-implementation/dev-story'));
    expect(parsed.total).toBe(13);
    expect(parsed.items[0]!.section).toBe('Tasks Completion');
    expect(parsed.items.some((item) => item.text.includes('Story markdown file with Tasks'))).toBe(false);
  });

  it('solutioning-gate-check: blanks to fill in (`- [ ] ***`) are no items', () => {
    const parsed = parseChecklist(read('3-solutioning/solutioning-gate-check'));
    expect(parsed.total).toBe(86);
    expect(parsed.items.every((item) => /[A-Za-z0-9]/.test(item.text))).toBe(true);
  });

  it('epic-tech-context: a checklist written as <item> elements in an xml fence falls back to them', () => {
    const parsed = parseChecklist(read('4-implementation/epic-tech-context'));
    expect(parsed.kind).toBe('xml');
    expect(parsed.total).toBe(11);
    expect(parsed.items[0]).toEqual({ text: 'Overview clearly ties to PRD goals', section: 'Tech Spec Validation Checklist' });
  });

  it('correct-course: no task boxes at the start of a line, so its plain list items are the items', () => {
    const parsed = parseChecklist(read('4-implementation/correct-course'));
    expect(parsed.kind).toBe('list');
    expect(parsed.total).toBe(34);
    expect(parsed.items[0]).toEqual({ text: 'Technical limitation discovered during implementation', section: 'Change Navigation Checklist' });
  });

  it('testarch/trace: longer than MAX_CHECKLIST_ITEMS; the first ones are kept and the total told', () => {
    const parsed = parseChecklist(read('testarch/trace'), MAX_CHECKLIST_ITEMS);
    expect(parsed.total).toBe(329);
    expect(parsed.items).toHaveLength(MAX_CHECKLIST_ITEMS);
    expect(parsed.items[0]).toEqual({ text: 'Acceptance criteria are available (from story file OR inline)', section: 'Prerequisites Validation' });
  });

  it('every checklist of both corpus versions has items, none empty', () => {
    const files = [...checklists(path.join(CORPUS, 'v6.0.0-alpha.5')), ...checklists(path.join(CORPUS, 'v6.0.0-alpha.0'))];
    expect(files.length).toBeGreaterThanOrEqual(35);
    for (const file of files) {
      const parsed = parseChecklist(readFileSync(file, 'utf8'));
      expect([file, parsed.total > 0]).toEqual([file, true]);
      expect(parsed.items.every((item) => item.text.trim() !== '' && item.text.length <= MAX_ITEM_TEXT_CHARS)).toBe(true);
    }
  });
});

describe('parseChecklist edge cases', () => {
  it('markers, boxes and numbering: -, *, +, 1., 2), [ ], [x], [X]; the box and marker are dropped', () => {
    const text = ['- [ ] one', '* [x] two', '+ [X] three', '1. [ ] four', '2) [ ] five', '  - [ ] six, nested', '-[ ] not an item', '- [] not one either', '- [y] nor this'].join('\n');
    const parsed = parseChecklist(text);
    expect(parsed.items.map((item) => item.text)).toEqual(['one', 'two', 'three', 'four', 'five', 'six, nested']);
    expect(parsed.items.every((item) => item.section === undefined)).toBe(true);
  });

  it('sections: the nearest heading of any level, trailing #s and bold dropped; a heading in a plain code block is ignored', () => {
    const text = ['# Title', '- [ ] a', '### **Deep** ##', '- [ ] b', '```md', '## Not a heading', '- [ ] not an item', '```', '- [ ] c', '####### seven is no heading', '- [ ] d'].join('\n');
    expect(parseChecklist(text).items).toEqual([
      { text: 'a', section: 'Title' },
      { text: 'b', section: 'Deep' },
      { text: 'c', section: 'Deep' },
      { text: 'd', section: 'Deep' },
    ]);
  });

  it('a wrapped, indented line continues the item; a blank line or a new marker ends it', () => {
    const text = ['- [ ] first part', '      and its second line', '', '  not a continuation', '- [ ] next', 'flush text is none'].join('\n');
    expect(parseChecklist(text).items.map((item) => item.text)).toEqual(['first part and its second line', 'next']);
  });

  it('task items win over plain list items; plain ones count only when there are no task items', () => {
    expect(parseChecklist('- plain\n- [ ] task\n').items.map((item) => item.text)).toEqual(['task']);
    const plain = parseChecklist('## Checks\n- one\n1. two\n---\n* * *\n');
    expect(plain.kind).toBe('list');
    expect(plain.items).toEqual([
      { text: 'one', section: 'Checks' },
      { text: 'two', section: 'Checks' },
    ]);
  });

  it('no items at all: an empty result, kind null; CRLF line ends are read', () => {
    expect(parseChecklist('# Only a heading\n\nSome prose.\n')).toEqual({ items: [], total: 0, kind: null });
    expect(parseChecklist('')).toEqual({ items: [], total: 0, kind: null });
    expect(parseChecklist('# H\r\n- [ ] a\r\n- [ ] b\r\n').items).toEqual([
      { text: 'a', section: 'H' },
      { text: 'b', section: 'H' },
    ]);
  });

  it('max keeps the first items; an overlong item is cut', () => {
    const text = Array.from({ length: 10 }, (_, i) => `- [ ] item ${i + 1}`).join('\n');
    const parsed = parseChecklist(text, 3);
    expect(parsed.total).toBe(10);
    expect(parsed.items.map((item) => item.text)).toEqual(['item 1', 'item 2', 'item 3']);
    const long = parseChecklist(`- [ ] ${'x'.repeat(5000)}`).items[0]!.text;
    expect(long).toHaveLength(MAX_ITEM_TEXT_CHARS);
    expect(long.endsWith('…')).toBe(true);
  });

  it('<item> lines are read (entities decoded) only when there are no list items', () => {
    expect(parseChecklist('<item>A &amp; B &lt;ok&gt;</item>\n<item id="2">Second</item>\n<item></item>\n').items.map((item) => item.text)).toEqual(['A & B <ok>', 'Second']);
    expect(parseChecklist('<item>x</item>\n- [ ] task\n').items.map((item) => item.text)).toEqual(['task']);
  });
});
