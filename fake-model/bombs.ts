/**
 * Reply bodies that try to exhaust a client's memory: compression bombs (a few hundred KB on the
 * wire, hundreds of MB once decoded) and bodies that never end. Both are generated from a stream
 * read on demand, so the server itself never holds the decoded bytes: a bomb is compressed once per
 * encoding and size and then kept, an endless body is produced only as fast as the client reads it.
 */
import type { ServerResponse } from 'node:http';
import { pipeline, Readable, type Transform } from 'node:stream';
import zlib from 'node:zlib';
import type { RecordedRequest } from './recorded-request';
import type { BombEncoding, BombStep, EndlessStep } from './steps';

/** How every bomb's body starts: a chat-completion object whose content string never closes. */
const BODY_START = '{"id":"chatcmpl-bomb","object":"chat.completion","created":0,"model":"bomb","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"';

/** The content's filler, one chunk. */
const FILL = Buffer.alloc(64 * 1024, 'A');

/** Compressed bombs by encoding and size, made once. */
const compressed = new Map<string, Promise<Buffer>>();

/** Send `step`'s body; the request's status is recorded once the body was sent in full (an endless one never is). */
export function sendBomb(step: BombStep | EndlessStep, res: ServerResponse, record: RecordedRequest, headers: Record<string, string>): void {
  if (step.kind === 'bomb') {
    bombBody(step.encoding, step.inflatedBytes).then(
      (body) => {
        if (res.destroyed) return;
        res.writeHead(step.status, { 'content-type': 'application/json', 'content-encoding': step.encoding, 'content-length': body.length, ...headers });
        record.bodyBytes = step.inflatedBytes;
        res.end(body, () => (record.status = step.status));
      },
      () => res.destroy(),
    );
    return;
  }
  const encoding = step.encoding === 'identity' ? {} : { 'content-encoding': step.encoding };
  res.writeHead(step.status, { 'content-type': 'application/json', ...encoding, ...headers });
  const source = filler(Infinity, record);
  const stages: (Readable | Transform | ServerResponse)[] = step.encoding === 'identity' ? [source, res] : [source, encoder(step.encoding), res];
  // The client hanging up ends the pipeline with an error; that is how an endless body ends.
  pipeline(stages, () => undefined);
}

/** The body of a bomb: `inflatedBytes` decoded, compressed with `encoding`. */
export function bombBody(encoding: BombEncoding, inflatedBytes: number): Promise<Buffer> {
  const key = `${encoding}:${inflatedBytes}`;
  let body = compressed.get(key);
  if (!body) {
    body = new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const sink = encoder(encoding);
      sink.on('data', (chunk: Buffer) => chunks.push(chunk));
      pipeline(filler(inflatedBytes), sink, (err) => (err ? reject(err) : resolve(Buffer.concat(chunks))));
    });
    compressed.set(key, body);
  }
  return body;
}

/** A readable of BODY_START and then filler, `total` bytes in all (Infinity: forever), made as it is read. */
function filler(total: number, record?: RecordedRequest): Readable {
  let produced = 0;
  return new Readable({
    read() {
      if (produced >= total) {
        this.push(null);
        return;
      }
      const chunk = produced === 0 ? Buffer.concat([Buffer.from(BODY_START), FILL]) : FILL;
      const piece = chunk.subarray(0, Math.min(chunk.length, total - produced));
      produced += piece.length;
      if (record) record.bodyBytes = produced;
      this.push(piece);
    },
  });
}

/** A compressor for `encoding`; the strongest setting that stays quick, since bombs are made per test run. */
function encoder(encoding: BombEncoding): Transform {
  switch (encoding) {
    case 'gzip':
      return zlib.createGzip({ level: 9 });
    case 'deflate':
      return zlib.createDeflate({ level: 9 });
    case 'br':
      return zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } });
  }
}
