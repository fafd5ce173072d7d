/**
 * The codec endpoint the Temporal Web UI and `temporal` CLI call to show decoded payloads:
 * `POST /decode` and `POST /encode` with `{payloads: [...]}` (protobuf JSON, base64 data). CORS
 * answers the UI's origin; a bearer token, when set, is required. Listens on 127.0.0.1 by default.
 *
 * What a request can make it hold is bounded: the body is read up to `maxBodyBytes` (a declared
 * Content-Length over it is refused before reading, and the read stops as soon as the count passes
 * it), a compressed body is refused (Node's server does not inflate it, and the bound is on the
 * bytes parsed), and the payloads decoded for one answer stop at `maxDecodedBytes` (the codec also
 * bounds each one's inflation). Each refusal is a 413 or 415 naming the limit.
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
  /** Largest request body read, in bytes (DEFAULT_MAX_BODY_BYTES). */
  maxBodyBytes?: number;
  /** Largest total of decoded payload bytes in one answer (DEFAULT_MAX_DECODED_BYTES). */
  maxDecodedBytes?: number;
}

/** Largest request body read (16 MiB): a page of history's payloads, encrypted. */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

/** Largest total of payload bytes decoded for one answer (64 MiB): the payloads of that page, decompressed. */
export const DEFAULT_MAX_DECODED_BYTES = 64 * 1024 * 1024;

/** A request the server refuses with a status of its own (413, 415) and a message naming the limit. */
class RequestRefused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
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
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxDecodedBytes = options.maxDecodedBytes ?? DEFAULT_MAX_DECODED_BYTES;
  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      const status = err instanceof RequestRefused ? err.status : 400;
      // A refused body may still be arriving: answer, then close the connection rather than read on.
      if (err instanceof RequestRefused) res.setHeader('Connection', 'close');
      send(res, status, { message: err instanceof Error ? err.message : String(err) });
    });
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
    const body = JSON.parse(await readBody(req, maxBodyBytes)) as { payloads?: JsonPayload[] };
    if (!Array.isArray(body.payloads)) return send(res, 400, { message: 'expected {"payloads": [...]}' });
    const payloads = body.payloads.map(fromJson);
    const result = path === '/decode' ? await decodeWithin(options.codec, payloads, maxDecodedBytes) : await options.codec.encode(payloads);
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

/**
 * The body of `req` as UTF-8 text, at most `limit` bytes: refused before reading when its declared
 * length or encoding says it will not do, and as soon as the bytes read pass the limit otherwise.
 */
function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity') {
    return Promise.reject(new RequestRefused(415, `Content-Encoding ${encoding} is not accepted: send the JSON uncompressed (at most ${limit} bytes)`));
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.reject(new RequestRefused(413, `request body over the limit of ${limit} bytes (Content-Length ${declared})`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        reject(new RequestRefused(413, `request body over the limit of ${limit} bytes (${size} bytes read)`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Decode `payloads` one by one, refusing once their decoded bytes together pass `limit`. */
async function decodeWithin(codec: PayloadCodec, payloads: Payload[], limit: number): Promise<Payload[]> {
  const decoded: Payload[] = [];
  let total = 0;
  for (const payload of payloads) {
    const [one] = await codec.decode([payload]);
    total += (one?.data?.length ?? 0) + Object.values(one?.metadata ?? {}).reduce((sum, v) => sum + (v?.length ?? 0), 0);
    if (total > limit) throw new RequestRefused(413, `the decoded payloads pass the limit of ${limit} bytes (${total} bytes decoded): ask for fewer at a time`);
    decoded.push(one!);
  }
  return decoded;
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
