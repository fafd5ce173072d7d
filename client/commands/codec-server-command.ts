/**
 * `loopwright codec-server`: serve the payload codec's decode endpoint for the Web UI and the
 * `temporal` CLI, with the keys the environment configures.
 */
import { parseArgs } from 'node:util';
import { codecFromEnv } from '../../codec/encryption-codec';
import { startCodecServer } from '../../codec/codec-server';
import { onSignalGracefully } from '../exit-on-signal';
import { type CommandOutput, UsageError } from '../output';

export async function codecServerCommand(argv: string[], out: CommandOutput): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { port: { type: 'string', default: '8888' }, host: { type: 'string', default: '127.0.0.1' }, origin: { type: 'string', multiple: true } },
  });
  const codec = codecFromEnv();
  if (!codec) throw new UsageError('codec-server needs LOOPWRIGHT_CODEC_KEY or LOOPWRIGHT_CODEC_KEY_FILE');
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number, got "${values.port}"`);
  const server = await startCodecServer({
    codec,
    port,
    host: values.host,
    ...(values.origin?.length ? { origins: values.origin } : {}),
    ...(process.env.LOOPWRIGHT_CODEC_TOKEN ? { token: process.env.LOOPWRIGHT_CODEC_TOKEN } : {}),
  });
  out.log(`Codec server on ${server.url} (POST /decode, /encode). In the Web UI: Settings → Codec Server → ${server.url}`);
  await new Promise<void>((resolve) => onSignalGracefully(() => resolve()));
  await server.close();
  return 0;
}
