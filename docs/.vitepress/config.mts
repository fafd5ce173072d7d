/**
 * The documentation site: VitePress over docs/, with its own full-text search (local, built into
 * the site: nothing is fetched at run time) and its dead-link check, which fails the build.
 * `npm run docs:build` (scripts/docs/build-site.sh) generates the client API reference (TypeDoc, into docs/reference/api/) and
 * the pages of the HTTP API (serve/API.md) and the examples (examples/*\/README.md) first; these are
 * build outputs, not committed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { defineConfig, type DefaultTheme } from 'vitepress';

const docs = path.resolve(__dirname, '..');

/** The client API's sidebar, as TypeDoc wrote it (absent before `npm run docs:build`). */
function apiSidebar(): DefaultTheme.SidebarItem[] {
  const file = path.join(docs, 'reference', 'api', 'typedoc-sidebar.json');
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as DefaultTheme.SidebarItem[]) : [];
}

/** The examples' pages, as scripts/docs/examples-pages.ts wrote them. */
function exampleItems(): DefaultTheme.SidebarItem[] {
  const folder = path.join(docs, 'examples');
  if (!fs.existsSync(folder)) return [];
  return fs
    .readdirSync(folder)
    .filter((name) => name.endsWith('.md') && name !== 'index.md')
    .sort()
    .map((name) => ({ text: name.replace(/\.md$/, ''), link: `/examples/${name.replace(/\.md$/, '')}` }));
}

const guide: DefaultTheme.SidebarItem[] = [
  { text: 'Tutorial', items: [{ text: 'Getting started', link: '/tutorial/getting-started' }] },
  {
    text: 'How-to guides',
    items: [
      { text: 'Run BMAD projects and Agent Skills', link: '/guides/bmad-and-skills' },
      { text: 'A human in the loop: approvals, questions, chat', link: '/guides/human-in-the-loop' },
      { text: 'Context and budgets', link: '/guides/context-and-budgets' },
      { text: 'Tools, MCP servers and commands', link: '/guides/tools-mcp-commands' },
      { text: 'Many agents: delegation, batches, schedules', link: '/guides/many-agents' },
      { text: 'The web app and HTTP API', link: '/guides/web-app' },
      { text: 'Observability: Web UI, metrics, traces, live output', link: '/guides/observability' },
      { text: 'Evaluating changes', link: '/guides/evaluating-changes' },
      { text: 'Use Loopwright from a program', link: '/guides/from-a-program' },
      { text: 'Deployment: servers, clusters, Cloud, encryption', link: '/guides/deployment' },
      { text: 'Troubleshooting: every error', link: '/troubleshooting' },
    ],
  },
  {
    text: 'Concepts',
    items: [
      { text: 'Sessions and limits', link: '/concepts/sessions' },
      { text: 'Bundles and agents', link: '/concepts/bundles' },
      { text: 'Security', link: '/concepts/security' },
      { text: 'Architecture', link: '/concepts/architecture' },
      { text: 'Performance', link: '/concepts/performance' },
    ],
  },
  {
    text: 'Reference',
    items: [
      { text: 'Command line', link: '/reference/cli' },
      { text: 'Configuration', link: '/reference/configuration' },
      { text: 'Client API', link: '/reference/api/' },
      { text: 'HTTP API', link: '/reference/http-api' },
      { text: 'Troubleshooting', link: '/troubleshooting' },
    ],
  },
  {
    text: 'Project',
    items: [
      { text: 'Examples', link: '/examples/' },
      { text: 'Contributing', link: '/contributing' },
    ],
  },
];

export default defineConfig({
  title: 'Loopwright',
  description: 'AI agents (BMAD projects, Agent Skills, bundles) as durable Temporal workflows, in TypeScript',
  cleanUrls: false,
  lastUpdated: false,
  // Dead links fail the build; the Web UI and servers on this machine are addresses the reader opens, not pages.
  ignoreDeadLinks: [/^https?:\/\/(localhost|127\.0\.0\.1)([:/]|$)/],
  // Generated folders of their own: TypeDoc's README index is not a page here.
  srcExclude: ['**/README.md'],
  markdown: {
    config(md) {
      // Links to files beside the code, right when docs/ is read in the repository, go to their pages here: an
      // example's README (`../examples/batch-jsonl/README.md`) and the HTTP API (`../serve/API.md`).
      md.core.ruler.after('inline', 'loopwright-repository-links', (state) => {
        for (const token of state.tokens) {
          for (const child of token.children ?? []) {
            const href = child.type === 'link_open' ? child.attrGet('href') : null;
            const example = href?.match(/^(?:\.\.\/)+examples\/(?:([^/#]+)\/(?:README\.md)?)?(#.*)?$/);
            if (example) child.attrSet('href', example[1] ? `/examples/${example[1]}.md${example[2] ?? ''}` : '/examples/');
            const api = href?.match(/^(?:\.\.\/)+serve\/API\.md(#.*)?$/);
            if (api) child.attrSet('href', `/reference/http-api.md${api[1] ?? ''}`);
          }
        }
      });
    },
  },
  vite: {
    // The local search index is one chunk by design (loaded when the search box opens), and it holds every page,
    // the client API's too: it passes Vite's 500 kB warning. Its size is printed with the build's chunks.
    build: { chunkSizeWarningLimit: 4096 },
  },
  themeConfig: {
    nav: [
      { text: 'Getting started', link: '/tutorial/getting-started' },
      { text: 'Guides', link: '/guides/bmad-and-skills' },
      { text: 'Reference', link: '/reference/cli' },
      { text: 'Troubleshooting', link: '/troubleshooting' },
    ],
    sidebar: {
      '/reference/api/': [{ text: 'Client API', link: '/reference/api/', items: apiSidebar() }, ...guide],
      '/examples/': [{ text: 'Examples', link: '/examples/', items: exampleItems() }, ...guide],
      '/': guide,
    },
    outline: { level: [2, 3] },
    search: { provider: 'local' },
  },
});
