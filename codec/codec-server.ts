/**
 * The codec endpoint the Temporal Web UI and `temporal` CLI call to show decoded payloads:
 * `POST /decode` and `POST /encode` with `{payloads: [...]}` (protobuf JSON, base64 data). CORS
 * answers the UI's origin; a bearer token, when set, is required. Listens on 127.0.0.1 by default.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';

/** Settings of the codec server. */
export interface CodecServerOptions {
  codec: PayloadCodec;
  port?: number;
  host?: string;
  /** Origins allowed to call it from a browser (default the embedded UI's, http://localhost:8233). */
  origins?: string[];
  /** When set, requests must carry `Authorization: Bearer <token>`. */
  token?: string;
}

/** A running codec server. */
export interface CodecServer {
  url: string;
  close(): Promise<void>;
}

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

/** Start the codec server. */
export async function startCodecServer(options: CodecServerOptions): Promise<CodecServer> {
  const origins = options.origins ?? ['http://localhost:8233'];
  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => send(res, 400, { message: err instanceof Error ? err.message : String(err) }));
  });

  const cors = (req: IncomingMessage, res: ServerResponse): void => {
    const origin = req.headers.origin;
    if (origin && (origins.includes(origin) || origins.includes('*'))) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Vary', 'Origin');
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      res.setHeader('Access-Control-Allow-Headers', 'Content-Type, Authorization, X-Namespace');
      res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
    }
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    cors(req, res);
    if (req.method === 'OPTIONS') return send(res, 204);
    const path = (req.url ?? '').split('?')[0]!.replace(/\/+$/, '');
    if (req.method !== 'POST' || (path !== '/decode' && path !== '/encode')) return send(res, 404, { message: 'POST /decode or /encode' });
    if (options.token && req.headers.authorization !== `Bearer ${options.token}`) return send(res, 401, { message: 'a valid bearer token is required' });
    const body = JSON.parse(await readBody(req)) as { payloads?: JsonPayload[] };
    if (!Array.isArray(body.payloads)) return send(res, 400, { message: 'expected {"payloads": [...]}' });
    const payloads = body.payloads.map(fromJson);
    const result = path === '/decode' ? await options.codec.decode(payloads) : await options.codec.encode(payloads);
    send(res, 200, { payloads: result.map(toJson) });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8888, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${address.address}:${address.port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function send(res: ServerResponse, status: number, body?: unknown): void {
  res.statusCode = status;
  if (body === undefined) return void res.end();
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(body));
}

const MAX_BODY_BYTES = 16 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`request body over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function fromJson(p: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: Buffer.from(p.data ?? '', 'base64'),
  };
}

function toJson(p: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')])),
    data: Buffer.from(p.data ?? []).toString('base64'),
  };
}
