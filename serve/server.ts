/**
 * `loopwright serve`'s HTTP server, on Fastify: the JSON API under `/api` (its OpenAPI description
 * written by @fastify/swagger from the routes' schemas), the session event streams, and the chat
 * app. It is a client of Temporal like the command line and keeps no session state of its own.
 *
 * Bounds: request bodies at most 1 MiB, the whole request received within 30 s and its headers
 * within 10 s (a client that sends slowly cannot hold a connection), every event stream's unsent
 * events about 2 MiB at most (see events/sse-stream.ts). See safety.ts for tokens, hosts and cross-site
 * requests.
 */
import fs from 'node:fs';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { projectRoot } from '../client/server/project-paths';
import { errorResponse } from './api-error';
import { registerApp, defaultAppDir } from './app-routes';
import { DEFAULT_FEED_TIMING, FeedRegistry, type FeedTiming } from './events/session-feed';
import { DEFAULT_STREAM_LIMITS, encodeFrame, type StreamLimits } from './events/sse-stream';
import { registerEvalRoutes } from './routes/eval-routes';
import { registerEventRoutes } from './routes/event-routes';
import { registerReadRoutes } from './routes/read-routes';
import { registerSessionRoutes } from './routes/session-routes';
import { installSafety, TOKEN_COOKIE } from './safety';
import type { ServeContext } from './serve-context';

/** Largest request body (bytes). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Options of {@link buildServer}. */
export interface ServerOptions {
  /** The client library and where Temporal is. */
  context: Omit<ServeContext, 'feeds' | 'streamLimits'>;
  /** The example bundle's folder, for the app to offer. */
  exampleBundle?: string;
  /** The project folder the example bundle's sessions work in (see ServeContext.exampleProject). */
  exampleProject?: string;
  /** The worker answers with the scripted model (the health route says so). */
  scriptedModel?: boolean;
  /** Required of every request when set. */
  token?: string;
  /** `Host` values answered, asked per request (the port may be known only once listening); undefined: any. */
  allowedHosts?: () => readonly string[] | undefined;
  /** The app's folder (default `serve/app/` of the package). */
  appDir?: string;
  feedTiming?: FeedTiming;
  streamLimits?: Partial<StreamLimits>;
  /** Whole-request deadline (default 30 s). */
  requestTimeoutMs?: number;
  /** Deadline of a request's headers (default 10 s). */
  headersTimeoutMs?: number;
  /** How often both deadlines are checked (default every second): a request is cut off up to this much after its deadline. */
  timeoutCheckMs?: number;
}

/** The server, ready to `listen`. */
export async function buildServer(options: ServerOptions): Promise<{ app: FastifyInstance; context: ServeContext }> {
  const base = options.context;
  const context: ServeContext = {
    ...base,
    ...(options.exampleBundle !== undefined ? { exampleBundle: options.exampleBundle } : {}),
    ...(options.exampleProject !== undefined ? { exampleProject: options.exampleProject } : {}),
    ...(options.scriptedModel !== undefined ? { scriptedModel: options.scriptedModel } : {}),
    streamLimits: { ...DEFAULT_STREAM_LIMITS, ...options.streamLimits },
    feeds: new FeedRegistry((id) => ({ handle: base.loopwright.session(id), client: base.client }), encodeFrame, options.feedTiming ?? DEFAULT_FEED_TIMING),
  };
  const app = Fastify({
    logger: false,
    bodyLimit: MAX_BODY_BYTES,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    // Headers must arrive within 10 s (Node's default is a minute), checked every second (not 30 s).
    http: { headersTimeout: options.headersTimeoutMs ?? 10_000, connectionsCheckingInterval: options.timeoutCheckMs ?? 1_000 },
    routerOptions: { maxParamLength: 1000 },
    forceCloseConnections: true,
    return503OnClosing: true,
  });

  installSafety(app, {
    ...(options.token !== undefined ? { token: options.token } : {}),
    hosts: () => options.allowedHosts?.(),
  });
  app.addHook('onSend', async (request, reply, payload) => {
    // Never framed by another page (the approve button), never sniffed, never a referrer.
    void reply.header('x-content-type-options', 'nosniff').header('x-frame-options', 'DENY').header('content-security-policy', "frame-ancestors 'none'").header('referrer-policy', 'no-referrer');
    if (request.url.startsWith('/api')) void reply.header('cache-control', 'no-store');
    return payload;
  });
  app.setErrorHandler((err, request, reply) => {
    const { status, body } = errorResponse(err);
    if (status >= 500) process.stderr.write(`loopwright serve: ${request.method} ${request.url.split('?')[0]}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    void reply.code(status).send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    const { status, body } = errorResponse({ statusCode: 404, message: `No route ${request.method} ${request.url.split('?')[0]}` });
    void reply.code(status).send(body);
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Loopwright serve', version: packageVersion(), description: 'Sessions of Loopwright agents over HTTP: see serve/API.md.' },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'The token of `loopwright serve --token` (when it has one)' },
          cookie: { type: 'apiKey', in: 'cookie', name: TOKEN_COOKIE, description: 'Set by opening the app with ?token=<token>' },
        },
      },
      security: [{ bearer: [] }, { cookie: [] }, {}],
    },
  });
  registerReadRoutes(app, context);
  registerSessionRoutes(app, context);
  registerEventRoutes(app, context);
  registerEvalRoutes(app, context);
  app.get('/api/openapi.json', { schema: { tags: ['server'], summary: 'This description (OpenAPI 3.1)' } }, async () => app.swagger());
  await registerApp(app, options.appDir ?? defaultAppDir());
  return { app, context };
}

function packageVersion(): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}
