import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { spawnDevServer } from '../../../client/server/dev-server';
import { DevServerStartError } from '../../../client/server/errors';
import { checkTemporal, isPortOpen } from '../../../client/server/health';
import { SESSION_SEARCH_ATTRIBUTES } from '../../../common/search-attributes';
import { restartTestTemporal, startTestTemporal, type TestTemporal } from '../../support/temporal-server';

/** One server run by the SDK's test environment, shared by the tests below in order: start, use, restart, stop. */
let server: TestTemporal;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-devserver-'));
  server = await startTestTemporal({ dbFile: path.join(dir, 'temporal.db') });
});
afterAll(async () => {
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('test server: the SDK environment runs the CLI on a free port, healthy, with our search attributes registered', async () => {
  expect(server.address).toBe(`127.0.0.1:${server.port}`);
  expect(server.port).not.toBe(7233);
  expect(await checkTemporal(server.address)).toBeUndefined();
  const connection = await Connection.connect({ address: server.address });
  try {
    expect((await connection.workflowService.describeNamespace({ namespace: 'default' })).namespaceInfo?.name).toBe('default');
    // The extra arguments reached the server: the sessions' search attributes exist from the start.
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
    expect(Object.keys(customAttributes ?? {}).sort()).toEqual(SESSION_SEARCH_ATTRIBUTES.map((a) => a.name).sort());
  } finally {
    await connection.close();
  }
  // A file-backed server gets the SQLite pragmas: the write-ahead log is there.
  expect(fs.existsSync(path.join(dir, 'temporal.db-wal'))).toBe(true);
});

test('test server: a restart on the same port and SQLite file keeps namespaces and workflow executions', async () => {
  const workflowId = `lw-restart-${Date.now()}`;
  let connection = await Connection.connect({ address: server.address });
  try {
    await connection.workflowService.registerNamespace({ namespace: 'lw-restart', workflowExecutionRetentionPeriod: msToTs('1 day') });
    // No worker polls this queue: the execution simply stays open, which is what we look for.
    await new Client({ connection }).workflow.start('neverRuns', { taskQueue: 'lw-nobody', workflowId, args: [] });
  } finally {
    await connection.close();
  }
  const { port } = server;
  server = await restartTestTemporal(server);
  expect(server.port).toBe(port);
  connection = await Connection.connect({ address: server.address });
  try {
    expect((await connection.workflowService.describeNamespace({ namespace: 'lw-restart' })).namespaceInfo?.name).toBe('lw-restart');
    const description = await new Client({ connection }).workflow.getHandle(workflowId).describe();
    expect(description.status.name).toBe('RUNNING');
    expect(description.type).toBe('neverRuns');
  } finally {
    await connection.close();
  }
});

test('test server: stop() ends the server and closes the port, and is safe to repeat', async () => {
  await server.stop();
  expect(await isPortOpen('127.0.0.1', server.port)).toBe(false);
  await expect(server.stop()).resolves.toBeUndefined();
});

test('spawnDevServer: a server that exits at once fails fast with the tail of its log', async () => {
  const cli = path.join(dir, 'temporal');
  fs.writeFileSync(cli, '#!/bin/sh\necho "listen tcp 127.0.0.1: bind: address already in use" >&2\nexit 1\n', { mode: 0o755 });
  const started = Date.now();
  const error = await spawnDevServer({ cliPath: cli, stateDir: path.join(dir, 'state'), port: 1, detached: false }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(DevServerStartError);
  expect((error as Error).message).toMatch(/did not start: the server exited \(code 1\) before it was ready/);
  expect((error as DevServerStartError).logTail).toContain('address already in use');
  expect(fs.existsSync(path.join(dir, 'state', 'server.json'))).toBe(false);
  expect(Date.now() - started).toBeLessThan(5_000);
});
