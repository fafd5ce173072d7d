/**
 * Child process of model-process.ts: the fake model server with the bench responder, on a free
 * loopback port. Prints `listening <baseURL>`; stops on SIGTERM. It forgets recorded requests as
 * it goes, so a long bench does not grow its memory.
 */
import { startFakeOpenAI } from '../../fake-model/server';
import { benchResponder } from './bench-responder';

/** Recorded requests kept before they are dropped. */
const KEEP_REQUESTS = 200;

async function main(): Promise<void> {
  const fake = await startFakeOpenAI({ responder: benchResponder });
  fake.events.on('request', (request: { index: number }) => {
    if ((request.index + 1) % KEEP_REQUESTS === 0) {
      setImmediate(() => {
        fake.reset();
        fake.setResponder(benchResponder);
      });
    }
  });
  process.stdout.write(`listening ${fake.baseURL}\n`);
  process.once('SIGTERM', () => void fake.close().finally(() => process.exit(0)));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
