/**
 * `loopwright serve`: the HTTP API, the session event streams and the chat app (serve/), on this
 * machine's Temporal server as the other commands find it (the embedded one is started when none
 * runs), with a worker in this process when no long-lived worker polls the task queue. Without a
 * model configured (OPENAI_API_KEY, OPENAI_BASE_URL) that worker talks to the scripted demo model,
 * on a task queue of its own, and says so. Prints the link to open (with the token when one is
 * needed) and runs until Ctrl-C.
 */
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { buildServer } from '../../serve/server';
import { loopbackHosts } from '../../serve/safety';
import { startFakeOpenAI, type FakeOpenAI } from '../../fake-model/server';
import { demoResponder } from '../../fake-model/demo-model';
import { EXIT } from '../exit-codes';
import { onSignalGracefully } from '../exit-on-signal';
import { hasLongLivedWorker, type RunningWorker, startInProcessWorker } from '../in-process-worker';
import type { CommandOutput } from '../output';
import { openTemporal } from '../temporal-session';
import { demoBundle, demoProject } from './demo-command';

/** Options of `loopwright serve`, as commander parsed them. */
export interface ServeOptions {
  host: string;
  port: number;
  token?: string;
  /** `--no-worker`: never run a worker in this process. */
  worker?: boolean;
}

/** The task queue of sessions started while serve uses the scripted model. */
export const SCRIPTED_TASK_QUEUE = 'loopwright-serve-scripted';

export async function serveCommand(options: ServeOptions, out: CommandOutput): Promise<number> {
  const token = options.token || process.env.LOOPWRIGHT_SERVE_TOKEN || undefined;
  if (loopbackHosts(options.host, options.port || 1) === undefined && token === undefined) {
    out.error(`loopwright serve: refusing to listen on ${options.host} without a token: pass --token <t> (or set LOOPWRIGHT_SERVE_TOKEN), or keep the default --host 127.0.0.1`);
    return EXIT.USAGE;
  }
  const realModel = Boolean(process.env.OPENAI_API_KEY || process.env.OPENAI_BASE_URL);
  let fake: FakeOpenAI | undefined;
  const temporal = await openTemporal(out, realModel ? {} : { taskQueue: process.env.LOOPWRIGHT_TASK_QUEUE || SCRIPTED_TASK_QUEUE });
  let worker: RunningWorker | undefined;
  try {
    if (!realModel) {
      fake = await startFakeOpenAI({ responder: demoResponder });
      out.error(`Model: no OPENAI_API_KEY or OPENAI_BASE_URL set, so sessions use Loopwright's SCRIPTED model (canned replies, not a real model) on task queue ${temporal.taskQueue}`);
    }
    if (options.worker !== false && (fake !== undefined || !(await hasLongLivedWorker(temporal)))) {
      worker = await startInProcessWorker(temporal, fake ? { model: { baseURL: fake.baseURL, apiKey: 'scripted' } } : undefined);
      out.error(`Worker: running one in this process on task queue ${temporal.taskQueue}`);
    }
    let port = options.port;
    const { app } = await buildServer({
      context: {
        loopwright: temporal.loopwright,
        client: temporal.client,
        temporal: { address: temporal.target.address, namespace: temporal.namespace },
        taskQueue: temporal.taskQueue,
        ...(temporal.uiUrl ? { uiUrl: temporal.uiUrl } : {}),
      },
      ...(token !== undefined ? { token } : {}),
      allowedHosts: () => loopbackHosts(options.host, port),
      exampleBundle: demoBundle(),
      // The example bundle's sessions work where `loopwright demo`'s do, never in the package's folder.
      exampleProject: demoProject(),
      scriptedModel: fake !== undefined,
    });
    await app.listen({ host: options.host, port: options.port });
    port = (app.server.address() as AddressInfo).port;
    const shown = options.host === '0.0.0.0' || options.host === '::' ? os.hostname() : options.host.includes(':') ? `[${options.host}]` : options.host;
    const link = `http://${shown}:${port}/${token !== undefined ? `?token=${encodeURIComponent(token)}` : ''}`;
    out.error(`Loopwright serve: the app and the API (/api, /api/openapi.json) on ${options.host}:${port}, Temporal at ${temporal.target.address}; Ctrl-C to stop`);
    out.log(link);
    await new Promise<void>((resolve) => {
      const release = onSignalGracefully(() => {
        release();
        resolve();
      });
    });
    out.error('Stopping');
    await app.close();
    return 0;
  } finally {
    await worker?.stop();
    await temporal.close();
    await fake?.close();
  }
}
