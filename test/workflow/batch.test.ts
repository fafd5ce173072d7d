/**
 * Batch runs on the real dev server: one one-shot session per line of a JSONL file as child
 * workflows of `agentBatch`. Every item's result line is written once and the summary adds up; a
 * worker stopped mid-way and replaced starts no item's session twice, and neither does a terminated
 * batch run again under its id; a batch that continues as new still writes every item once;
 * cancelling a batch cancels its running sessions; a bad line is an error naming it before
 * anything starts. The fake model answers each item with its message.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BatchResultLine } from '../../common/batch-types';
import type { ChatMessage } from '../../common/messages';
import { BatchInputError } from '../../client/batch-client';
import type { LoopwrightClient } from '../../client/session-client';
import { delay, type RecordedRequest, type Step, text, toolCalls } from '../../fake-model/server';
import { type FakeLane, type FakeLanes, type LaneHarness, startLaneHarness } from '../support/fake-lanes';
import { type SessionHarness } from '../support/session-harness';

jest.setTimeout(90_000);

let h: SessionHarness;
let suite: LaneHarness | undefined;
/** Each test's own bundle copy, script and requests on the shared fake model (the tests run side by side). */
let lanes: FakeLanes;
let dir: string;
let batchCounter = 0;
/** The worker of every test but the one that stops and replaces its own. */
let loopwright: LoopwrightClient;

/** The item's message, as the model saw it. */
function itemMessage(request: RecordedRequest): string {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  return String(messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
}

/** LOOP items ask for a tool (and end max_iterations at one iteration), SLOW ones take `slowMs`; the rest are echoed. */
function responder(slowMs = 0, latencyMs = 0): (request: RecordedRequest) => Step {
  return (request) => {
    const message = itemMessage(request);
    if (message.includes('LOOP')) return toolCalls([{ name: 'read_file', arguments: { file_path: '{bundle-root}/workflows/intake/template.md' } }]);
    const reply = text(`done: ${message}`);
    if (message.includes('SLOW')) return delay(slowMs, reply);
    return latencyMs > 0 ? delay(latencyMs, reply) : reply;
  };
}

function writeItems(lines: string[]): string {
  const file = path.join(dir, `items-${++batchCounter}.jsonl`);
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

function readResults(file: string): BatchResultLine[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as BatchResultLine);
}

/** Requests of `lane` per item message. */
function requestsPerMessage(lane: FakeLane): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of lane.requests) counts.set(itemMessage(r), (counts.get(itemMessage(r)) ?? 0) + 1);
  return counts;
}

/** Runs of every child workflow of the batch, by workflow id. */
async function childRuns(batchId: string): Promise<Map<string, number>> {
  const runs = new Map<string, number>();
  for await (const w of h.client.workflow.list({ query: `WorkflowType = 'agentSession'` })) {
    if (w.workflowId.startsWith(`${batchId}-`)) runs.set(w.workflowId, (runs.get(w.workflowId) ?? 0) + 1);
  }
  return runs;
}

/** A batch on `lane`'s bundle copy, the folder around it its project. */
function start(lane: FakeLane, loopwright: LoopwrightClient, inputPath: string, extra: Record<string, unknown> = {}) {
  return loopwright.startBatch({ bundlePath: lane.bundle, agentId: 'facilitator', projectRoot: path.dirname(lane.bundle), inputPath, maxIterations: 1, ...extra });
}

beforeAll(async () => {
  suite = await startLaneHarness();
  ({ h, lanes, loopwright } = suite);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-batch-'));
}, 120_000);

afterAll(async () => {
  await suite?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test.concurrent('16 items at concurrency 4: one result line per item, in order, and a summary that adds up', async () => {
  const m = lanes.open();
  let inFlight = 0;
  let most = 0;
  let overlapped!: () => void;
  const overlap = new Promise<void>((resolve) => (overlapped = resolve));
  m.setResponder(async (request) => {
    inFlight += 1;
    most = Math.max(most, inFlight);
    if (inFlight > 1) overlapped();
    // Until two calls overlap, each waits for another (at most 5 s): at concurrency 4 the next item's
    // call comes at once, however loaded the machine; items run one at a time would never overlap.
    await (most > 1 ? new Promise((r) => setTimeout(r, 20)) : Promise.race([overlap, new Promise((r) => setTimeout(r, 5000))]));
    inFlight -= 1;
    return responder()(request);
  });
  const lines = Array.from({ length: 16 }, (_, i) =>
    i % 10 === 7 ? JSON.stringify({ message: `item ${i} LOOP`, id: `loop-${i}` }) : i % 2 ? JSON.stringify({ message: `item ${i}`, id: `id-${i}` }) : JSON.stringify(`item ${i}`),
  );
  lines.splice(5, 0, ''); // a blank line is no item
  const input = writeItems(lines);
  const batch = await start(m, loopwright, input, { workflowId: `batch-forty-${process.pid}`, concurrency: 4 });
  // The same id again, while it runs: the same batch, not a second one.
  const again = await start(m, loopwright, input, { workflowId: batch.workflowId, concurrency: 4 });
  expect(again.reattached).toBe(true);
  const summary = await batch.result();

  expect(summary).toMatchObject({ total: 16, started: 16, ok: 15, failed: 1, cancelled: 0, notStarted: 0, cancelledBatch: false, resultLines: 16 });
  expect(summary.byStatus).toEqual({ completed: 15, max_iterations: 1 });
  // The results file is named after the input file, beside it.
  expect(summary.outputPath).toBe(input.replace(/\.jsonl$/, '.results.jsonl'));
  const results = readResults(summary.outputPath);
  expect(results.map((r) => r.index)).toEqual(Array.from({ length: 16 }, (_, i) => i));
  expect(results[3]).toMatchObject({ index: 3, id: 'id-3', workflowId: `${batch.workflowId}-3`, status: 'completed', success: true, response: 'done: item 3' });
  expect(results[0]!.id).toBeUndefined();
  expect(results[7]).toMatchObject({ id: 'loop-7', status: 'max_iterations', success: false });
  expect(results[7]!.error).toBeTruthy();
  const tokens = results.reduce((sum, r) => sum + r.usage.totalTokens, 0);
  expect(tokens).toBeGreaterThan(0);
  expect(summary.usage.totalTokens).toBe(tokens);
  expect(most).toBeLessThanOrEqual(4);
  expect(most).toBeGreaterThan(1);
  for (const [message, n] of requestsPerMessage(m)) expect([message, n]).toEqual([message, 1]);
  expect(await loopwright.batch(batch.workflowId).state()).toMatchObject({ phase: 'done', ok: 15, failed: 1, running: 0 });
  expect(fs.existsSync(`${summary.outputPath}.journal`)).toBe(false);
  // Finished: the same id reattaches to it and its summary.
  const finished = await start(m, loopwright, input, { workflowId: batch.workflowId });
  expect(finished.reattached).toBe(true);
  expect(await finished.result()).toEqual(summary);
});

test.concurrent('a worker stopped mid-way and replaced: every item runs once, one result line each', async () => {
  const m = lanes.open();
  const first = await h.startWorker();
  // Five items are answered; the model calls after them wait until the first worker is stopping.
  let answered = 0;
  let held = 0;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  m.setResponder(async (request) => {
    if (++answered <= 5) return responder(0, 150)(request);
    held += 1;
    await gate;
    return responder()(request);
  });
  const input = writeItems(Array.from({ length: 12 }, (_, i) => JSON.stringify(`crash item ${i}`)));
  const batch = await start(m, first.loopwright, input, { concurrency: 4, continueAfter: 5 });
  // Stopped mid-way: five items done, and every running one inside its model call. A worker stopped
  // while it takes a workflow task would hold that session for the workflow task timeout (10 s).
  for (let i = 0; i < 600; i++) {
    const { running } = await first.loopwright.batch(batch.workflowId).state();
    if (held > 0 && running === held) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const stopping = first.stop();
  const second = await h.startWorker({ taskQueue: first.taskQueue });
  // The calls still running on the stopping worker finish there; the sessions go on on the second.
  release();
  await stopping;
  const summary = await batch.result();
  await second.stop();

  expect(summary).toMatchObject({ total: 12, ok: 12, failed: 0, resultLines: 12 });
  const results = readResults(summary.outputPath);
  expect(results.map((r) => r.index)).toEqual(Array.from({ length: 12 }, (_, i) => i));
  const perMessage = requestsPerMessage(m);
  expect(perMessage.size).toBe(12);
  for (const [message, n] of perMessage) expect([message, n]).toEqual([message, 1]);
  const runs = await childRuns(batch.workflowId);
  expect(runs.size).toBe(12);
  for (const [id, n] of runs) expect([id, n]).toEqual([id, 1]);
});

test.concurrent('a batch that continues as new every 2 items still writes every item once', async () => {
  const m = lanes.open();
  m.setResponder(responder());
  const input = writeItems(Array.from({ length: 11 }, (_, i) => JSON.stringify({ message: `can item ${i}`, id: `c${i}` })));
  const batch = await start(m, loopwright, input, { concurrency: 3, continueAfter: 2, pageLines: 4, outputPath: path.join(dir, 'can-results.jsonl') });
  const summary = await batch.result();
  expect(summary).toMatchObject({ total: 11, started: 11, ok: 11, resultLines: 11, outputPath: path.join(dir, 'can-results.jsonl') });
  // A run drains its running sessions before it continues: 2 to 4 items (2 + concurrency - 1) per run.
  expect(summary.runs).toBeGreaterThanOrEqual(3);
  const results = readResults(summary.outputPath);
  expect(results.map((r) => r.id)).toEqual(Array.from({ length: 11 }, (_, i) => `c${i}`));
  for (const [, n] of requestsPerMessage(m)) expect(n).toBe(1);
  expect((await childRuns(batch.workflowId)).size).toBe(11);
});

test.concurrent('cancelling a batch cancels its running sessions and starts no more', async () => {
  const m = lanes.open();
  m.setResponder(responder(60_000));
  const input = writeItems(Array.from({ length: 10 }, (_, i) => JSON.stringify(`SLOW item ${i}`)));
  const batch = await start(m, loopwright, input, { concurrency: 3 });
  await m.waitForRequests(3, 30_000);
  await batch.cancel();
  const summary = await batch.result();
  expect(summary).toMatchObject({ total: 10, started: 3, ok: 0, failed: 0, cancelled: 3, notStarted: 7, cancelledBatch: true, resultLines: 3 });
  const results = readResults(summary.outputPath);
  expect(results.map((r) => [r.index, r.status])).toEqual([
    [0, 'cancelled'],
    [1, 'cancelled'],
    [2, 'cancelled'],
  ]);
  for (const r of results) {
    const { status } = await h.client.workflow.getHandle(r.workflowId).describe();
    expect(status.name).not.toBe('RUNNING');
  }
  expect(m.requests).toHaveLength(3);
});

test.concurrent('a terminated batch run again under its id starts no item twice: finished sessions are taken as they ended', async () => {
  const m = lanes.open();
  m.setResponder(responder(60_000));
  const input = writeItems(['"first"', '"second"', '"third"', '"SLOW fourth"', '"fifth"', '"sixth"']);
  const id = `batch-again-${process.pid}`;
  const batch = await start(m, loopwright, input, { workflowId: id, concurrency: 1 });
  await m.waitForRequests(4, 30_000);
  await batch.workflow.terminate('test: the batch dies');
  // The running session was asked to stop when its batch closed.
  await h.client.workflow
    .getHandle(`${id}-3`)
    .result()
    .catch(() => undefined);
  const again = await start(m, loopwright, input, { workflowId: id, concurrency: 1 });
  expect(again.reattached).toBe(false);
  const summary = await again.result();
  expect(summary).toMatchObject({ total: 6, started: 6, ok: 5, failed: 1, resultLines: 6 });
  const results = readResults(summary.outputPath);
  expect(results.map((r) => r.status)).toEqual(['completed', 'completed', 'completed', 'interrupted', 'completed', 'completed']);
  for (const [message, n] of requestsPerMessage(m)) expect([message, n]).toEqual([message, 1]);
  const runs = await childRuns(id);
  expect(runs.size).toBe(6);
  for (const [child, n] of runs) expect([child, n]).toEqual([child, 1]);
});

test.concurrent('a bad line is an error naming it, and nothing starts', async () => {
  const m = lanes.open();
  const input = writeItems([JSON.stringify('fine'), JSON.stringify({ message: 'also fine' }), '{"message": "cut off', JSON.stringify('never')]);
  const attempt = start(m, loopwright, input, { workflowId: `batch-bad-${process.pid}` });
  await expect(attempt).rejects.toThrow(BatchInputError);
  await expect(attempt).rejects.toThrow(/^line 3: not JSON/);
  await expect(h.client.workflow.getHandle(`batch-bad-${process.pid}`).describe()).rejects.toThrow(/not found/i);
  const noMessage = writeItems([JSON.stringify({ id: 'x' })]);
  await expect(start(m, loopwright, noMessage)).rejects.toThrow('line 1: "message" must be a string');
  expect(m.requests).toHaveLength(0);
});

describe('alone', () => {
  test('two batches of one agent started in the same millisecond without an id are two batches, each of its own items', async () => {
    const m = lanes.open();
    m.setResponder(responder());
    const inputs = [writeItems(['"pair a 1"', '"pair a 2"']), writeItems(['"pair b 1"', '"pair b 2"', '"pair b 3"'])];
    // The clock stands still while both start (alone: the side-by-side tests above are done).
    const now = jest.spyOn(Date, 'now').mockReturnValue(Date.now());
    const [a, b] = await Promise.all(inputs.map((input) => start(m, loopwright, input))).finally(() => now.mockRestore());
    expect(a!.workflowId).not.toBe(b!.workflowId);
    expect([a!.reattached, b!.reattached]).toEqual([false, false]);
    const [first, second] = await Promise.all([a!.result(), b!.result()]);
    expect(first).toMatchObject({ total: 2, ok: 2, outputPath: inputs[0]!.replace(/\.jsonl$/, '.results.jsonl') });
    expect(second).toMatchObject({ total: 3, ok: 3, outputPath: inputs[1]!.replace(/\.jsonl$/, '.results.jsonl') });
    expect([...requestsPerMessage(m).keys()].sort()).toEqual(['pair a 1', 'pair a 2', 'pair b 1', 'pair b 2', 'pair b 3']);
  });
});
