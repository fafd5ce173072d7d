import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { startDevServer } from '../../../client/server/dev-server';
import type { DevServerHandle } from '../../../client/server/dev-server';
import { DevServerStartError } from '../../../client/server/errors';
import { isPortOpen } from '../../../client/server/free-port';
import { checkTemporal } from '../../../client/server/health';
import { isProcessAlive } from '../../../client/server/server-state';
import { restartTestTemporal, startTestTemporal, stopTestTemporal } from '../../support/temporal-server';

/** One real dev server shared by the tests below, in order: start, use, restart, stop. */
let server: DevServerHandle;

beforeAll(async () => {
  server = await startTestTemporal();
});
afterAll(async () => {
  await stopTestTemporal(server);
});

test('startDevServer: starts a real server on a free port and it passes the health check', async () => {
  expect(server.address).toBe(`127.0.0.1:${server.port}`);
  expect(server.port).not.toBe(7233);
  expect(server.uiUrl).toBeUndefined();
  expect(server.pid).toBeGreaterThan(0);
  expect(await checkTemporal({ address: server.address })).toBeUndefined();
});

test('startDevServer: a plain Connection.connect can describe the default namespace', async () => {
  const connection = await Connection.connect({ address: server.address });
  try {
    const described = await connection.workflowService.describeNamespace({ namespace: 'default' });
    expect(described.namespaceInfo?.name).toBe('default');
  } finally {
    await connection.close();
  }
});

test('startDevServer: a restart on the same SQLite file keeps namespaces and workflow executions', async () => {
  const workflowId = `lw-restart-${Date.now()}`;
  let connection = await Connection.connect({ address: server.address });
  try {
    await connection.workflowService.registerNamespace({
      namespace: 'lw-restart',
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    // No worker polls this queue: the execution simply stays open, which is what we look for.
    await new Client({ connection }).workflow.start('neverRuns', { taskQueue: 'lw-nobody', workflowId, args: [] });
  } finally {
    await connection.close();
  }
  const oldPid = server.pid as number;
  server = await restartTestTemporal(server);
  expect(isProcessAlive(oldPid)).toBe(false);
  expect(server.pid).not.toBe(oldPid);
  connection = await Connection.connect({ address: server.address });
  try {
    const namespace = await connection.workflowService.describeNamespace({ namespace: 'lw-restart' });
    expect(namespace.namespaceInfo?.name).toBe('lw-restart');
    const description = await new Client({ connection }).workflow.getHandle(workflowId).describe();
    expect(description.status.name).toBe('RUNNING');
    expect(description.type).toBe('neverRuns');
  } finally {
    await connection.close();
  }
});

test('startDevServer: stop() ends the process and closes the port, and is safe to repeat', async () => {
  const { pid, port } = server;
  await server.stop();
  expect(isProcessAlive(pid as number)).toBe(false);
  expect(await isPortOpen('127.0.0.1', port)).toBe(false);
  await expect(server.stop()).resolves.toBeUndefined();
});

test('startDevServer: a server that exits at once fails fast with the tail of its output', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-badcli-'));
  try {
    const cli = path.join(dir, 'temporal');
    fs.writeFileSync(cli, '#!/bin/sh\necho "listen tcp 127.0.0.1: bind: address already in use" >&2\nexit 1\n', { mode: 0o755 });
    const started = Date.now();
    const error = await startDevServer({ cliPath: cli, port: 0, ui: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DevServerStartError);
    expect((error as Error).message).toMatch(/did not start: the server exited \(code 1\) before it was ready/);
    expect((error as DevServerStartError).logTail).toContain('address already in use');
    expect(Date.now() - started).toBeLessThan(5_000);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
