/**
 * Reply bombs: a model server that answers with a compression bomb (gzip, deflate, brotli; in a
 * success or an error reply) or with a body that never ends cannot take a worker's memory. The
 * worker, a `loopwright worker` process talking to the fake server through the real openai client,
 * stops reading at the reply-body limit; the turn fails with `ModelReplyTooLarge` at once, naming
 * the limit and the bytes read; the worker's peak memory stays bounded; and the session takes the
 * next message.
 */
import { Client, Connection } from '@temporalio/client';
import { LoopwrightClient, type SessionHandle } from '../../client/session-client';
import { DEFAULT_MAX_REPLY_BODY_BYTES, MODEL_REPLY_TOO_LARGE } from '../../common/model-call';
import { bombBody } from '../../fake-model/bombs';
import { bomb, DEFAULT_BOMB_BYTES, endless, type FakeOpenAI, startFakeOpenAI, type Step, text } from '../../fake-model/server';
import { copyExampleBundle } from '../support/session-harness';
import { startTestTemporal, type TestTemporal } from '../support/temporal-server';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { CAN_MEASURE_PEAK, peakSinceReset, resetPeak } from './process-memory';

jest.setTimeout(180_000);

/** Largest rise of the worker's peak resident memory in a bombed turn over its baseline: generous, a safety check, not a benchmark. */
const MAX_RISE_BYTES = 150 * 1024 * 1024;

let server: TestTemporal;
let fake: FakeOpenAI;
let connection: Connection;
let bundleCopy: ReturnType<typeof copyExampleBundle>;
let worker: WorkerProcess;
let session: SessionHandle;
/** The worker's resident memory after one ordinary turn, before any bomb: each bombed turn's peak is measured against it. */
let baseline = 0;

beforeAll(async () => {
  [server, fake] = await Promise.all([startTestTemporal(), startFakeOpenAI()]);
  // Compressed here once, before any measurement (the fake server runs in this process, not the worker's).
  await Promise.all((['gzip', 'deflate', 'br'] as const).map((encoding) => bombBody(encoding, DEFAULT_BOMB_BYTES)));
  connection = await Connection.connect({ address: server.address });
  bundleCopy = copyExampleBundle();
  worker = await startWorkerProcess({
    TEMPORAL_ADDRESS: server.address,
    LOOPWRIGHT_TASK_QUEUE: 'reply-bombs',
    OPENAI_BASE_URL: fake.baseURL,
    OPENAI_API_KEY: 'sk-bomb-test-key',
  });
  session = await new LoopwrightClient(new Client({ connection }), 'reply-bombs').start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator' });
  // One ordinary turn first, so that loading the model call's code is not counted against a bomb.
  fake.enqueue(text('Ready.'));
  await expect(session.send('Warm up')).resolves.toMatchObject({ success: true });
  if (CAN_MEASURE_PEAK) baseline = resetPeak(worker.child.pid!);
}, 180_000);

afterAll(async () => {
  await worker?.kill('SIGKILL');
  await connection?.close();
  await fake?.close();
  await server?.stop();
  bundleCopy?.cleanup();
});

const rises: Record<string, number> = {};

afterAll(() => {
  // The figures, for the record (the README quotes them).
  if (Object.keys(rises).length > 0) console.log(`worker peak memory rise per bombed turn (MB): ${JSON.stringify(rises)}`);
});

test.each<[string, Step]>([
  ['a gzip bomb', bomb('gzip')],
  ['a deflate bomb', bomb('deflate')],
  ['a brotli bomb', bomb('br')],
  ['a gzip bomb in an error reply', bomb('gzip', { status: 500 })],
  ['an endless chunked body', endless()],
  ['an endless gzip stream', endless({ encoding: 'gzip' })],
])('reply bombs: %s fails the turn at once, typed, with bounded worker memory, and the session goes on', async (what, step) => {
  const pid = worker.child.pid!;
  fake.reset();
  fake.enqueue(step, text(`Fine after ${what}.`));
  // Against the baseline, not the resident size now: memory a process freed often stays resident and would hide a later bomb.
  if (CAN_MEASURE_PEAK) resetPeak(pid);

  const failed = await session.send(`Answer me (${what})`);
  if (CAN_MEASURE_PEAK) {
    const rise = peakSinceReset(pid) - baseline;
    rises[what] = Math.round(rise / 1e5) / 10;
    expect(rise).toBeLessThan(MAX_RISE_BYTES);
  }

  expect(failed.status).toBe('failed');
  expect(failed.error).toContain(`over the limit of ${DEFAULT_MAX_REPLY_BODY_BYTES} bytes`);
  expect(failed.error).toMatch(/\(\d+ bytes read, decoded\)/);
  await expect(lastActivityFailure(session)).resolves.toMatchObject({ type: MODEL_REPLY_TOO_LARGE, nonRetryable: true });
  // Not retried: one request for the bombed turn.
  expect(fake.requests.length).toBe(1);
  if (step.kind === 'endless') {
    // The client hung up: the server stopped producing, long before a bomb's worth (compressed, the
    // sockets' buffers hold up to a thousand times their size of filler).
    await fake.waitForAborts(1);
    const produced = fake.requests[0]!.bodyBytes!;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fake.requests[0]!.bodyBytes).toBe(produced);
    expect(produced).toBeLessThan(step.encoding === 'identity' ? 4 * DEFAULT_MAX_REPLY_BODY_BYTES : DEFAULT_BOMB_BYTES);
  }

  // The worker lives on and the session takes the next message.
  expect(worker.child.exitCode).toBeNull();
  await expect(session.send('Still there?')).resolves.toMatchObject({ success: true, response: `Fine after ${what}.` });
});

/** Type and retryability of the session's last failed activity, from its history. */
async function lastActivityFailure(handle: SessionHandle): Promise<{ type?: string | null; nonRetryable?: boolean | null } | undefined> {
  const events = (await handle.workflow.fetchHistory()).events ?? [];
  const failed = events.filter((e) => e.activityTaskFailedEventAttributes).at(-1);
  const info = failed?.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo;
  return info ? { type: info.type, nonRetryable: info.nonRetryable } : undefined;
}
