/**
 * Small Markdown helpers the generated pages of docs/ share: code spans, table rows, text made safe
 * for the site generator (which reads `<…>` outside code as HTML and `{{…}}` as a template), and
 * the note that says a page is generated.
 */

/** The command that writes every generated page, as the pages and the tests name it. */
export const GEN_DOCS_COMMAND = 'npx ts-node --transpile-only scripts/gen-docs.ts';

/** `text` as a code span, with a longer fence when it holds backticks. */
export function code(text: string): string {
  const fence = text.includes('`') ? '``' : '`';
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

/** One table row; `|` in a cell is escaped. */
export function row(cells: readonly string[]): string {
  return `| ${cells.map((cell) => cell.replace(/\|/g, '\\|').replace(/\n/g, ' ')).join(' | ')} |`;
}

/** Prose for a page: `<`, `>` and `{{` outside code spans are escaped so they show as written. */
export function escapeText(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\{\{/g, '&#123;&#123;')))
    .join('');
}

/** The comment at the top of a generated page. */
export function generatedNote(source: string): string {
  return `<!-- Generated from ${source} by \`${GEN_DOCS_COMMAND}\`; do not edit by hand. -->`;
}

/**
 * A Markdown text whose prose lines never start with a tag-like `<word` (an inline code span
 * continued on the next line, `` `loopwright status\n<id>` ``): the site generator takes such a line
 * for the start of an HTML block. Each is joined to the line before it; code blocks are left alone.
 */
export function joinTagLines(markdown: string): string {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const marker = line.match(/^\s*(```+|~~~+)/)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) fence = fence === undefined ? marker : undefined;
    else if (fence === undefined && startsWithTag(line) && out.length > 0 && out[out.length - 1]!.trim() !== '') {
      out[out.length - 1] = `${out[out.length - 1]!.trimEnd()} ${line.trim()}`;
      continue;
    }
    out.push(line);
  }
  return out.join('\n');
}

/** A prose line that starts with `<word` or `</word`, other than a comment or the `<small>` the generated pages use. */
export function startsWithTag(line: string): boolean {
  return /^\s*<\/?[A-Za-z]/.test(line) && !/^\s*<\/?small>/.test(line);
}
