/**
 * Encrypted payloads: with the codec configured, no plaintext of a message reaches the server's
 * history or database files; the codec server decodes for the Web UI; a wrong key fails with a
 * clear message; keys rotate; and an encrypted history replays with the codec.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { NativeConnection, Worker } from '@temporalio/worker';
import { testWorkflowBundle } from '../support/workflow-bundle';
import { codecFromEnv, EncryptionCodec } from '../../codec/encryption-codec';
import { startCodecServer } from '../../codec/codec-server';
import { startTestTemporal, type TestTemporal } from '../support/temporal-server';
import { LoopwrightClient } from '../../client/session-client';
import { type FakeOpenAI, startFakeOpenAI, text } from '../../fake-model/server';
import { createWorker } from '../../worker/create-worker';
import { closeNativeConnection } from '../../cli/temporal-session';
import { copyExampleBundle, quietRuntime } from '../support/session-harness';

jest.setTimeout(120_000);

const SECRET = 'PLANTED-PLAINTEXT-7f3a9c';
let stateDir: string;
let server: TestTemporal;
let fake: FakeOpenAI;
let bundleCopy: ReturnType<typeof copyExampleBundle>;

beforeAll(async () => {
  quietRuntime();
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-codec-'));
  [server, fake] = await Promise.all([startTestTemporal({ dbFile: path.join(stateDir, 'temporal.db') }), startFakeOpenAI()]);
  bundleCopy = copyExampleBundle();
}, 120_000);

afterAll(async () => {
  await fake?.close();
  await server?.stop();
  bundleCopy?.cleanup();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

test('codec: no plaintext in history or database; the codec server decodes it; wrong keys fail clearly; keys rotate; the history replays', async () => {
  const keyFile = path.join(stateDir, 'keys.txt');
  const oldKey = randomBytes(32).toString('base64');
  const newKey = randomBytes(32).toString('base64');
  fs.writeFileSync(keyFile, `# rotated keys\nold:${oldKey}\nnew:${newKey}\n`);
  const codec = codecFromEnv({ LOOPWRIGHT_CODEC_KEY_FILE: keyFile })!;
  const dataConverter = { payloadCodecs: [codec] };

  const connection = await Connection.connect({ address: server.address });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const workflowBundle = await testWorkflowBundle();
  const worker = await createWorker({
    connection: nativeConnection,
    taskQueue: 'codec',
    workflowBundle,
    dataConverter,
    activityOptions: { model: { baseURL: fake.baseURL, apiKey: 'test-key' } },
  });
  const running = worker.run();
  try {
    const lw = new LoopwrightClient(new Client({ connection, dataConverter }), 'codec');
    fake.enqueue(text(`I will remember ${SECRET}.`));
    const session = await lw.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator' });
    await expect(session.send(`Remember ${SECRET}`)).resolves.toMatchObject({ success: true });
    expect((await session.messages()).some((m) => m.content?.includes(SECRET))).toBe(true);

    // Read without the codec, the history holds only ciphertext.
    const raw = await new Client({ connection }).workflow.getHandle(session.workflowId).fetchHistory();
    const rawJson = historyToJSON(raw);
    expect(rawJson).not.toContain(SECRET);
    expect(rawJson).toContain(Buffer.from('binary/encrypted').toString('base64'));

    // The codec server decodes a payload from that history for the UI (CORS for its origin).
    const started = raw.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    const codecServer = await startCodecServer({ codec, port: 0, token: 'tkn' });
    try {
      const body = JSON.stringify({
        payloads: [
          { metadata: Object.fromEntries(Object.entries(started.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v!).toString('base64')])), data: Buffer.from(started.data!).toString('base64') },
        ],
      });
      const denied = await fetch(`${codecServer.url}/decode`, { method: 'POST', body });
      expect(denied.status).toBe(401);
      const decoded = await fetch(`${codecServer.url}/decode`, { method: 'POST', body, headers: { Authorization: 'Bearer tkn', Origin: 'http://localhost:8233' } });
      expect(decoded.status).toBe(200);
      expect(decoded.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
      const payload = ((await decoded.json()) as { payloads: { data: string }[] }).payloads[0]!;
      expect(Buffer.from(payload.data, 'base64').toString()).toContain('"agentId":"facilitator"');
    } finally {
      await codecServer.close();
    }

    // A wrong key says so; an old key still reads what it encrypted.
    const wrong = new EncryptionCodec([{ id: 'new', key: randomBytes(32) }], 'new');
    await expect(wrong.decode([started])).rejects.toThrow(/not the one it was encrypted with/);
    const oldOnly = new EncryptionCodec([{ id: 'old', key: Buffer.from(oldKey, 'base64') }], 'old');
    const byOld = await oldOnly.encode([{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"x"') }]);
    const [back] = await codec.decode(byOld);
    expect(Buffer.from(back!.data!).toString()).toBe('"x"');
    expect(Buffer.from(back!.metadata!.encoding!).toString()).toBe('json/plain');
    await expect(oldOnly.decode(await codec.encode(byOld))).rejects.toThrow(/no such key.*known: old/);

    // The encrypted history replays with the codec.
    await session.end();
    await session.result();
    const history = await session.workflow.fetchHistory();
    await expect(Worker.runReplayHistory({ workflowBundle, dataConverter }, history, session.workflowId)).resolves.toBeUndefined();
  } finally {
    worker.shutdown();
    await running;
    await closeNativeConnection(nativeConnection);
    await connection.close();
  }

  // Nothing readable in the server's database files either.
  await server.stop();
  for (const file of fs.readdirSync(stateDir)) {
    expect({ file, found: fs.readFileSync(path.join(stateDir, file)).toString('latin1').includes(SECRET) }).toEqual({ file, found: false });
  }
});
