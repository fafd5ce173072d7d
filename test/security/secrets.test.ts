/**
 * No secret anywhere: an API key that the model server echoes back in every field of its error,
 * encoded every way a server may (base64 and base64url at each byte offset, hex, percent- and
 * JSON-escaped, inside quoted request headers), in error bodies and in a reply, and credentials put
 * into OPENAI_BASE_URL, appear in no encoding in any workflow history (payloads decoded), worker log
 * (the openai client's own debug log included) or byte of the Temporal server's database files.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { startTestTemporal, type TestTemporal } from '../support/temporal-server';
import { LoopwrightClient } from '../../client/session-client';
import { fault, type FakeOpenAI, raw, startFakeOpenAI, text } from '../../fake-model/server';
import { copyExampleBundle } from '../support/session-harness';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { BIN } from '../e2e/cli-runner';
import { execFile } from 'node:child_process';
import { echoesOf, encodedLeaks, historyWithPayloads } from './encoded-forms';

jest.setTimeout(120_000);

const API_KEY = 'sk-planted-Q7x9LmZpT4vB2nR8';
const URL_USER = 'planteduser';
const URL_PASSWORD = 'Pl4ntedPassw0rd';

let stateDir: string;
let server: TestTemporal;
let fake: FakeOpenAI;
let connection: Connection;
let bundleCopy: ReturnType<typeof copyExampleBundle>;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-secrets-'));
  [server, fake] = await Promise.all([startTestTemporal({ dbFile: path.join(stateDir, 'temporal.db') }), startFakeOpenAI()]);
  connection = await Connection.connect({ address: server.address });
  bundleCopy = copyExampleBundle();
}, 120_000);

afterAll(async () => {
  await worker?.kill('SIGKILL');
  await connection?.close();
  await fake?.close();
  await server?.stop();
  bundleCopy?.cleanup();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

/** Runs a command to its end (at most 60 s): its exit code and everything it wrote. */
function execFileOutcome(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { env, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/** Every secret found in `text`, in any encoding (encoded-forms.ts). */
function secretsIn(text: string): string[] {
  return encodedLeaks(text, [API_KEY, URL_USER, URL_PASSWORD]);
}

test('secrets: an echoed API key and base-URL credentials reach no history, log or database file', async () => {
  // A worker whose base URL holds credentials refuses to start, and says so without them; it is
  // tried while the worker of the rest of the test starts.
  const refusing = execFileOutcome(process.execPath, [BIN, 'worker'], {
    ...process.env,
    TEMPORAL_ADDRESS: server.address,
    LOOPWRIGHT_TASK_QUEUE: 'secrets-refused',
    OPENAI_BASE_URL: fake.baseURL.replace('http://', `http://${URL_USER}:${URL_PASSWORD}@`),
    OPENAI_API_KEY: API_KEY,
  });
  const taskQueue = 'secrets';
  worker = await startWorkerProcess({
    TEMPORAL_ADDRESS: server.address,
    LOOPWRIGHT_TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: fake.baseURL,
    OPENAI_API_KEY: API_KEY,
    LOOPWRIGHT_LOG_LEVEL: 'DEBUG',
    // The openai client's own log, replies and error bodies included.
    OPENAI_LOG: 'debug',
  });
  const refused = await refusing;
  expect(refused.code).not.toBe(0);
  expect(refused.output).toMatch(/OPENAI_BASE_URL.*must not hold credentials/);
  expect(secretsIn(refused.output)).toEqual([]);

  // The server echoes the key in the message, the type and the code, on a retried and a final error.
  const echo = { error: { message: `Incorrect API key provided: ${API_KEY}`, type: API_KEY, code: API_KEY } };
  fake.enqueue(fault(500, { body: echo }), fault(401, { body: echo }), text('Recovered.'));
  const lw = new LoopwrightClient(new Client({ connection }), taskQueue);
  const session = await lw.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator' });
  const failed = await session.send('hello');
  expect(failed.status).toBe('failed');
  expect(failed.error).toMatch(/OPENAI_API_KEY/);
  await expect(session.send('again')).resolves.toMatchObject({ success: true });
  // The key did reach the model server: it is a real key that must not leak.
  expect(fake.requests[0]!.hasAuthorization).toBe(true);

  // Now echoed encoded: in a retried error, in a final error that is not JSON, and in a reply.
  const echoes = echoesOf(API_KEY);
  const encoded = { error: { message: `Incorrect API key provided. Request headers: ${echoes.join('; ')}`, type: echoes[2], code: echoes[6] } };
  fake.enqueue(fault(500, { body: encoded }), raw(400, `Bad request from ${echoes.join('\n')}`, { 'content-type': 'text/plain' }), text(`You sent: ${echoes.join(' | ')}`, { model: echoes[1] }));
  await expect(session.send('encoded')).resolves.toMatchObject({ status: 'failed' });
  const echoed = await session.send('echo it');
  expect(echoed).toMatchObject({ success: true });
  expect(echoed.response).toContain('You sent: ');
  expect(echoed.response).toContain('[redacted]');
  await session.end();
  await session.result();

  const history = historyWithPayloads(historyToJSON(await session.workflow.fetchHistory()));
  // The search itself finds what it looks for, in every encoding echoed.
  expect(echoes.every((echo) => secretsIn(echo).length > 0)).toBe(true);
  expect(secretsIn(history)).toEqual([]);
  await worker.kill('SIGTERM');
  expect(secretsIn(worker.output())).toEqual([]);
  // The openai client did log the replies and error bodies (OPENAI_LOG), through the redacting logger.
  expect(worker.output()).toContain('response parsed');
  await server.stop();
  for (const file of fs.readdirSync(stateDir)) {
    const bytes = fs.readFileSync(path.join(stateDir, file)).toString('latin1');
    expect({ file, found: secretsIn(bytes) }).toEqual({ file, found: [] });
  }
});
