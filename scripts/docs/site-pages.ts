/**
 * Makes the site's pages whose text lives outside docs/, before the site is built: the HTTP API
 * (serve/API.md, beside its code, into docs/reference/http-api.md) and the runnable examples (their
 * READMEs, examples/<name>/README.md, into docs/examples/<name>.md, and an index). The pages are a
 * build output, not committed: each file stays the one source, read beside its code. A link in a
 * README to another example or to a page of docs/ becomes a link of the site; a link to a file of
 * the example (its code) becomes the file's path, since the site does not serve the code.
 *
 *   npx ts-node --transpile-only scripts/docs/site-pages.ts
 */
import fs from 'node:fs';
import path from 'node:path';
import { joinTagLines } from './markdown';

const ROOT = path.join(__dirname, '..', '..');
const EXAMPLES = path.join(ROOT, 'examples');
const DOCS = path.join(ROOT, 'docs');
const OUT = path.join(DOCS, 'examples');

/** The examples that have a README, by folder name, sorted. */
export function exampleNames(): string[] {
  if (!fs.existsSync(EXAMPLES)) return [];
  return fs
    .readdirSync(EXAMPLES, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(EXAMPLES, entry.name, 'README.md')))
    .map((entry) => entry.name)
    .sort();
}

/** A README's links made right for its page at docs/examples/<name>.md. */
export function rewriteLinks(markdown: string, name: string): string {
  const folder = path.join(EXAMPLES, name);
  let fence = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) fence = !fence;
      if (fence) return line;
      return line.replace(/(!?)\[([^\]]*)\]\(([^)\s]+)\)/g, (whole, bang: string, text: string, target: string) => {
        if (bang || /^[a-z]+:|^#|^\//i.test(target)) return whole;
        const [file = '', anchor] = target.split('#');
        const resolved = path.resolve(folder, decodeURI(file));
        const hash = anchor ? `#${anchor}` : '';
        const inDocs = path.relative(DOCS, resolved);
        if (!inDocs.startsWith('..') && resolved.endsWith('.md')) return `[${text}](${path.relative(OUT, resolved).split(path.sep).join('/')}${hash})`;
        const inExamples = path.relative(EXAMPLES, resolved).split(path.sep);
        if (!inExamples[0]?.startsWith('..')) {
          if (inExamples[0] === '' || inExamples[0] === 'README.md') return `[${text}](./index.md${hash})`;
          if (inExamples.length === 1 || (inExamples.length === 2 && inExamples[1] === 'README.md')) return `[${text}](./${inExamples[0]}.md${hash})`;
        }
        // A file of the repository (the example's code): its path, not a link the site cannot serve.
        const shown = path.relative(ROOT, resolved).split(path.sep).join('/');
        return text.replace(/`/g, '') === shown || text.replace(/`/g, '') === file ? `\`${shown}\`` : `${text} (\`${shown}\`)`;
      });
    })
    .join('\n');
}

/** The first heading and the first paragraph of a README. */
function titleAndSummary(markdown: string, name: string): { title: string; summary: string } {
  const title = markdown.match(/^#\s+(.+)$/m)?.[1]?.trim() ?? name;
  const body = markdown.replace(/^#\s+.+$/m, '').trim();
  const summary = body.split(/\n\s*\n/).find((paragraph) => !/^(#|```|<!--|\||-|\d+\.)/.test(paragraph.trim())) ?? '';
  return { title, summary: summary.replace(/\s*\n\s*/g, ' ') };
}

/** Write docs/examples/: a page per example and the index; returns the names. */
export function writeExamplePages(): string[] {
  fs.rmSync(OUT, { recursive: true, force: true });
  fs.mkdirSync(OUT, { recursive: true });
  const names = exampleNames();
  const entries = names.map((name) => {
    const markdown = fs.readFileSync(path.join(EXAMPLES, name, 'README.md'), 'utf8');
    fs.writeFileSync(path.join(OUT, `${name}.md`), joinTagLines(rewriteLinks(markdown, name)));
    return { name, ...titleAndSummary(rewriteLinks(markdown, name), name) };
  });
  const index = [
    '# Examples',
    '',
    'Small runnable programs, each in its own folder of `examples/` with its README (shown here); CI runs every one.',
    '',
    ...(entries.length > 0 ? entries.map(({ name, title, summary }) => `- [${title}](./${name}.md) (\`examples/${name}/\`)${summary ? `: ${summary}` : ''}`) : ['(No example has a README yet.)']),
    '',
  ];
  fs.writeFileSync(path.join(OUT, 'index.md'), index.join('\n'));
  return names;
}

/** Write docs/reference/http-api.md from serve/API.md. */
export function writeHttpApiPage(): void {
  const text = fs.readFileSync(path.join(ROOT, 'serve', 'API.md'), 'utf8');
  const note = '<!-- Made from serve/API.md by scripts/docs/site-pages.ts when the site is built; edit serve/API.md. -->';
  fs.writeFileSync(path.join(DOCS, 'reference', 'http-api.md'), `${note}\n\n${joinTagLines(text)}`);
}

if (require.main === module) {
  writeHttpApiPage();
  const names = writeExamplePages();
  process.stdout.write(`docs/reference/http-api.md; docs/examples/: ${names.length} example page(s)${names.length > 0 ? `: ${names.join(', ')}` : ''}\n`);
}
