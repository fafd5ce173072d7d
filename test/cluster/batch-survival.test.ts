/**
 * A batch survives lost history hosts: on a real Temporal cluster (scripts/cluster), a batch of
 * sessions (100 by default; LOOPWRIGHT_CLUSTER_BATCH sets another size, e.g. 1000) runs while
 * one history host is killed and restarted a third of the way in, and the other two thirds in. Every item ends completed with one result
 * line, every session ran once, and every model call was made exactly once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { status } from '@grpc/grpc-js';
import type { BatchResultLine } from '../../common/batch-types';
import type { ChatMessage } from '../../common/messages';
import { type RecordedRequest, type Step, text, toolCalls } from '../../fake-model/server';
import { type ClusterHarness, startClusterHarness } from '../support/cluster-harness';
import { copyExampleBundle } from '../support/session-harness';

jest.setTimeout(600_000);

const ITEMS = Number(process.env.LOOPWRIGHT_CLUSTER_BATCH ?? 100);

let h: ClusterHarness;
let bundleCopy: ReturnType<typeof copyExampleBundle>;
let dir: string;

/** Model calls per item, by call number. */
const calls = new Map<string, number[]>();

/** Each item takes three calls: a file read, a second read, the answer; counted by item and call. */
function responder(request: RecordedRequest): Step {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  const item = String(messages[lastUser]?.content ?? '');
  const call = messages.slice(lastUser).filter((m) => m.role === 'assistant').length + 1;
  calls.set(item, [...(calls.get(item) ?? []), call]);
  if (call >= 3) return text(`done: ${item}`);
  return toolCalls([{ id: `call_${call}`, name: 'read_file', arguments: { file_path: '{bundle-root}/workflows/intake/template.md' } }]);
}

beforeAll(async () => {
  h = await startClusterHarness();
  bundleCopy = copyExampleBundle();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-cluster-batch-'));
  h.fake.setResponder(responder);
}, 1_800_000);

afterAll(async () => {
  await h?.close();
  bundleCopy?.cleanup();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test(`cluster: a batch of ${ITEMS} sessions finishes every item once while each history host is killed and restarted in the middle`, async () => {
  const { loopwright } = await h.startWorker(`cluster-batch-${process.pid}`);
  const input = path.join(dir, 'items.jsonl');
  fs.writeFileSync(input, Array.from({ length: ITEMS }, (_, i) => JSON.stringify({ message: `item ${i}`, id: `item-${i}` })).join('\n') + '\n');
  const started = Date.now();
  const batchId = `cluster-batch-${process.pid}`;
  const batch = await loopwright.startBatch({
    bundlePath: bundleCopy.bundle,
    agentId: 'facilitator',
    projectRoot: bundleCopy.root,
    inputPath: input,
    concurrency: 20,
    workflowId: batchId,
  });

  // A third of the items finished: history-1 is killed and restarted; two thirds: history-2. Whichever host owns a
  // shard (the batch's or a session's) is lost while the batch runs.
  // A batch that stops moving for a minute says what it waits on (the test's time-out alone would not).
  let last = '';
  let lastMoved = Date.now();
  const watchdog = setInterval(() => {
    void batch.state().then(
      async (state) => {
        const now = `${state.ok}/${state.failed}/${state.running}`;
        if (now !== last) [last, lastMoved] = [now, Date.now()];
        else if (Date.now() - lastMoved > 60_000) {
          lastMoved = Date.now();
          console.log(`cluster batch stalled at ok/failed/running ${now}:\n${await h.stallReport(batchId)}`);
        }
      },
      () => undefined,
    );
  }, 10_000);
  const summary = await (async () => {
    try {
      for (const [share, host] of [
        [1 / 3, 'history-1'],
        [2 / 3, 'history-2'],
      ] as const) {
        for (let state = await batch.state(); state.ok + state.failed < ITEMS * share; state = await batch.state()) {
          expect(state.phase).toBe('running');
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        await h.killAndRestart(host);
      }
      return await batch.result();
    } finally {
      clearInterval(watchdog);
    }
  })();
  console.log(`cluster batch: ${ITEMS} sessions in ${((Date.now() - started) / 1000).toFixed(1)} s, each history host killed and restarted on the way`);

  expect(summary).toMatchObject({ total: ITEMS, started: ITEMS, ok: ITEMS, failed: 0, cancelled: 0, notStarted: 0, resultLines: ITEMS });
  expect(summary.byStatus).toEqual({ completed: ITEMS });
  const results = fs
    .readFileSync(summary.outputPath, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as BatchResultLine);
  expect(results.map((r) => r.index)).toEqual(Array.from({ length: ITEMS }, (_, i) => i));
  for (const r of results) expect(r).toMatchObject({ status: 'completed', success: true, response: `done: item ${r.index}` });
  // Every model call of every item exactly once.
  expect(calls.size).toBe(ITEMS);
  const repeated = [...calls].filter(([, numbers]) => numbers.join() !== '1,2,3');
  expect(repeated).toEqual([]);
  // One run per item's session: none was started twice.
  // (Visibility is written after the fact: read until every item's session is listed. Right after a
  // thousand sessions the cluster may refuse a read with RESOURCE_EXHAUSTED, its persistence rate
  // limit: that read is made again a second later.)
  let runs = new Map<string, number>();
  for (let i = 0; i < 100 && runs.size < ITEMS; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 200));
    runs = new Map();
    try {
      for await (const w of h.client.workflow.list({ query: `WorkflowType = 'agentSession'` })) runs.set(w.workflowId, (runs.get(w.workflowId) ?? 0) + 1);
    } catch (err) {
      if ((err as { cause?: { code?: number } }).cause?.code !== status.RESOURCE_EXHAUSTED) throw err;
      runs = new Map();
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
  expect(runs.size).toBe(ITEMS);
  expect([...runs.values()].every((n) => n === 1)).toBe(true);
});
