/**
 * An optional payload codec: every payload Loopwright's clients and workers send to Temporal is
 * compressed (when large) and encrypted with AES-256-GCM, so the server's history and database hold
 * no plaintext. Each encrypted payload names its key id, so keys can rotate: old payloads stay
 * readable as long as their key is still listed. Node's own crypto and zlib do the work.
 *
 * Keys: `LOOPWRIGHT_CODEC_KEY` (32 bytes, base64) or `LOOPWRIGHT_CODEC_KEY_FILE` (lines of
 * `<id>:<base64 key>`); new payloads use `LOOPWRIGHT_CODEC_KEY_ID`, else the last key of the file
 * (or `default` for a single key).
 *
 * A compressed payload inflates within a bound (DEFAULT_MAX_PAYLOAD_BYTES): decoding reads payloads
 * from history and from the codec server's callers, and one that inflates past the bound is a
 * compression bomb, refused with a ValueError before it can take the process's memory.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { type Payload, type PayloadCodec, ValueError } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

/** Metadata encoding of an encrypted payload. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID = 'encryption-key-id';
const COMPRESSED = 'loopwright-compressed';
/** Payloads larger than this are compressed before they are encrypted. */
const COMPRESS_OVER_BYTES = 1024;

/**
 * Largest payload, in bytes, a compressed payload may inflate to (64 MiB): far above anything
 * Temporal stores (2 MB per payload by default, and text compresses perhaps tenfold), far below
 * what would hurt a worker or the codec server.
 */
export const DEFAULT_MAX_PAYLOAD_BYTES = 64 * 1024 * 1024;

/** A named AES-256 key. */
export interface CodecKey {
  id: string;
  key: Buffer;
}

/** Thrown when codec settings are wrong; names the setting. */
export class CodecConfigError extends Error {
  override readonly name = 'CodecConfigError';
}

/** The codec over `keys`, encrypting new payloads with `currentId`. */
export class EncryptionCodec implements PayloadCodec {
  private readonly keys: Map<string, Buffer>;

  constructor(
    keys: readonly CodecKey[],
    private readonly currentId: string,
    /** Largest payload a compressed one may inflate to. */
    private readonly maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES,
  ) {
    if (keys.length === 0) throw new CodecConfigError('the payload codec needs at least one key');
    this.keys = new Map(keys.map((k) => [k.id, k.key]));
    if (!this.keys.has(currentId)) throw new CodecConfigError(`LOOPWRIGHT_CODEC_KEY_ID names "${currentId}", which is not among the keys (${[...this.keys.keys()].join(', ')})`);
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      let plain = Buffer.from(temporal.api.common.v1.Payload.encode(payload).finish());
      const compressed = plain.length > COMPRESS_OVER_BYTES;
      if (compressed) plain = deflateRawSync(plain);
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentId)!, iv);
      const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: {
          encoding: Buffer.from(ENCRYPTED_ENCODING),
          [KEY_ID]: Buffer.from(this.currentId),
          ...(compressed ? { [COMPRESSED]: Buffer.from('deflate') } : {}),
        },
        data,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (Buffer.from(payload.metadata?.encoding ?? []).toString() !== ENCRYPTED_ENCODING) return payload;
      const id = Buffer.from(payload.metadata?.[KEY_ID] ?? []).toString();
      const key = this.keys.get(id);
      if (!key) {
        throw new ValueError(`Cannot decrypt a payload encrypted with key "${id}": no such key in LOOPWRIGHT_CODEC_KEY(_FILE) (known: ${[...this.keys.keys()].join(', ')})`);
      }
      const data = Buffer.from(payload.data ?? []);
      let plain: Buffer;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, 12));
        decipher.setAuthTag(data.subarray(data.length - 16));
        plain = Buffer.concat([decipher.update(data.subarray(12, data.length - 16)), decipher.final()]);
      } catch {
        throw new ValueError(`Cannot decrypt a payload with key "${id}": the key is not the one it was encrypted with (or the payload was altered)`);
      }
      if (payload.metadata?.[COMPRESSED]) plain = this.inflate(plain, id);
      return temporal.api.common.v1.Payload.decode(plain) as Payload;
    });
  }

  /** `data` inflated, refusing to produce more than `maxPayloadBytes` (zlib stops there, holding no more). */
  private inflate(data: Buffer, id: string): Buffer {
    try {
      return inflateRawSync(data, { maxOutputLength: this.maxPayloadBytes });
    } catch (err) {
      if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') {
        throw new ValueError(`Cannot decode a payload encrypted with key "${id}": it inflates past the limit of ${this.maxPayloadBytes} bytes (a compression bomb?)`);
      }
      throw new ValueError(`Cannot decode a payload encrypted with key "${id}": its compressed data is corrupt (${(err as Error).message})`);
    }
  }
}

/** The codec the environment configures, or undefined when no key is set. */
export function codecFromEnv(env: NodeJS.ProcessEnv = process.env): EncryptionCodec | undefined {
  const keys: CodecKey[] = [];
  if (env.LOOPWRIGHT_CODEC_KEY_FILE) {
    let text: string;
    try {
      text = fs.readFileSync(env.LOOPWRIGHT_CODEC_KEY_FILE, 'utf8');
    } catch (err) {
      throw new CodecConfigError(`LOOPWRIGHT_CODEC_KEY_FILE: cannot read ${env.LOOPWRIGHT_CODEC_KEY_FILE} (${(err as Error).message})`);
    }
    for (const [i, line] of text.split('\n').entries()) {
      const trimmed = line.trim();
      if (trimmed === '' || trimmed.startsWith('#')) continue;
      const colon = trimmed.indexOf(':');
      if (colon <= 0) throw new CodecConfigError(`LOOPWRIGHT_CODEC_KEY_FILE line ${i + 1}: expected <id>:<base64 key>`);
      keys.push({ id: trimmed.slice(0, colon), key: parseKey(trimmed.slice(colon + 1), `LOOPWRIGHT_CODEC_KEY_FILE line ${i + 1}`) });
    }
  } else if (env.LOOPWRIGHT_CODEC_KEY) {
    keys.push({ id: env.LOOPWRIGHT_CODEC_KEY_ID || 'default', key: parseKey(env.LOOPWRIGHT_CODEC_KEY, 'LOOPWRIGHT_CODEC_KEY') });
  } else {
    return undefined;
  }
  return new EncryptionCodec(keys, env.LOOPWRIGHT_CODEC_KEY_ID || keys[keys.length - 1]!.id);
}

/** The data converter option for clients and workers: the codec when configured. */
export function dataConverterFromEnv(env: NodeJS.ProcessEnv = process.env): { payloadCodecs: PayloadCodec[] } | undefined {
  const codec = codecFromEnv(env);
  return codec ? { payloadCodecs: [codec] } : undefined;
}

function parseKey(text: string, where: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) throw new CodecConfigError(`${where}: expected a base64 AES-256 key of 32 bytes, got ${key.length} bytes (make one with: openssl rand -base64 32)`);
  return key;
}
