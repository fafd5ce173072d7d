/**
 * What the browser tests run against: a real Temporal dev server, a real worker with the real
 * activities in this process, the fake model server (which can stream slowly), a copy of the
 * example bundle, and `loopwright serve` as a process of its own (so a test can kill it mid-turn
 * and start it again on the same port), with the chat app it serves opened in headless Chromium.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import type { LoopwrightClient } from '../../client/session-client';
import { cliEnvironment } from '../e2e/cli-runner';
import { copyExampleBundle, startSessionHarness, type SessionHarness } from '../support/session-harness';
import { findFreePort } from '../support/temporal-server';
import { launchChromium } from './chromium';
import { startServe, type ServeProcess } from './serve-process';

/** Everything a browser test file needs, started once in `beforeAll`. */
export interface AppHarness {
  h: SessionHarness;
  loopwright: LoopwrightClient;
  taskQueue: string;
  /** The example bundle's copy (its documents land in its docs/ folder). */
  bundle: string;
  serve: ServeProcess;
  browser: Browser;
  /**
   * Start another serve process for the same server, worker and state folder, on a port of its own:
   * a test can kill and restart it while the other tests go on with `serve`. Killed in `afterAll`.
   */
  startOwnServe(): Promise<OwnServe>;
}

/** A serve process of one test's own (see `AppHarness.startOwnServe`). */
export interface OwnServe {
  readonly url: string;
  /** Kill it and start another on the same port. */
  restart(): Promise<void>;
}

/**
 * Register the harness with Jest: started in `beforeAll`, stopped in `afterAll`. Read the fields
 * inside tests.
 */
export function useAppHarness(): AppHarness {
  const shared = {} as AppHarness;
  let bundleCopy: ReturnType<typeof copyExampleBundle> | undefined;
  let stateDir: string | undefined;
  let env: NodeJS.ProcessEnv = {};
  const own: ServeProcess[] = [];
  beforeAll(async () => {
    stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-browser-state-'));
    bundleCopy = copyExampleBundle('lw-browser-bundle-');
    shared.bundle = bundleCopy.bundle;
    const [h, browser] = await Promise.all([startSessionHarness(), launchChromium()]);
    shared.h = h;
    shared.browser = browser;
    const worker = await h.startWorker();
    shared.loopwright = worker.loopwright;
    shared.taskQueue = worker.taskQueue;
    const port = await findFreePort();
    env = cliEnvironment({ TEMPORAL_ADDRESS: h.server.address, OPENAI_BASE_URL: h.fake.baseURL, LOOPWRIGHT_TASK_QUEUE: worker.taskQueue, LOOPWRIGHT_STATE_DIR: stateDir });
    shared.serve = await startServe(env, port);
    shared.startOwnServe = async () => {
      const ownPort = await findFreePort();
      let current = await startServe(env, ownPort);
      own.push(current);
      return {
        url: current.url,
        restart: async () => {
          await current.kill();
          current = await startServe(env, ownPort);
          own.push(current);
        },
      };
    };
  }, 180_000);
  afterAll(async () => {
    await shared.browser?.close().catch(() => undefined);
    await shared.serve?.kill().catch(() => undefined);
    await Promise.all(own.map((serve) => serve.kill().catch(() => undefined)));
    await shared.h?.close();
    bundleCopy?.cleanup();
    if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
  });
  return shared;
}
