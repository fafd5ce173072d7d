/**
 * The OpenAPI description `loopwright serve` answers at /api/openapi.json: a valid OpenAPI 3.1
 * document (checked by @seriousme/openapi-schema-validator, in a child process since it is an ES
 * module), naming every route the server has, and the same routes serve/API.md lists, both ways.
 * No Temporal server is needed: this route talks to none.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../serve/server';

const REPO = path.resolve(__dirname, '../..');

let app: FastifyInstance;
let doc: { openapi: string; paths: Record<string, Record<string, { summary?: string; responses?: Record<string, unknown> }>> };

beforeAll(async () => {
  ({ app } = await buildServer({ context: { loopwright: {} as never, client: {} as never, temporal: { address: '127.0.0.1:7233', namespace: 'default' }, taskQueue: 'loopwright' } }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const answer = await fetch(`http://127.0.0.1:${port}/api/openapi.json`);
  expect(answer.status).toBe(200);
  doc = (await answer.json()) as typeof doc;
});

afterAll(() => app?.close());

/** `GET /api/sessions/{id}` for every operation of the description. */
function operations(): string[] {
  return Object.entries(doc.paths).flatMap(([route, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${route}`));
}

test('openapi: the description is a valid OpenAPI 3.1 document', () => {
  expect(doc.openapi).toBe('3.1.0');
  const script = [
    "import { Validator } from '@seriousme/openapi-schema-validator';",
    "let text = ''; process.stdin.on('data', (d) => (text += d)); process.stdin.on('end', async () => {",
    '  const result = await new Validator().validate(JSON.parse(text));',
    '  process.stdout.write(JSON.stringify(result));',
    '});',
  ].join('\n');
  const result = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO, input: JSON.stringify(doc), encoding: 'utf8' })) as { valid: boolean; errors?: unknown };
  expect(result).toEqual({ valid: true });
});

test('openapi: every route of the server is described, with a summary and its answers', () => {
  const described = operations();
  for (const operation of described) {
    const [method, route] = operation.split(' ') as [string, string];
    expect(app.hasRoute({ method: method as 'GET', url: route.replace(/\{(\w+)\}/g, ':$1') })).toBe(true);
    const spec = doc.paths[route]![method.toLowerCase()]!;
    expect(spec.summary).toEqual(expect.any(String));
    expect(Object.keys(spec.responses ?? {}).length).toBeGreaterThan(0);
  }
  expect(described).toEqual(expect.arrayContaining(['GET /api/sessions/{id}/events', 'POST /api/agui', 'GET /api/openapi.json']));
});

test('openapi: serve/API.md lists exactly the routes the description has', () => {
  const table = fs.readFileSync(path.join(REPO, 'serve', 'API.md'), 'utf8');
  const listed = [...table.matchAll(/^\| `(GET|POST|PUT|DELETE|PATCH) (\/api[^`]*)` \|/gm)].map(([, method, route]) => `${method} ${route!.replace(/:(\w+)/g, '{$1}')}`);
  expect(listed.sort()).toEqual(operations().sort());
});
