/**
 * Serves the built documentation site (docs/.vitepress/dist, made by `npm run docs:build`) over
 * HTTP on 127.0.0.1, as any static host would: a folder's index.html, 404.html for what is not
 * there. The site test reads it in a real browser.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

/** Where `npm run docs:build` puts the site. */
export const SITE_DIR = path.resolve(__dirname, '../../docs/.vitepress/dist');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
};

/** The file a URL path names in the site, or undefined. */
export function siteFile(urlPath: string): string | undefined {
  const clean = decodeURIComponent(urlPath.split(/[?#]/)[0]!);
  const at = path.resolve(SITE_DIR, `.${clean}`);
  if (at !== SITE_DIR && !at.startsWith(`${SITE_DIR}${path.sep}`)) return undefined;
  for (const candidate of [at, path.join(at, 'index.html'), `${at}.html`]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** Start serving the site; resolves to its base URL and a function that stops it. */
export async function serveSite(): Promise<{ url: string; close: () => Promise<void> }> {
  if (!fs.existsSync(path.join(SITE_DIR, 'index.html'))) throw new Error(`No built site in ${SITE_DIR}: run npm run docs:build first`);
  const server = http.createServer((req, res) => {
    const file = siteFile(req.url ?? '/');
    const status = file ? 200 : 404;
    const body = fs.readFileSync(file ?? path.join(SITE_DIR, '404.html'));
    res.writeHead(status, { 'content-type': TYPES[path.extname(file ?? '.html')] ?? 'application/octet-stream' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
