/**
 * The codec and its server hold bounded memory whatever they are sent: a request body over the
 * limit is refused (413) by its declared length or as soon as the bytes read pass it, a compressed
 * body is refused (415: the server does not inflate, and the bound is on what it parses), a payload
 * that inflates past the codec's bound (a deflate bomb under a valid key) fails with a ValueError
 * naming the limit, and the payloads decoded for one answer stop at their own limit.
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import http from 'node:http';
import { deflateRawSync, gzipSync } from 'node:zlib';
import { ValueError, type Payload } from '@temporalio/common';
import { startCodecServer, type CodecServer } from '../../codec/codec-server';
import { EncryptionCodec } from '../../codec/encryption-codec';

const KEY = { id: 'k1', key: randomBytes(32) };
const codec = new EncryptionCodec([KEY], 'k1', 1024 * 1024);
let server: CodecServer;

beforeAll(async () => {
  server = await startCodecServer({ codec, port: 0, maxBodyBytes: 64 * 1024, maxDecodedBytes: 2 * 1024 * 1024 });
});

afterAll(async () => {
  await server.close();
});

/** A payload encrypted under KEY whose plaintext is a deflate bomb of `inflatedBytes` (what only a key holder can make). */
function bombPayload(inflatedBytes: number): Payload {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', KEY.key, iv);
  const plain = deflateRawSync(Buffer.alloc(inflatedBytes));
  return {
    metadata: { encoding: Buffer.from('binary/encrypted'), 'encryption-key-id': Buffer.from('k1'), 'loopwright-compressed': Buffer.from('deflate') },
    data: Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]),
  };
}

function asJson(payloads: Payload[]): string {
  return JSON.stringify({
    payloads: payloads.map((p) => ({
      metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v!).toString('base64')])),
      data: Buffer.from(p.data!).toString('base64'),
    })),
  });
}

/** POST `body` to /decode with `headers`, without fetch's own handling of the body, and return the status and message. */
function post(body: Buffer | string | ((req: http.ClientRequest) => void), headers: Record<string, string> = {}): Promise<{ status: number; message: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.url}/decode`, { method: 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, message: text }));
    });
    req.on('error', reject);
    if (typeof body === 'function') body(req);
    else req.end(body);
  });
}

test('codec: a payload inflating past the bound fails with a ValueError naming it, in bounded memory', async () => {
  const bomb = bombPayload(128 * 1024 * 1024);
  const before = process.memoryUsage().arrayBuffers;
  const error = await codec.decode([bomb]).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 1024 * 1024);
  expect(error).toBeInstanceOf(ValueError);
  expect((error as Error).message).toContain(`inflates past the limit of ${1024 * 1024} bytes`);
  // A compressed payload within the bound still decodes.
  const big = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify('x'.repeat(100_000))) };
  const [back] = await codec.decode(await codec.encode([big]));
  expect(Buffer.from(back!.data!).equals(big.data)).toBe(true);
});

test('codec server: a declared body over the limit is refused before reading (413)', async () => {
  const answer = await post((req) => {
    req.setHeader('content-length', String(10 * 1024 * 1024));
    req.write('{"payloads":');
    // The rest never comes: the server answers from the header alone.
  });
  expect(answer.status).toBe(413);
  expect(answer.message).toContain(`over the limit of ${64 * 1024} bytes (Content-Length ${10 * 1024 * 1024})`);
});

test('codec server: a chunked body is refused as soon as it passes the limit (413)', async () => {
  let written = 0;
  const answer = await post((req) => {
    const chunk = Buffer.alloc(16 * 1024, 0x20);
    const pump = (): void => {
      // Endless, unless the server stops reading: it answers and closes.
      while (written < 64 * 1024 * 1024 && !req.destroyed) {
        written += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
  expect(answer.status).toBe(413);
  expect(answer.message).toMatch(/over the limit of 65536 bytes \(\d+ bytes read\)/);
  expect(written).toBeLessThan(64 * 1024 * 1024);
});

test('codec server: a compressed body is refused (415), never inflated', async () => {
  const body = gzipSync(Buffer.alloc(32 * 1024 * 1024, 0x20));
  const answer = await post(body, { 'content-encoding': 'gzip', 'content-type': 'application/json' });
  expect(answer.status).toBe(415);
  expect(answer.message).toContain('Content-Encoding gzip is not accepted');
});

test('codec server: a bomb payload fails, and the decoded payloads of one answer stop at their limit', async () => {
  const bomb = await post(asJson([bombPayload(16 * 1024 * 1024)]), { 'content-type': 'application/json' });
  expect(bomb.status).toBe(400);
  expect(bomb.message).toContain('inflates past the limit');

  // Each payload within the codec's bound, together over the answer's: 3 x 900 KB > 2 MB.
  const payloads = await codec.encode([0, 1, 2].map(() => ({ metadata: { encoding: Buffer.from('binary/plain') }, data: Buffer.alloc(900 * 1024, 0x61) })));
  const many = await post(asJson(payloads), { 'content-type': 'application/json' });
  expect(many.status).toBe(413);
  expect(many.message).toContain(`the decoded payloads pass the limit of ${2 * 1024 * 1024} bytes`);

  const fine = await post(asJson(payloads.slice(0, 2)), { 'content-type': 'application/json' });
  expect(fine.status).toBe(200);
});
