/**
 * The chat app: the static files of `serve/app/` at `/` (they ship in the package beside dist/),
 * or, when they are missing, a short page saying so. The app needs no build step.
 */
import fs from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { projectRoot } from '../client/server/project-paths';

/** Where the app's files are: `serve/app/` of the package (the sources and an installed package alike). */
export function defaultAppDir(): string {
  return path.join(projectRoot(), 'serve', 'app');
}

const MISSING_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Loopwright</title></head>
<body><h1>Loopwright</h1><p>The chat app is missing from this installation (no <code>serve/app/index.html</code>).
The API works: see <a href="/api/openapi.json">/api/openapi.json</a>.</p></body></html>
`;

export async function registerApp(app: FastifyInstance, appDir: string): Promise<void> {
  if (fs.existsSync(path.join(appDir, 'index.html'))) {
    await app.register(fastifyStatic, { root: appDir, prefix: '/', index: ['index.html'], cacheControl: true, maxAge: 0, dotfiles: 'deny' });
    return;
  }
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(MISSING_PAGE));
}
