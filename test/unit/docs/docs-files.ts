/**
 * What the docs tests read: the Markdown pages of docs/ (not the folders the site build generates)
 * and README.md, with their fenced code blocks, inline code spans and links, each with its line.
 */
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.join(__dirname, '..', '..', '..');
export const DOCS = path.join(ROOT, 'docs');

/** Folders of docs/ that `npm run docs:build` writes (not committed), and the site generator's own. */
export const GENERATED = ['reference/api', 'reference/http-api.md', 'examples', '.vitepress'];

/** Every page of docs/ and README.md, as paths relative to the repository. */
export function docFiles(): string[] {
  const files: string[] = ['README.md'];
  const walk = (folder: string): void => {
    for (const entry of fs.readdirSync(path.join(ROOT, folder), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const at = path.posix.join(folder, entry.name);
      if (GENERATED.some((g) => at === `docs/${g}`)) continue;
      if (entry.isDirectory()) walk(at);
      else if (entry.name.endsWith('.md')) files.push(at);
    }
  };
  walk('docs');
  return files;
}

/** A piece of a page, and the line it starts on. */
export interface Located {
  file: string;
  line: number;
  text: string;
}

/** A line of a code block, and the block's language (`sh`, `text`, …; empty when the fence names none). */
export interface CodeLine extends Located {
  lang: string;
}

/** The lines of the page's fenced code blocks, joined across `\` line continuations. */
export function codeBlockLines(file: string): CodeLine[] {
  const out: CodeLine[] = [];
  let fence: string | undefined;
  let lang = '';
  let pending: CodeLine | undefined;
  fs.readFileSync(path.join(ROOT, file), 'utf8')
    .split('\n')
    .forEach((raw, i) => {
      const opening = raw.match(/^\s*(```+|~~~+)\s*(\S*)/);
      const marker = opening?.[1];
      if (marker && (fence === undefined || marker.startsWith(fence))) {
        lang = fence === undefined ? opening[2]! : '';
        fence = fence === undefined ? marker : undefined;
        return;
      }
      if (fence === undefined) return;
      const text = pending ? `${pending.text} ${raw.trim()}` : raw;
      const entry = { file, line: pending?.line ?? i + 1, text, lang };
      if (/\\\s*$/.test(raw)) pending = { ...entry, text: text.replace(/\\\s*$/, '') };
      else {
        pending = undefined;
        out.push(entry);
      }
    });
  return out;
}

/** The page's text outside fenced code blocks (those lines blanked, so line numbers hold). */
export function prose(file: string): string {
  let fence: string | undefined;
  return fs
    .readFileSync(path.join(ROOT, file), 'utf8')
    .split('\n')
    .map((line) => {
      const marker = line.match(/^\s*(```+|~~~+)/)?.[1];
      if (marker && (fence === undefined || marker.startsWith(fence))) {
        fence = fence === undefined ? marker : undefined;
        return '';
      }
      return fence === undefined ? line : '';
    })
    .join('\n');
}

/** The inline code spans of the page's prose. */
export function inlineCode(file: string): Located[] {
  const text = prose(file);
  return [...text.matchAll(/(`+)([^`]+?)\1/g)].map((m) => ({ file, line: text.slice(0, m.index).split('\n').length, text: m[2]!.replace(/\s*\n\s*/g, ' ').trim() }));
}

/** The links (and images) of the page's prose, outside code spans. */
export function links(file: string): Located[] {
  const text = prose(file).replace(/(`+)[^`]+?\1/g, (span) => span.replace(/[^\n]/g, ' '));
  return [...text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => ({ file, line: text.slice(0, m.index).split('\n').length, text: m[1]! }));
}
