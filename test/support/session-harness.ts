/**
 * Shared set-up of workflow tests: a real Temporal dev server, a real worker with the real
 * activities, the fake OpenAI server, and a copy of the example bundle in a temp folder.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker, type WorkflowBundle } from '@temporalio/worker';
import { testWorkflowBundle } from './workflow-bundle';
import { startTestTemporal, type TestTemporal } from './temporal-server';
import { LoopwrightClient } from '../../client/session-client';
import type { ActivitiesOptions } from '../../activities/session-activities';
import { createWorker } from '../../worker/create-worker';
import { closeNativeConnection } from '../../cli/temporal-session';
import { type FakeOpenAI, startFakeOpenAI } from '../../fake-model/server';

/** Folder of the example bundle in the repository. */
export const EXAMPLE_BUNDLE = path.resolve(__dirname, '../../bundles/requirements-facilitator');

/** Copy the example bundle into a fresh temp folder; its outputs land inside that folder. */
export function copyExampleBundle(prefix = 'lw-bundle-'): { root: string; bundle: string; cleanup(): void } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const bundle = path.join(root, 'requirements-facilitator');
  fs.cpSync(EXAMPLE_BUNDLE, bundle, { recursive: true });
  return { root, bundle, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/** Everything a workflow test file needs, started once in `beforeAll`. */
export interface SessionHarness {
  server: TestTemporal;
  fake: FakeOpenAI;
  workflowBundle: WorkflowBundle;
  connection: Connection;
  client: Client;
  nativeConnection: NativeConnection;
  /** Start a worker on a fresh task queue and return a client bound to it. */
  startWorker(options?: { activities?: ActivitiesOptions; taskQueue?: string }): Promise<{ worker: Worker; loopwright: LoopwrightClient; taskQueue: string; stop(): Promise<void> }>;
  close(): Promise<void>;
}

let queueCounter = 0;

/** Start the server, the fake model and bundle the workflow code (once per test file). */
export async function startSessionHarness(options: { dbFile?: string; dynamicConfig?: readonly string[] } = {}): Promise<SessionHarness> {
  quietRuntime();
  const [server, fake, workflowBundle] = await Promise.all([startTestTemporal({ dbFile: options.dbFile, dynamicConfig: options.dynamicConfig }), startFakeOpenAI(), testWorkflowBundle()]);
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const workers: { stop(): Promise<void> }[] = [];
  return {
    server,
    fake,
    workflowBundle,
    connection,
    client,
    nativeConnection,
    async startWorker(opts = {}) {
      const taskQueue = opts.taskQueue ?? `test-${process.pid}-${++queueCounter}`;
      const worker = await createWorker({
        connection: nativeConnection,
        taskQueue,
        workflowBundle,
        activityOptions: { model: { baseURL: fake.baseURL, apiKey: 'test-key' }, ...opts.activities },
        // A test that stops a worker mid-way has its sessions move to the next one after 1 s, not the
        // 10 s a session's next step otherwise waits for the worker that has it cached.
        overrides: { stickyQueueScheduleToStartTimeout: '1s' },
      });
      const running = worker.run();
      const stop = async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running;
      };
      workers.push({ stop });
      return { worker, loopwright: new LoopwrightClient(client, taskQueue), taskQueue, stop };
    },
    async close() {
      await Promise.all(workers.map((w) => w.stop().catch(() => undefined)));
      await closeNativeConnection(nativeConnection);
      await connection.close();
      await fake.close();
      await server.stop();
    },
  };
}

/** Workers log every iteration at INFO; tests show warnings only (LOOPWRIGHT_LOG_LEVEL overrides). */
export function quietRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger((process.env.LOOPWRIGHT_LOG_LEVEL as 'INFO' | undefined) ?? 'WARN') });
  } catch {
    // Already installed in this process (another test file ran first): its logger stays.
  }
}

/** What `useSessionHarness` gives a test file once its `beforeAll` ran. */
export interface SharedSession {
  h: SessionHarness;
  bundle: string;
  loopwright: LoopwrightClient;
}

/**
 * The usual set-up of a workflow test file, registered with Jest: one harness and one worker per
 * file, a fresh copy of the example bundle, and the fake model's script reset before each test.
 * Read the fields inside tests (they are set in `beforeAll`).
 */
export function useSessionHarness(options: { dynamicConfig?: readonly string[] } = {}): SharedSession {
  const shared = {} as SharedSession;
  let bundleCopy: ReturnType<typeof copyExampleBundle> | undefined;
  beforeAll(async () => {
    shared.h = await startSessionHarness(options);
    bundleCopy = copyExampleBundle();
    shared.bundle = bundleCopy.bundle;
    shared.loopwright = (await shared.h.startWorker()).loopwright;
  }, 120_000);
  afterAll(async () => {
    await shared.h?.close();
    bundleCopy?.cleanup();
  });
  beforeEach(() => shared.h.fake.reset());
  return shared;
}
