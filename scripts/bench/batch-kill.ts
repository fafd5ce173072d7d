/**
 * A batch of 1,000 one-shot sessions whose only worker process is killed (SIGKILL) part-way, then
 * replaced by a new one: the batch must finish with every item once. Reported: where the kill fell,
 * the items finished, result lines and distinct indexes in the result file, sessions per item (by
 * child workflow id), and the items whose model call was asked twice (a call in flight at the kill
 * is retried; the session still runs once).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BatchResultLine } from '../../common/batch-types';
import { LoopwrightClient } from '../../client/session-client';
import { startFakeOpenAI, text } from '../../fake-model/server';
import type { BenchServer } from './bench-server';
import type { CleanupStack } from './cleanup-stack';
import { textTable } from './text-table';
import { startWorkerProcess } from './worker-process';

export interface BatchKillFigures {
  items: number;
  /** Items finished when the worker was killed. */
  killedAt: number;
  ok: number;
  resultLines: number;
  distinctIndexes: number;
  /** Child sessions of the batch, and how many distinct ids they have. */
  sessions: number;
  distinctSessions: number;
  /** Items whose message reached the model more than once (in flight at the kill). */
  askedTwice: number;
  /** Items whose message never reached the model. */
  neverAsked: number;
  wallSeconds: number;
  batchRuns: number;
}

export async function measureBatchKill(
  options: { server: BenchServer; bundlePath: string; agentId: string; model: string; items?: number; progress?: (line: string) => void },
  cleanup: CleanupStack,
): Promise<BatchKillFigures> {
  const items = options.items ?? 1_000;
  const fake = await startFakeOpenAI({ responder: () => text('done') });
  cleanup.push('batch-kill fake model', () => fake.close());
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopwright-bench-batch-kill-'));
  cleanup.push('batch-kill temp folder', () => fs.rmSync(dir, { recursive: true, force: true }));
  const taskQueue = `bench-batch-kill-${process.pid}`;
  const worker = () => startWorkerProcess({ temporalAddress: options.server.address, taskQueue, modelBaseURL: fake.baseURL, model: options.model, env: { LOOPWRIGHT_ACTIVITY_SLOTS: '200' } }, cleanup);
  const first = await worker();
  const loopwright = new LoopwrightClient(options.server.client, taskQueue);
  const input = path.join(dir, 'items.jsonl');
  fs.writeFileSync(input, Array.from({ length: items }, (_, i) => JSON.stringify({ message: `kill item ${i}`, id: `item-${i}` })).join('\n'));
  const started = performance.now();
  const batch = await loopwright.startBatch({ bundlePath: options.bundlePath, agentId: options.agentId, inputPath: input, concurrency: 32 });
  let killedAt = 0;
  for (;;) {
    const state = await batch.state();
    if (state.ok + state.failed >= items * 0.4) {
      killedAt = state.ok + state.failed;
      break;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  process.kill(first.pid, 'SIGKILL');
  options.progress?.(`batch-kill: worker killed after ${killedAt} items; starting another`);
  await worker();
  const summary = await batch.result();
  const wallSeconds = (performance.now() - started) / 1000;

  const lines = fs
    .readFileSync(summary.outputPath, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as BatchResultLine);
  const asked = new Map<string, number>();
  for (const request of fake.requests) {
    const user = (request.body?.messages ?? []).find((m: { role: string }) => m.role === 'user') as { content?: string } | undefined;
    if (user?.content?.startsWith('kill item ')) asked.set(user.content, (asked.get(user.content) ?? 0) + 1);
  }
  const sessionIds: string[] = [];
  for await (const execution of options.server.client.workflow.list({ query: `WorkflowType = 'agentSession' AND WorkflowId STARTS_WITH '${batch.workflowId}-'` })) {
    sessionIds.push(execution.workflowId);
  }
  return {
    items,
    killedAt,
    ok: summary.ok,
    resultLines: lines.length,
    distinctIndexes: new Set(lines.map((l) => l.index)).size,
    sessions: sessionIds.length,
    distinctSessions: new Set(sessionIds).size,
    askedTwice: [...asked.values()].filter((n) => n > 1).length,
    neverAsked: items - asked.size,
    wallSeconds,
    batchRuns: summary.runs,
  };
}

export function formatBatchKill(f: BatchKillFigures): string {
  return `Batch of ${f.items} with its only worker process killed (SIGKILL) after ${f.killedAt} items, then replaced\n${textTable(
    ['ok', 'result lines', 'distinct indexes', 'sessions (distinct ids)', 'model asked twice', 'never asked', 'batch runs', 'wall'],
    [
      [
        `${f.ok}/${f.items}`,
        String(f.resultLines),
        String(f.distinctIndexes),
        `${f.sessions} (${f.distinctSessions})`,
        String(f.askedTwice),
        String(f.neverAsked),
        String(f.batchRuns),
        `${f.wallSeconds.toFixed(1)} s`,
      ],
    ],
  )}`;
}
