import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDevServer } from '../../client/server/dev-server';
import type { DevServerHandle } from '../../client/server/dev-server';
import { findTemporalCli } from '../../client/server/find-temporal';

/** Temporary folders created for test servers, removed by {@link stopTestTemporal}. */
const ownedDirs = new WeakMap<DevServerHandle, string>();

/** Options for {@link startTestTemporal}. */
export interface TestTemporalOptions {
  /** SQLite file (default: a fresh one in a temporary folder). */
  dbFile?: string;
  /** gRPC port (default: a free one). */
  port?: number;
}

/**
 * Starts a real Temporal dev server for a Jest test: free port, no Web UI, a SQLite file in a new
 * temporary folder, so the test can stop it and start it again on the same port and file.
 */
export async function startTestTemporal(options: TestTemporalOptions = {}): Promise<DevServerHandle> {
  const cli = await findTemporalCli({ install: true });
  let dbFile = options.dbFile;
  let owned: string | undefined;
  if (dbFile === undefined) {
    owned = fs.mkdtempSync(path.join(os.tmpdir(), 'loopwright-temporal-'));
    dbFile = path.join(owned, 'temporal.db');
  }
  const handle = await startDevServer({ cliPath: cli.path, dbFile, port: options.port ?? 0, ui: false });
  if (owned !== undefined) ownedDirs.set(handle, owned);
  return handle;
}

/**
 * Stops a test server and starts it again on the same port and SQLite file (what a server restart
 * looks like to workers and clients). The returned handle replaces the old one.
 */
export async function restartTestTemporal(handle: DevServerHandle): Promise<DevServerHandle> {
  await handle.stop();
  const next = await startDevServer({ cliPath: handle.cliPath, dbFile: handle.dbFile, port: handle.port, ui: false });
  const owned = ownedDirs.get(handle);
  if (owned !== undefined) ownedDirs.set(next, owned);
  return next;
}

/** Stops a test server and removes the temporary folder {@link startTestTemporal} made for it. */
export async function stopTestTemporal(handle: DevServerHandle): Promise<void> {
  await handle.stop();
  const owned = ownedDirs.get(handle);
  if (owned !== undefined) fs.rmSync(owned, { recursive: true, force: true });
}
