/**
 * Reading a BMAD checklist (markdown) into the items the verifier judges. Pure: text in, items out.
 *
 * - Task items are what a checklist checks: `- [ ] text`, `* [ ]`, `+ [ ]`, ticked `[x]` / `[X]`
 *   (a ticked box in the checklist file is still an item to check), and numbered `1. [ ]` / `1) [ ]`,
 *   at any indentation. The text is kept without the marker and the box.
 * - Each item's `section` is the nearest heading above it (`#` to `######`).
 * - A checklist with no task items falls back to plain list items (`- text`, `1. text`); one with
 *   neither falls back to `<item>text</item>` lines (checklists written as XML).
 * - Lines inside fenced code blocks (``` or ~~~) are examples, never items nor headings, except in
 *   the `<item>` fallback, where the XML usually sits inside a fence, and in a fence marked `xml`:
 *   BMAD wraps a checklist's own content in one (markdown items among XML-like tags), so its lines
 *   are read like the rest.
 * - A YAML front matter block at the top is skipped; items whose text has no letter or digit
 *   (blanks to fill in, `- [ ] ***`) are not items.
 * - A line that follows an item, indented, and is not itself a list item, heading or fence,
 *   continues the item's text (a wrapped line).
 */

/** One item to check, in checklist order. */
export interface ChecklistItem {
  text: string;
  /** The nearest heading above the item, when there is one. */
  section?: string;
}

/** How the items were found: task boxes, plain list items, or `<item>` elements. */
export type ChecklistKind = 'task' | 'list' | 'xml';

/** A parsed checklist. */
export interface ParsedChecklist {
  /** The items kept (at most the `max` given to parseChecklist). */
  items: ChecklistItem[];
  /** How many items the checklist has in all. */
  total: number;
  /** How the items were found; null when there are none. */
  kind: ChecklistKind | null;
}

/** Longest item text kept, in characters (a wrapped paragraph stops growing there). */
export const MAX_ITEM_TEXT_CHARS = 1_000;

const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const TASK = /^([ \t]*)(?:[-*+]|\d{1,9}[.)])[ \t]+\[[ xX]\](?:[ \t]+(.*))?$/;
const LIST = /^([ \t]*)(?:[-*+]|\d{1,9}[.)])[ \t]+(.*)$/;
const XML_ITEM = /^[ \t]*<item(?:\s[^>]*)?>(.*?)<\/item>[ \t]*$/;
/** Text that says something: a letter or a digit. */
const WORDY = /[\p{L}\p{N}]/u;
/** A thematic break (`---`, `***`, `* * *`): looks like a list item to LIST, but is none. */
const BREAK = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;

/** The checklist's items: task items, else plain list items, else `<item>` lines; the first `max` kept. */
export function parseChecklist(text: string, max: number = Number.POSITIVE_INFINITY): ParsedChecklist {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  for (const kind of ['task', 'list', 'xml'] as const) {
    const found = collect(lines, kind);
    if (found.length > 0) return { items: found.slice(0, Math.max(0, max)), total: found.length, kind };
  }
  return { items: [], total: 0, kind: null };
}

/** Items of one kind, in order. */
function collect(lines: readonly string[], kind: ChecklistKind): ChecklistItem[] {
  const items: ChecklistItem[] = [];
  const start = frontMatterEnd(lines);
  let section: string | undefined;
  /** The open fence: its marker, and whether its lines are read (`xml`). */
  let fence: { marker: string; container: boolean } | undefined;
  /** The item that a wrapped line would continue, and how far its marker is indented. */
  let open: { item: ChecklistItem; indent: number } | undefined;
  for (const line of lines.slice(start)) {
    const fenceMatch = FENCE.exec(line);
    if (fence !== undefined) {
      // A fence closes with the same character, at least as long, and nothing after it.
      if (fenceMatch && fenceMatch[1]![0] === fence.marker[0] && fenceMatch[1]!.length >= fence.marker.length && line.trim() === fenceMatch[1]) {
        fence = undefined;
        open = undefined;
        continue;
      }
      if (!fence.container) {
        if (kind === 'xml') addXml(line, section, items);
        continue;
      }
    } else if (fenceMatch) {
      const info = line.trim().slice(fenceMatch[1]!.length).trim().toLowerCase();
      fence = { marker: fenceMatch[1]!, container: info === 'xml' };
      open = undefined;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      section = cleanHeading(heading[2]!);
      open = undefined;
      continue;
    }
    if (kind === 'xml') {
      addXml(line, section, items);
      continue;
    }
    if (line.trim() === '' || BREAK.test(line)) {
      open = undefined;
      continue;
    }
    const task = TASK.exec(line);
    const list = task ? undefined : LIST.exec(line);
    if (task || list) {
      open = undefined;
      const match = (task ?? list)!;
      if (kind === 'list' ? !list : !task) continue;
      const body = (match[2] ?? '').trim();
      // A blank to fill in (`- [ ] ***`, `- [ ] ___`) checks nothing.
      if (!WORDY.test(body)) continue;
      const item: ChecklistItem = { text: cut(body), ...(section !== undefined ? { section } : {}) };
      items.push(item);
      open = { item, indent: indentOf(match[1]!) };
      continue;
    }
    if (open && indentOf(/^[ \t]*/.exec(line)![0]) > open.indent) {
      open.item.text = cut(`${open.item.text} ${line.trim()}`);
      continue;
    }
    open = undefined;
  }
  return items;
}

/** Index of the first line after a YAML front matter block (`---` on the first line to `---` or `...`), else 0. */
function frontMatterEnd(lines: readonly string[]): number {
  if (lines[0]?.trim() !== '---') return 0;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '---' || line === '...') return i + 1;
  }
  return 0;
}

function addXml(line: string, section: string | undefined, items: ChecklistItem[]): void {
  const match = XML_ITEM.exec(line);
  const body = match ? unescapeXml(match[1]!).trim() : '';
  if (WORDY.test(body)) items.push({ text: cut(body), ...(section !== undefined ? { section } : {}) });
}

/** A heading's text without emphasis markers around the whole of it. */
function cleanHeading(text: string): string | undefined {
  const trimmed = text
    .trim()
    .replace(/^(\*\*|__)(.*)\1$/, '$2')
    .trim();
  return trimmed === '' ? undefined : trimmed;
}

/** Columns of leading whitespace (a tab counts as 4). */
function indentOf(whitespace: string): number {
  let columns = 0;
  for (const ch of whitespace) columns += ch === '\t' ? 4 : 1;
  return columns;
}

function cut(text: string): string {
  return text.length <= MAX_ITEM_TEXT_CHARS ? text : `${text.slice(0, MAX_ITEM_TEXT_CHARS - 1)}…`;
}

function unescapeXml(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}
