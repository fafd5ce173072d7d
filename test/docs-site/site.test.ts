/**
 * The documentation site as a reader meets it: the built site (`npm run docs:build`) served over
 * HTTP and read in headless Chromium. Pages render (a heading, no error in the console, nothing
 * fetched from another host); from the navigation alone a reader reaches how to run a BMAD
 * project, approve a tool call, add an MCP server, put sessions on their own cluster, read a trace
 * and fix `LoopwrightBusy`; the built-in search finds `LoopwrightBusy`; and every link of every
 * built page leads to a file of the site.
 *
 * Runs in the docs phase of .ci/run (`npm run test:docs-site`, after the build), not in `npm test`.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { browserTestsSkipped, launchChromium, screenshot } from '../browser/chromium';
import { serveSite, SITE_DIR, siteFile } from './site-server';

const skipped = browserTestsSkipped('docs site');

let site: { url: string; close: () => Promise<void> };
let browser: Browser;
/** Requests the pages made to anything but the site itself (fonts, analytics, a CDN: none allowed). */
const foreign: string[] = [];
/** Errors the pages printed on the console or threw. */
const pageErrors: string[] = [];

beforeAll(async () => {
  if (skipped) return;
  [site, browser] = await Promise.all([serveSite(), launchChromium()]);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
});

/** A new page of the site that refuses (and records) any request to another host. */
async function openPage(at: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(site.url) || url.startsWith('data:')) return route.continue();
    foreign.push(url);
    return route.abort();
  });
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(`${at}: ${message.text()}`);
  });
  page.on('pageerror', (error) => pageErrors.push(`${at}: ${error.message}`));
  await page.goto(`${site.url}${at}`);
  return page;
}

/** From the home page: a top navigation link, then a sidebar link, then an entry of the page's outline; returns the page there. */
async function navigate(nav: string, sidebar: string, heading: string): Promise<Page> {
  const page = await openPage('/');
  await page.locator('.VPNavBar').getByRole('link', { name: nav, exact: true }).click();
  await page.locator('.VPSidebar').getByRole('link', { name: sidebar, exact: true }).click();
  await page.waitForURL(/\.html/);
  await page.locator('.VPDocAsideOutline').getByRole('link', { name: heading, exact: true }).click();
  await page.waitForURL(/#/);
  return page;
}

/** Where a reader who knows nothing of the project looks for each task, and what they must find there. */
const TASKS: { task: string; nav: string; sidebar: string; heading: string; text: string }[] = [
  { task: 'run a BMAD project', nav: 'Guides', sidebar: 'Run BMAD projects and Agent Skills', heading: 'See also', text: 'npx bmad-method install' },
  { task: 'approve a tool call', nav: 'Guides', sidebar: 'A human in the loop: approvals, questions, chat', heading: 'Approve a tool call', text: 'loopwright approve' },
  { task: 'add an MCP server', nav: 'Guides', sidebar: 'Tools, MCP servers and commands', heading: 'Add an MCP server', text: '.mcp.json' },
  { task: 'put sessions on their own cluster', nav: 'Guides', sidebar: 'Deployment: servers, clusters, Cloud, encryption', heading: 'Put sessions on your own cluster', text: 'TEMPORAL_ADDRESS' },
  { task: 'read a trace', nav: 'Guides', sidebar: 'Observability: Web UI, metrics, traces, live output', heading: 'Read a trace', text: 'loopwright.model_call' },
  { task: 'fix LoopwrightBusy', nav: 'Troubleshooting', sidebar: 'Troubleshooting: every error', heading: 'LoopwrightBusy', text: 'loopwright interrupt' },
];

(skipped ? describe.skip : describe)('docs site', () => {
  test('docs site: every page of the sidebar renders its heading, with no console error and nothing fetched from another host', async () => {
    const home = await openPage('/');
    await expect(home.locator('.VPHero .name').textContent()).resolves.toContain('Loopwright');
    await screenshot(home, 'docs-home');
    const guides = await openPage('/guides/bmad-and-skills.html');
    const hrefs = [...new Set(await guides.locator('.VPSidebar a.link').evaluateAll((links) => links.map((a) => (a as unknown as { pathname: string }).pathname)))];
    expect(hrefs.length).toBeGreaterThan(20);
    for (const href of hrefs) {
      const page = await openPage(href);
      const title = (await page.locator('.vp-doc h1').first().textContent({ timeout: 10_000 }))?.trim();
      expect(`${href}: ${title}`).toMatch(/: \S/);
      await page.close();
    }
    await home.close();
    await guides.close();
    expect(pageErrors).toEqual([]);
    expect(foreign).toEqual([]);
  }, 120_000);

  test.each(TASKS)(
    'docs site: from the navigation alone, a reader finds how to $task',
    async ({ task, nav, sidebar, heading, text }) => {
      const page = await navigate(nav, sidebar, heading);
      const section = page.locator('.vp-doc h2, .vp-doc h3').filter({ hasText: heading }).first();
      await expect(section.isVisible()).resolves.toBe(true);
      await expect(page.locator('.vp-doc').textContent()).resolves.toContain(text);
      await screenshot(page, `docs-task-${task.replace(/\W+/g, '-')}`);
      await page.close();
    },
    60_000,
  );

  test('docs site: the search built into the site finds LoopwrightBusy and opens its entry', async () => {
    const page = await openPage('/');
    await page.locator('.VPNavBarSearch button').click();
    await page.locator('.VPLocalSearchBox input').fill('LoopwrightBusy');
    const result = page.locator('.VPLocalSearchBox .result').filter({ hasText: 'LoopwrightBusy' }).first();
    await result.waitFor({ timeout: 15_000 });
    await screenshot(page, 'docs-search-loopwrightbusy');
    await result.click();
    await page.waitForURL(/troubleshooting\.html#loopwrightbusy/);
    await page.locator('#loopwrightbusy').waitFor({ state: 'visible', timeout: 10_000 });
    await expect(page.locator('.vp-doc h3#loopwrightbusy').textContent()).resolves.toContain('LoopwrightBusy');
    await page.close();
    expect(foreign).toEqual([]);
  }, 60_000);
});

test('docs site: every link and asset of every built page leads to a file of the site', () => {
  if (!fs.existsSync(SITE_DIR)) throw new Error(`No built site in ${SITE_DIR}: run npm run docs:build first`);
  const pages: string[] = [];
  const walk = (folder: string): void => {
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const at = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(at);
      else if (entry.name.endsWith('.html')) pages.push(at);
    }
  };
  walk(SITE_DIR);
  const broken: string[] = [];
  let checked = 0;
  for (const file of pages) {
    const html = fs.readFileSync(file, 'utf8');
    const base = `/${path.relative(SITE_DIR, file).split(path.sep).join('/')}`;
    for (const [, target] of html.matchAll(/\s(?:href|src)="([^"]+)"/g)) {
      if (/^(?:[a-z][a-z0-9+.-]*:|#|\/\/)/i.test(target!)) continue; // another site, or a place on this page
      const resolved = new URL(target!.replace(/&amp;/g, '&'), `http://site${base}`).pathname;
      checked++;
      if (!siteFile(resolved)) broken.push(`${base}: ${target}`);
    }
  }
  expect(pages.length).toBeGreaterThan(30);
  expect(checked).toBeGreaterThan(1000);
  expect([...new Set(broken)]).toEqual([]);
});
