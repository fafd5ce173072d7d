import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DevServerHandle } from '../../../client/server/dev-server';
import { ensureTemporal } from '../../../client/server/ensure-server';
import { findFreePort, isPortOpen } from '../../../client/server/free-port';
import { serverCommand } from '../../../client/server/server-command';
import { TemporalConfigError } from '../../../client/server/errors';
import { isProcessAlive, readServerState, serverStateFile, writeServerState } from '../../../client/server/server-state';
import { startTestTemporal, stopTestTemporal } from '../../support/temporal-server';

let stateDir: string;
const logs: string[] = [];
const log = (line: string): void => {
  logs.push(line);
};

beforeEach(() => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-ensure-'));
  logs.length = 0;
});
afterEach(() => {
  fs.rmSync(stateDir, { recursive: true, force: true });
});

test('ensureTemporal: TEMPORAL_ADDRESS is used as given and nothing is started', async () => {
  // No CLI on this PATH and an empty tools folder: starting a server would fail loudly.
  const env = { TEMPORAL_ADDRESS: '127.0.0.1:1', TEMPORAL_NAMESPACE: 'team', PATH: '/nonexistent', LOOPWRIGHT_TOOLS_DIR: stateDir };
  const target = await ensureTemporal({ env, stateDir, log });
  expect(target).toEqual({ address: '127.0.0.1:1', namespace: 'team', embedded: false, started: false });
  expect(fs.readdirSync(stateDir)).toEqual([]);
  expect(logs).toEqual([]);
});

test('ensureTemporal: a bad environment value is named before anything else happens', async () => {
  const error = await ensureTemporal({ env: { TEMPORAL_TLS: 'sometimes' }, stateDir, log }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(TemporalConfigError);
  expect((error as TemporalConfigError).field).toBe('TEMPORAL_TLS');
  expect((error as Error).message).toContain('TEMPORAL_TLS');
  expect(fs.readdirSync(stateDir)).toEqual([]);
});

describe('with a running server recorded in the state folder', () => {
  let server: DevServerHandle;
  beforeAll(async () => {
    server = await startTestTemporal();
  });
  afterAll(async () => {
    await stopTestTemporal(server);
  });

  test('ensureTemporal: reuses the embedded server its pid file names, without starting another', async () => {
    writeServerState(serverStateFile(stateDir), { pid: server.pid as number, address: server.address, dbFile: server.dbFile as string });
    const target = await ensureTemporal({ env: { PATH: '/nonexistent', LOOPWRIGHT_TOOLS_DIR: stateDir }, stateDir, log });
    expect(target).toMatchObject({ address: server.address, namespace: 'default', embedded: true, started: false, pid: server.pid });
    expect(target.server).toBeUndefined();
    expect(logs).toEqual([]);
  });
});

test('ensureTemporal: with nothing running, starts the embedded server detached and reuses it next time', async () => {
  const [port, uiPort] = [await findFreePort(), await findFreePort()];
  const env = { ...process.env, TEMPORAL_ADDRESS: '' };
  const first = await ensureTemporal({ env, stateDir, log, port, uiPort });
  try {
    expect(first).toMatchObject({ address: `127.0.0.1:${port}`, namespace: 'default', embedded: true, started: true, uiUrl: `http://localhost:${uiPort}` });
    expect(logs).toEqual([
      `Started the embedded Temporal server (pid ${first.pid}) — Web UI http://localhost:${uiPort}; stop it with \`loopwright server stop\``,
    ]);
    expect(readServerState(serverStateFile(stateDir))).toMatchObject({ pid: first.pid, dbFile: path.join(stateDir, 'temporal.db') });
    expect(fs.existsSync(path.join(stateDir, 'temporal.db'))).toBe(true);

    const second = await ensureTemporal({ env, stateDir, log, port, uiPort });
    expect(second).toMatchObject({ address: first.address, embedded: true, started: false, pid: first.pid });
    expect(logs).toHaveLength(1);
  } finally {
    const quiet = { log: (): void => undefined, error: (): void => undefined };
    expect(await serverCommand(['stop', '--state-dir', stateDir], quiet)).toBe(0);
  }
  expect(isProcessAlive(first.pid as number)).toBe(false);
  expect(await isPortOpen('127.0.0.1', port)).toBe(false);
});
