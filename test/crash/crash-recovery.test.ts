/**
 * Crash recovery: a worker killed with SIGKILL mid-call and a Temporal server restarted mid-turn
 * lose nothing. Workers run as real `loopwright worker` processes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { startTestTemporal, type TestTemporal } from '../support/temporal-server';
import { LoopwrightClient } from '../../client/session-client';
import type { ChatMessage } from '../../common/messages';
import { delay, type FakeOpenAI, type Step, startFakeOpenAI, text, toolCalls } from '../../fake-model/server';
import { copyExampleBundle } from '../support/session-harness';
import { shortWorkflowTasks, startWorkerProcess, type WorkerProcess } from '../support/worker-process';

jest.setTimeout(90_000);

let stateDir: string;
let server: TestTemporal;
let fake: FakeOpenAI;
let connection: Connection;
let bundleCopy: ReturnType<typeof copyExampleBundle>;
const workers: WorkerProcess[] = [];
let slowMs = 0;
/** The first three tests share a task queue: each later one runs on the worker the one before left running (or a new one if it left none). */
const SHARED_QUEUE = 'crash-kill';
let spare: WorkerProcess | undefined;

/** The worker left running by the test before, or a new one. */
async function spareWorker(): Promise<WorkerProcess> {
  if (spare && spare.child.exitCode === null && spare.child.signalCode === null) return spare;
  const worker = await startWorkerProcess(workerEnv(SHARED_QUEUE));
  workers.push(worker);
  return worker;
}

/**
 * The model's script depends only on the request (how many assistant messages follow the last user
 * message), so a retried call gets the same answer, as from a deterministic model.
 */
function scriptedStep(messages: ChatMessage[]): Step {
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  const step = messages.slice(lastUser).filter((m) => m.role === 'assistant').length;
  switch (step) {
    case 0:
      return toolCalls([{ id: 'call_wf', name: 'execute_workflow', arguments: { workflow_path: '{bundle-root}/workflows/intake/workflow.yaml' } }]);
    case 1:
      return toolCalls([{ id: 'call_save', name: 'save_output', arguments: { file_path: '{output_folder}/crash-test.md', content: '# Saved once\n' } }]);
    default:
      return slowMs > 0 ? delay(slowMs, text('All saved.')) : text('All saved.');
  }
}

/** The fake model's responder; `reset()` drops it, so tests set it again after a reset. */
const scripted = (req: { body: { messages?: ChatMessage[] } | null }): Step => scriptedStep(req.body?.messages ?? []);

function resetModel(): void {
  fake.reset();
  fake.setResponder(scripted);
}

function workerEnv(taskQueue: string): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: server.address,
    LOOPWRIGHT_TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: fake.baseURL,
    OPENAI_API_KEY: 'test-key',
  };
}

/** A client on `taskQueue`; with `taskTimeout`, the sessions it starts have that workflow task timeout (seconds). */
async function client(taskQueue: string, taskTimeout?: number): Promise<LoopwrightClient> {
  return new LoopwrightClient(new Client({ connection, ...(taskTimeout ? { interceptors: { workflow: [shortWorkflowTasks(taskTimeout)] } } : {}) }), taskQueue);
}

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-crash-'));
  [server, fake] = await Promise.all([startTestTemporal({ dbFile: path.join(stateDir, 'temporal.db') }), startFakeOpenAI({ responder: scripted })]);
  connection = await Connection.connect({ address: server.address });
  bundleCopy = copyExampleBundle();
}, 120_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await connection?.close();
  await fake?.close();
  await server?.stop();
  bundleCopy?.cleanup();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

test('crash: a worker killed with SIGKILL during a model call is replaced and the session completes the same way', async () => {
  const taskQueue = SHARED_QUEUE;
  const lw = await client(taskQueue);
  const first = await startWorkerProcess(workerEnv(taskQueue));
  workers.push(first);

  // Reference: the same conversation with nothing going wrong.
  slowMs = 0;
  const reference = await lw.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator' });
  const referenceTurn = await reference.send('*intake');
  expect(referenceTurn.success).toBe(true);
  const referenceTranscript = await reference.messages();
  await reference.end();

  // Now the model's last answer takes long enough to kill the worker while it waits.
  slowMs = 5_000;
  resetModel();
  const session = await lw.start({
    bundlePath: bundleCopy.bundle,
    agentId: 'facilitator',
    timeouts: { modelHeartbeat: '2 seconds' },
  });
  const turn = session.send('*intake');
  await fake.waitForRequests(3, 60_000);
  const saved = path.join(bundleCopy.bundle, 'docs', 'crash-test.md');
  const before = fs.statSync(saved);

  await first.kill('SIGKILL');
  const second = await startWorkerProcess(workerEnv(taskQueue));
  workers.push(second);
  spare = second;
  slowMs = 0;

  const result = await turn;
  expect(result).toMatchObject({ success: true, response: 'All saved.', iterations: 3 });
  // The killed call was asked again; nothing else was.
  expect(fake.requests).toHaveLength(4);
  expect(await session.messages()).toEqual(referenceTranscript);

  // save_output ran once: its result came from history on the new worker, the file was not rewritten.
  const after = fs.statSync(saved);
  expect(after.ino).toBe(before.ino);
  expect(after.mtimeMs).toBe(before.mtimeMs);
  const history = await session.workflow.fetchHistory();
  const saves = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'save_output');
  expect(saves).toHaveLength(1);
  await session.end();
  await session.result();
});

test('crash: the Temporal server stopped and restarted on the same SQLite file mid-turn; the session goes on', async () => {
  const taskQueue = SHARED_QUEUE;
  const lw = await client(taskQueue);
  // Lives through the restart; the next test stops it.
  spare = await spareWorker();
  resetModel();
  // The model answers 2 s after the call: the restart (a fraction of a second) lands while it is in flight.
  slowMs = 2_000;
  const session = await lw.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator', timeouts: { modelHeartbeat: '5 seconds' } });
  const turn = session.send('*intake').catch((err: unknown) => err);
  await fake.waitForRequests(3, 60_000);

  await server.stop();
  server = await startTestTemporal({ port: server.port, dbFile: path.join(stateDir, 'temporal.db') });
  slowMs = 0;

  // The update call may or may not survive the outage; the session's own state is what counts.
  await turn;
  const fresh = new LoopwrightClient(new Client({ connection: await Connection.connect({ address: server.address }) }), taskQueue);
  const handle = fresh.session(session.workflowId);
  let state = await handle.state();
  for (let i = 0; i < 120 && state.lastTurn === undefined; i++) {
    await new Promise((r) => setTimeout(r, 500));
    state = await handle.state();
  }
  expect(state.lastTurn).toMatchObject({ success: true, response: 'All saved.', iterations: 3 });
  const transcript = await handle.messages();
  expect(transcript.filter((m) => m.role === 'tool')).toHaveLength(2);

  // And the session still takes messages after the restart.
  const next = await handle.send('thanks');
  expect(next.success).toBe(true);
  await handle.end();
  await handle.result();
  await fresh.client.connection.close();
});

test('worker: SIGTERM shuts a worker process down gracefully, letting a running model call finish', async () => {
  const taskQueue = SHARED_QUEUE;
  const lw = await client(taskQueue);
  const worker = await spareWorker();
  resetModel();
  slowMs = 1_500;
  const session = await lw.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator' });
  const turn = session.send('*intake');
  await fake.waitForRequests(3, 60_000);
  // The last model call is in flight; SIGTERM lets it finish within the grace period.
  const code = await worker.kill('SIGTERM');
  expect(code).toBe(0);
  expect(worker.output()).toContain('Worker stopped');
  expect(fake.requests.filter((r) => r.aborted)).toHaveLength(0);

  // The turn's last workflow task needs a worker; a new one finishes it without calling the model again.
  const next = await startWorkerProcess(workerEnv(taskQueue));
  workers.push(next);
  await expect(turn).resolves.toMatchObject({ success: true, response: 'All saved.' });
  expect(fake.requests).toHaveLength(3);
  await session.end();
  await session.result();
});

test('crash: a worker killed with SIGKILL during a custom tool call and during an MCP call is replaced; both calls are made again and the turn completes', async () => {
  const taskQueue = 'crash-tools';
  // The custom tool runs as a local activity, inside a workflow task: the killed worker's task is given up after 3 s.
  const lw = await client(taskQueue, 3);
  const marks = path.join(stateDir, 'tool-marks');
  fs.mkdirSync(marks, { recursive: true });
  // A custom tool from a module, as `loopwright worker --tool-module` loads it: it notes each start, then takes 1 s.
  const module = path.join(stateDir, 'slow-tools.js');
  fs.writeFileSync(
    module,
    [
      `const { z } = require(${JSON.stringify(require.resolve('zod'))});`,
      `const { defineTool } = require(${JSON.stringify(path.resolve(__dirname, '../../dist/activities/tools/custom-tool.js'))});`,
      `const fs = require('node:fs');`,
      `exports.slow = defineTool({ name: 'slow_count', description: 'Counts slowly', parameters: z.object({ to: z.number() }), access: 'read',`,
      `  run: async ({ to }, { signal }) => { fs.appendFileSync(${JSON.stringify(path.join(marks, 'starts'))}, 'x');`,
      `    await new Promise((r) => setTimeout(r, 1000)); return 'counted to ' + to; } });`,
    ].join('\n'),
  );
  const env = { ...workerEnv(taskQueue), LOOPWRIGHT_TOOL_MODULES: module };
  const everything = { command: process.execPath, args: [path.resolve(__dirname, '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'] };
  const first = await startWorkerProcess(env);
  workers.push(first);
  expect(first.output()).toContain('Custom tools: slow_count');
  fake.reset();
  fake.setResponder((req) => {
    const messages = req.body?.messages ?? [];
    const step = messages.slice(messages.map((m) => m.role).lastIndexOf('user')).filter((m) => m.role === 'assistant').length;
    if (step === 0) return toolCalls([{ id: 'slow', name: 'slow_count', arguments: { to: 3 } }]);
    if (step === 1) return toolCalls([{ id: 'long', name: 'everything__trigger-long-running-operation', arguments: { duration: 2, steps: 2 } }]);
    return text('Counted and waited.');
  });
  const session = await lw.start({
    bundlePath: bundleCopy.bundle,
    agentId: 'facilitator',
    mcpServers: { everything },
    allowTools: ['everything__*'],
    timeouts: { tool: '30 seconds', toolHeartbeat: '2 seconds' },
  });
  const turn = session.send('count, then wait');
  const mcpCallStarted = async (): Promise<boolean> =>
    ((await session.workflow.describe()).raw.pendingActivities ?? []).some(
      (a) => a.activityType?.name === 'callMcpTool' && a.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED,
    );
  // Kill the worker while the custom tool runs.
  for (let i = 0; i < 400 && !fs.existsSync(path.join(marks, 'starts')); i++) await new Promise((r) => setTimeout(r, 25));
  await first.kill('SIGKILL');
  const second = await startWorkerProcess(env);
  workers.push(second);
  // Then kill that one while the MCP call runs: as soon as its activity has started (the operation takes 2 s).
  await fake.waitForRequests(2, 60_000);
  for (let i = 0; i < 600 && !(await mcpCallStarted()); i++) await new Promise((r) => setTimeout(r, 50));
  await second.kill('SIGKILL');
  const third = await startWorkerProcess(env);
  workers.push(third);

  const result = await turn;
  expect(result).toMatchObject({ success: true, response: 'Counted and waited.' });
  const messages = await session.turnMessages(result);
  const results = messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content) as Record<string, unknown>);
  expect(results[0]).toEqual({ success: true, content: 'counted to 3' });
  expect(results[1]).toMatchObject({ success: true, content: expect.stringContaining('completed') });
  // The custom tool started again on the new worker (a local read is repeated after a crash).
  expect(fs.readFileSync(path.join(marks, 'starts'), 'utf8').length).toBeGreaterThanOrEqual(2);
  // The MCP call's activity ran again too: its last attempt was a second one.
  const history = await session.workflow.fetchHistory();
  const mcpScheduled = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callMcpTool').map((e) => String(e.eventId));
  expect(mcpScheduled).toHaveLength(1);
  const mcpStarted = (history.events ?? []).find((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === mcpScheduled[0]);
  expect(mcpStarted?.activityTaskStartedEventAttributes?.attempt).toBeGreaterThanOrEqual(2);
  // Every model call was answered once; the crashes repeated tool calls, not model calls.
  expect(fake.requests).toHaveLength(3);
  await session.end();
  await session.result();
}, 150_000);
