/**
 * An eval suite survives its worker: recorded sessions (made by a batch, each reading a file then
 * answering) are replayed by `loopwright worker` processes, the first killed with SIGKILL while the
 * suite runs and replaced. The suite completes with every case scored once: one report entry per
 * case, one scoring activity scheduled per case across the eval's runs, one candidate session per
 * case. LOOPWRIGHT_EVAL_CRASH_CASES sets the suite's size (default 20).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChatMessage } from '../../common/messages';
import type { EvalCaseReport } from '../../common/eval/eval-types';
import type { HistoryEvent, JsonPayload } from '../../common/eval/extract-recording';
import { Client } from '@temporalio/client';
import { LoopwrightClient } from '../../client/session-client';
import { startEval } from '../../client/eval-client';
import { decodeJsonPayload, fetchSessionHistory } from '../../activities/eval/history-json';
import { type RecordedRequest, type Step, text, toolCalls } from '../../fake-model/server';
import { copyExampleBundle, startSessionHarness, type SessionHarness } from '../support/session-harness';
import { shortWorkflowTasks, startWorkerProcess, type WorkerProcess } from '../support/worker-process';

const CASES = Number(process.env.LOOPWRIGHT_EVAL_CRASH_CASES ?? 20);
jest.setTimeout(120_000 + CASES * 2_000);

let h: SessionHarness;
let bundleCopy: ReturnType<typeof copyExampleBundle>;
let dir: string;
const workers: WorkerProcess[] = [];

/** Each item reads the template, then answers with its message; the candidate model answers a little later (so the kill lands mid-suite). */
function responder(request: RecordedRequest): Step | Promise<Step> {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const last = messages.map((m) => m.role).lastIndexOf('user');
  const step = messages.slice(last).filter((m) => m.role === 'assistant').length;
  const reply = step === 0 ? toolCalls([{ name: 'read_file', arguments: { file_path: '{bundle-root}/workflows/intake/template.md' } }]) : text(`done: ${String(messages[last]?.content)}`);
  if (request.body?.model !== 'candidate') return reply;
  return new Promise((resolve) => setTimeout(() => resolve(reply), 20));
}

beforeAll(async () => {
  h = await startSessionHarness();
  bundleCopy = copyExampleBundle();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-eval-crash-'));
  h.fake.setResponder(responder);
}, 120_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await h?.close();
  bundleCopy?.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
});

test(`eval crash: a worker killed with SIGKILL during a suite of ${CASES} recorded sessions; every case is scored once`, async () => {
  // The worker process that replays them starts meanwhile (on its own task queue, idle until the eval starts).
  const taskQueue = `eval-crash-${process.pid}`;
  const env = { TEMPORAL_ADDRESS: h.server.address, LOOPWRIGHT_TASK_QUEUE: taskQueue, OPENAI_BASE_URL: h.fake.baseURL, OPENAI_API_KEY: 'test-key' };
  const starting = startWorkerProcess(env).then((w) => {
    workers.push(w);
    return w;
  });
  // Record: a batch of one-shot sessions, each a recording.
  const recorder = await h.startWorker();
  const items = path.join(dir, 'items.jsonl');
  fs.writeFileSync(items, Array.from({ length: CASES }, (_, i) => JSON.stringify(`recorded item ${i}`)).join('\n'));
  const batch = await recorder.loopwright.startBatch({
    bundlePath: bundleCopy.bundle,
    agentId: 'facilitator',
    projectRoot: bundleCopy.root,
    inputPath: items,
    concurrency: 8,
    workflowId: `eval-crash-rec-${process.pid}`,
    // The candidates keep the recordings' settings: a model call, or an initialisation, on the killed worker is noticed within 2 s.
    timeouts: { modelHeartbeat: '2 seconds', toolHeartbeat: '2 seconds' },
  });
  expect(await batch.result()).toMatchObject({ ok: CASES });
  await recorder.stop();

  // Replay them on worker processes; kill the first once a third of the suite is scored.
  const first = await starting;
  // A workflow task the killed worker had begun (the eval's, or a candidate session's: a child inherits its parent's) is given up after 3 s, not 10.
  const loopwright = new LoopwrightClient(new Client({ connection: h.client.connection, interceptors: { workflow: [shortWorkflowTasks(3)] } }), taskQueue);
  const started = Date.now();
  const evaluation = await startEval(loopwright, {
    sources: Array.from({ length: CASES }, (_, i) => `${batch.workflowId}-${i}`),
    candidate: { model: 'candidate' },
    concurrency: 8,
    continueAfter: Math.max(5, Math.floor(CASES / 4)),
    scratchRoot: path.join(dir, 'scratch'),
    reportPath: path.join(dir, 'report.json'),
    workflowId: `eval-crash-${process.pid}`,
  });
  for (;;) {
    const state = await evaluation.state().catch(() => undefined);
    if (state && state.scored >= Math.ceil(CASES / 3)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const scoredAtKill = (await evaluation.state()).scored;
  const killedAt = (Date.now() - started) / 1000;
  await first.kill('SIGKILL');
  workers.push(await startWorkerProcess(env));
  const replacedAt = (Date.now() - started) / 1000;
  const summary = await evaluation.result();
  const seconds = (Date.now() - started) / 1000;
  process.stderr.write(
    `eval crash: ${CASES} cases in ${seconds.toFixed(1)} s (${summary.runs} runs), worker killed after ${scoredAtKill} scored at ${killedAt.toFixed(1)} s, replaced at ${replacedAt.toFixed(1)} s\n`,
  );

  expect(scoredAtKill).toBeLessThan(CASES);
  expect(summary).toMatchObject({ total: CASES, started: CASES, scored: CASES, errors: 0, statusChanged: 0, trajectoryChanged: 0, reportCases: CASES, cancelled: false });
  const report = JSON.parse(fs.readFileSync(summary.reportPath, 'utf8')) as { cases: EvalCaseReport[] };
  expect(report.cases.map((c) => c.index)).toEqual(Array.from({ length: CASES }, (_, i) => i));
  for (const c of report.cases) expect([c.index, c.error, c.replay.answered, c.trajectory.same]).toEqual([c.index, undefined, 1, true]);
  expect(fs.existsSync(`${summary.reportPath}.journal`)).toBe(false);

  // One scoring activity scheduled per case over every run of the eval (a retried attempt is not a new one).
  const scored: number[] = [];
  for (const run of await fetchSessionHistory(h.client, evaluation.workflowId)) {
    for (const event of run.events as HistoryEvent[]) {
      const scheduled = event.activityTaskScheduledEventAttributes as { activityType?: { name?: string }; input?: { payloads?: JsonPayload[] } } | undefined;
      if (scheduled?.activityType?.name === 'scoreEvalCase') scored.push((decodeJsonPayload(scheduled.input!.payloads![0]!) as { index: number }).index);
    }
  }
  expect(scored.sort((a, b) => a - b)).toEqual(Array.from({ length: CASES }, (_, i) => i));
  // One candidate session per case, each run once.
  const candidates = new Map<string, number>();
  for await (const w of h.client.workflow.list({ query: `WorkflowType = 'agentSession'` })) {
    if (w.workflowId.startsWith(`${evaluation.workflowId}-`)) candidates.set(w.workflowId, (candidates.get(w.workflowId) ?? 0) + 1);
  }
  expect(candidates.size).toBe(CASES);
  for (const [id, n] of candidates) expect([id, n]).toEqual([id, 1]);
  // The scratch copies are gone.
  expect(fs.readdirSync(path.join(dir, 'scratch'))).toEqual([]);
});
