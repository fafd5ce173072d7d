/**
 * Every relative link in docs/ and README.md leads somewhere: to a file or folder of the
 * repository, and, for a link to a heading of a page (`page.md#anchor`), to a heading that page
 * has (its explicit `{#id}`, or the id the site generator makes from its text). Links into the
 * folders the site build generates (the client API) are checked by that build's own dead-link check.
 */
import fs from 'node:fs';
import path from 'node:path';
import { docFiles, GENERATED, links, prose, ROOT } from './docs-files';
import { startsWithTag } from '../../../scripts/docs/markdown';

/** The ids of a page's headings, as the site generator (VitePress) makes them. */
export function headingIds(file: string): Set<string> {
  const ids = new Set<string>();
  for (const line of prose(file).split('\n')) {
    const heading = line.match(/^#{1,6}\s+(.*?)\s*$/);
    if (!heading) continue;
    const explicit = heading[1]!.match(/\{#([^}]+)\}\s*$/);
    ids.add(explicit ? explicit[1]! : slugify(heading[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '')));
  }
  return ids;
}

/** VitePress's slug of a heading's text (@mdit-vue/shared's `slugify`). */
function slugify(text: string): string {
  return (
    text
      .normalize('NFKD')
      .replace(/[\u0300-\u036F]/g, '')
      // eslint-disable-next-line no-control-regex -- control characters are dropped, as VitePress drops them
      .replace(/[\u0000-\u001f]/g, '')
      .replace(/[\s~`!@#$%^&*()\-_+=[\]{}|\\;:"'“”‘’<>,.?/]+/g, '-')
      .replace(/-{2,}/g, '-')
      .replace(/^-+|-+$/g, '')
      .replace(/^(\d)/, '_$1')
      .toLowerCase()
  );
}

test('docs links: every relative link in docs/ and README.md resolves to a file, and every anchor to a heading', () => {
  const problems: string[] = [];
  let checked = 0;
  for (const file of docFiles()) {
    for (const { line, text: target } of links(file)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('/')) continue; // a URL, or a path of the site
      checked++;
      const [rawPath = '', anchor] = target.split('#');
      const resolved = rawPath === '' ? path.join(ROOT, file) : path.resolve(path.dirname(path.join(ROOT, file)), decodeURI(rawPath));
      const inDocs = path.relative(path.join(ROOT, 'docs'), resolved).split(path.sep).join('/');
      if (GENERATED.some((folder) => inDocs === folder || inDocs.startsWith(`${folder}/`))) continue;
      if (!fs.existsSync(resolved)) {
        problems.push(`${file}:${line}: ${target}: no such file`);
        continue;
      }
      if (anchor && resolved.endsWith('.md') && !headingIds(path.relative(ROOT, resolved)).has(anchor)) problems.push(`${file}:${line}: ${target}: no heading #${anchor}`);
    }
  }
  expect(problems).toEqual([]);
  expect(checked).toBeGreaterThan(100);
});

test('docs links: heading ids are made as the site makes them', () => {
  expect(slugify('Workers on several hosts')).toBe('workers-on-several-hosts');
  expect(slugify('Source agents (*.agent.yaml)')).toBe('source-agents-agent-yaml');
  expect(slugify('Connecting to Temporal')).toBe('connecting-to-temporal');
});

test('docs pages: no line of prose starts with a tag-like <word>, which the site generator would take for HTML', () => {
  const problems = docFiles()
    .filter((file) => file.startsWith('docs/'))
    .flatMap((file) =>
      prose(file)
        .split('\n')
        .map((line, i) => ({ line, at: `${file}:${i + 1}` }))
        .filter(({ line }) => startsWithTag(line))
        .map(({ line, at }) => `${at}: ${line.trim()} (join it to the line before)`),
    );
  expect(problems).toEqual([]);
});
