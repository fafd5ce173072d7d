/**
 * Shared set-up of the serve tests: a real Temporal dev server, a real worker with the fake model,
 * a copy of the example bundle, and `loopwright serve`'s HTTP server in this process on a free port
 * (tests that restart the server run it as a process: see serve-process.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { buildServer, type ServerOptions } from '../../serve/server';
import { loopbackHosts } from '../../serve/safety';
import type { ServeContext } from '../../serve/serve-context';
import { copyExampleBundle, type SessionHarness, startSessionHarness } from '../support/session-harness';
import type { LoopwrightClient } from '../../client/session-client';

/** One serve server on the harness. */
export interface ServeUnderTest {
  app: FastifyInstance;
  context: ServeContext;
  /** `http://127.0.0.1:<port>` */
  base: string;
  close(): Promise<void>;
}

/** Start a serve server for `loopwright` (a worker's client) on a free port. */
export async function startServe(h: SessionHarness, loopwright: LoopwrightClient, options: Partial<ServerOptions> = {}): Promise<ServeUnderTest> {
  let port = 0;
  const { app, context } = await buildServer({
    context: { loopwright, client: h.client, temporal: { address: h.server.address, namespace: 'default' }, taskQueue: loopwright.taskQueue, uiUrl: 'http://localhost:8233' },
    allowedHosts: () => loopbackHosts('127.0.0.1', port),
    ...options,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as AddressInfo).port;
  return { app, context, base: `http://127.0.0.1:${port}`, close: () => app.close() };
}

/** What a serve test file needs, set up once in `beforeAll`. */
export interface ServeSuite {
  h: SessionHarness;
  loopwright: LoopwrightClient;
  bundle: string;
  serve: ServeUnderTest;
}

/**
 * Register the usual set-up with Jest: harness, worker, bundle copy, serve server; the fake model
 * reset before each test, unless `harness.resetFake` is false (tests that run at the same time,
 * which a reset in the middle of theirs would disturb).
 */
export function useServeSuite(options: Partial<ServerOptions> = {}, harness: { dynamicConfig?: readonly string[]; resetFake?: boolean } = {}): ServeSuite {
  const suite = {} as ServeSuite;
  let bundleCopy: ReturnType<typeof copyExampleBundle> | undefined;
  beforeAll(async () => {
    suite.h = await startSessionHarness(harness);
    bundleCopy = copyExampleBundle('lw-serve-');
    suite.bundle = bundleCopy.bundle;
    suite.loopwright = (await suite.h.startWorker()).loopwright;
    suite.serve = await startServe(suite.h, suite.loopwright, options);
  }, 120_000);
  afterAll(async () => {
    await suite.serve?.close();
    await suite.h?.close();
    bundleCopy?.cleanup();
  });
  if (harness.resetFake !== false) beforeEach(() => suite.h.fake.reset());
  return suite;
}

/** A JSON answer as the tests read it: any field may be looked at. */
export interface Answer {
  status: number;
  body: Record<string, unknown> & { error?: { type: string; message: string; field?: string } };
  text: string;
  headers: Headers;
}

/** JSON request to the server: status and parsed body. */
export async function api(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    redirect: 'manual',
  });
  const text = await response.text();
  let parsed: Answer['body'] = {};
  try {
    parsed = text ? (JSON.parse(text) as Answer['body']) : {};
  } catch {
    // not JSON: the text is in `text`
  }
  return { status: response.status, body: parsed, text, headers: response.headers };
}
