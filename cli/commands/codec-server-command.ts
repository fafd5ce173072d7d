/**
 * `loopwright codec-server`: serve the payload codec's decode endpoint for the Web UI and the
 * `temporal` CLI, with the keys the environment configures. `LOOPWRIGHT_CODEC_MAX_BODY_BYTES`
 * changes the largest request body it reads (16 MiB).
 */
import { codecFromEnv } from '../../codec/encryption-codec';
import { startCodecServer } from '../../codec/codec-server';
import { onSignalGracefully } from '../exit-on-signal';
import { type CommandOutput, UsageError } from '../output';

/** Options of `loopwright codec-server` (the command line gives the defaults: port 8888, host 127.0.0.1). */
export interface CodecServerOptions {
  port: number;
  host: string;
  /** Browser origins allowed (default http://localhost:8233). */
  origin?: string[];
}

export async function codecServerCommand(options: CodecServerOptions, out: CommandOutput): Promise<number> {
  const codec = codecFromEnv();
  if (!codec) throw new UsageError('codec-server needs LOOPWRIGHT_CODEC_KEY or LOOPWRIGHT_CODEC_KEY_FILE');
  const server = await startCodecServer({
    codec,
    port: options.port,
    host: options.host,
    ...(options.origin?.length ? { origins: options.origin } : {}),
    ...(process.env.LOOPWRIGHT_CODEC_TOKEN ? { token: process.env.LOOPWRIGHT_CODEC_TOKEN } : {}),
    ...maxBodyFromEnv(process.env.LOOPWRIGHT_CODEC_MAX_BODY_BYTES),
  });
  out.log(`Codec server on ${server.url} (POST /decode, /encode). In the Web UI: Settings → Codec Server → ${server.url}`);
  await new Promise<void>((resolve) => onSignalGracefully(() => resolve()));
  await server.close();
  return 0;
}

/** `LOOPWRIGHT_CODEC_MAX_BODY_BYTES` as the server's option; a value that is not a positive whole number is a usage error. */
function maxBodyFromEnv(raw: string | undefined): { maxBodyBytes?: number } {
  if (raw === undefined || raw.trim() === '') return {};
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new UsageError(`LOOPWRIGHT_CODEC_MAX_BODY_BYTES must be a positive whole number of bytes, got "${raw}"`);
  return { maxBodyBytes: value };
}
