/**
 * Crash recovery: a worker killed with SIGKILL mid-call and a Temporal server restarted mid-turn
 * lose nothing. Workers run as real `loopwright worker` processes.
 *
 * The tests run at the same time (most of their time is spent waiting for a killed worker's
 * heartbeat or workflow task timeout, the retry after it, and workers starting): each has its own
 * task queue and workers, its own fake model and its own copy of the bundle; the test that restarts
 * the Temporal server has a server (on a SQLite file) of its own.
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
/** The server of the tests that kill workers. */
let server: TestTemporal;
let connection: Connection;
/** The server the restart test stops and starts again, on a SQLite file. */
let restartServer: TestTemporal;
const workers: WorkerProcess[] = [];
const fakes: FakeOpenAI[] = [];
const bundleCopies: ReturnType<typeof copyExampleBundle>[] = [];
/** The fake model of one test; `slowMs` delays the last answer of the script. */
interface ScriptedModel {
  fake: FakeOpenAI;
  slowMs: number;
  /** Forget the requests so far (the script stays). */
  reset(): void;
}

/**
 * A fake model of its own for one test. Its script depends only on the request (how many
 * assistant messages follow the last user message), so a retried call gets the same answer, as
 * from a deterministic model.
 */
async function scriptedModel(): Promise<ScriptedModel> {
  const model: ScriptedModel = {
    fake: await startFakeOpenAI({ responder: (req) => scriptedStep(req.body?.messages ?? [], model.slowMs) }),
    slowMs: 0,
    reset() {
      // `reset()` drops the responder too: set it again.
      model.fake.reset();
      model.fake.setResponder((req) => scriptedStep(req.body?.messages ?? [], model.slowMs));
    },
  };
  fakes.push(model.fake);
  return model;
}

function scriptedStep(messages: ChatMessage[], slowMs: number): Step {
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

/** A copy of the example bundle for one test (the tests save the same file name, at the same time). */
function bundleCopy(): string {
  const copy = copyExampleBundle('lw-crash-bundle-');
  bundleCopies.push(copy);
  return copy.bundle;
}

/**
 * A killed worker holds its sessions' next steps (and the queries that read their transcripts) for
 * its sticky timeout before another worker may take them: a short one here, as the 1 s of
 * startWorkerProcess would be a good part of what the tests wait for after a kill.
 */
function workerEnv(taskQueue: string, fake: FakeOpenAI, address = server.address): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: address,
    LOOPWRIGHT_TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: fake.baseURL,
    OPENAI_API_KEY: 'test-key',
    LOOPWRIGHT_STICKY_TIMEOUT: '200ms',
  };
}

async function startWorker(env: Record<string, string>): Promise<WorkerProcess> {
  const worker = await startWorkerProcess(env);
  workers.push(worker);
  return worker;
}

/** A client on `taskQueue`; with `taskTimeout`, the sessions it starts have that workflow task timeout (seconds). */
function client(taskQueue: string, taskTimeout?: number): LoopwrightClient {
  return new LoopwrightClient(new Client({ connection, ...(taskTimeout ? { interceptors: { workflow: [shortWorkflowTasks(taskTimeout)] } } : {}) }), taskQueue);
}

/** What the custom tool and MCP test starts with: its task queue, fake model, custom tool module and first worker. */
let toolsTest: { taskQueue: string; fake: FakeOpenAI; marks: string; env: Record<string, string>; first: WorkerProcess };

/**
 * The custom tool and MCP test's set-up, made before the tests start: that test takes longest, so
 * its first worker starts alone rather than with the other tests' workers.
 */
async function setUpToolsTest(): Promise<typeof toolsTest> {
  const taskQueue = 'crash-tools';
  const { fake } = await scriptedModel();
  const marks = path.join(stateDir, 'tool-marks');
  fs.mkdirSync(marks, { recursive: true });
  // A custom tool from a module, as `loopwright worker --tool-module` loads it: it notes each start; the first takes 1 s (the
  // worker is killed meanwhile), a later one answers at once.
  const module = path.join(stateDir, 'slow-tools.js');
  fs.writeFileSync(
    module,
    [
      `const { z } = require(${JSON.stringify(require.resolve('zod'))});`,
      `const { defineTool } = require(${JSON.stringify(path.resolve(__dirname, '../../dist/activities/tools/custom-tool.js'))});`,
      `const fs = require('node:fs');`,
      `exports.slow = defineTool({ name: 'slow_count', description: 'Counts slowly', parameters: z.object({ to: z.number() }), access: 'read',`,
      `  run: async ({ to }, { signal }) => { const starts = ${JSON.stringify(path.join(marks, 'starts'))}; const first = !fs.existsSync(starts);`,
      `    fs.appendFileSync(starts, 'x'); if (first) await new Promise((r) => setTimeout(r, 1000)); return 'counted to ' + to; } });`,
    ].join('\n'),
  );
  const env = { ...workerEnv(taskQueue, fake), LOOPWRIGHT_TOOL_MODULES: module };
  return { taskQueue, fake, marks, env, first: await startWorker(env) };
}

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-crash-'));
  [server, restartServer] = await Promise.all([startTestTemporal(), startTestTemporal({ dbFile: path.join(stateDir, 'temporal.db') })]);
  connection = await Connection.connect({ address: server.address });
  toolsTest = await setUpToolsTest();
}, 120_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await connection?.close();
  await Promise.all(fakes.map((f) => f.close()));
  await server?.stop();
  await restartServer?.stop();
  for (const copy of bundleCopies) copy.cleanup();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

test.concurrent('crash: a worker killed with SIGKILL during a model call is replaced and the session completes the same way', async () => {
  const taskQueue = 'crash-kill';
  const lw = client(taskQueue);
  const model = await scriptedModel();
  const { fake } = model;
  const bundle = bundleCopy();
  const first = await startWorker(workerEnv(taskQueue, fake));

  // Reference: the same conversation with nothing going wrong.
  const reference = await lw.start({ bundlePath: bundle, agentId: 'facilitator' });
  const referenceTurn = await reference.send('*intake');
  expect(referenceTurn.success).toBe(true);
  const referenceTranscript = await reference.messages();
  await reference.end();

  // Now the model's last answer takes long enough to kill the worker while it waits.
  model.slowMs = 5_000;
  model.reset();
  const session = await lw.start({
    bundlePath: bundle,
    agentId: 'facilitator',
    timeouts: { modelHeartbeat: '2 seconds' },
  });
  const turn = session.send('*intake');
  await fake.waitForRequests(3, 60_000);
  const saved = path.join(bundle, 'docs', 'crash-test.md');
  const before = fs.statSync(saved);

  await first.kill('SIGKILL');
  model.slowMs = 0;
  await startWorker(workerEnv(taskQueue, fake));

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

test.concurrent('crash: the Temporal server stopped and restarted on the same SQLite file mid-turn; the session goes on', async () => {
  const taskQueue = 'crash-restart';
  const model = await scriptedModel();
  const { fake } = model;
  const restartConnection = await Connection.connect({ address: restartServer.address });
  const lw = new LoopwrightClient(new Client({ connection: restartConnection }), taskQueue);
  // Lives through the restart.
  await startWorker(workerEnv(taskQueue, fake, restartServer.address));
  // The model answers 2 s after the call: the restart (a fraction of a second) lands while it is in flight.
  model.slowMs = 2_000;
  const session = await lw.start({ bundlePath: bundleCopy(), agentId: 'facilitator', timeouts: { modelHeartbeat: '5 seconds' } });
  const turn = session.send('*intake').catch((err: unknown) => err);
  await fake.waitForRequests(3, 60_000);

  await restartServer.stop();
  restartServer = await startTestTemporal({ port: restartServer.port, dbFile: path.join(stateDir, 'temporal.db') });
  model.slowMs = 0;

  // The update call may or may not survive the outage; the session's own state is what counts.
  await turn;
  await restartConnection.close();
  const fresh = new LoopwrightClient(new Client({ connection: await Connection.connect({ address: restartServer.address }) }), taskQueue);
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

test.concurrent('worker: SIGTERM shuts a worker process down gracefully, letting a running model call finish', async () => {
  const taskQueue = 'crash-sigterm';
  const lw = client(taskQueue);
  const model = await scriptedModel();
  const { fake } = model;
  const worker = await startWorker(workerEnv(taskQueue, fake));
  model.slowMs = 1_500;
  const session = await lw.start({ bundlePath: bundleCopy(), agentId: 'facilitator' });
  const turn = session.send('*intake');
  await fake.waitForRequests(3, 60_000);
  // The last model call is in flight; SIGTERM lets it finish within the grace period.
  const code = await worker.kill('SIGTERM');
  expect(code).toBe(0);
  expect(worker.output()).toContain('Worker stopped');
  expect(fake.requests.filter((r) => r.aborted)).toHaveLength(0);

  // The turn's last workflow task needs a worker; a new one finishes it without calling the model again.
  await startWorker(workerEnv(taskQueue, fake));
  await expect(turn).resolves.toMatchObject({ success: true, response: 'All saved.' });
  expect(fake.requests).toHaveLength(3);
  await session.end();
  await session.result();
});

test.concurrent(
  'crash: a worker killed with SIGKILL during a custom tool call and during an MCP call is replaced; both calls are made again and the turn completes',
  async () => {
    const { taskQueue, fake, marks, env, first } = toolsTest;
    // The custom tool runs as a local activity, inside a workflow task: the killed worker's task is given up after 2 s.
    const lw = client(taskQueue, 2);
    const everything = { command: process.execPath, args: [path.resolve(__dirname, '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'] };
    expect(first.output()).toContain('Custom tools: slow_count');
    fake.setResponder((req) => {
      const messages = req.body?.messages ?? [];
      const step = messages.slice(messages.map((m) => m.role).lastIndexOf('user')).filter((m) => m.role === 'assistant').length;
      if (step === 0) return toolCalls([{ id: 'slow', name: 'slow_count', arguments: { to: 3 } }]);
      if (step === 1) return toolCalls([{ id: 'long', name: 'everything__trigger-long-running-operation', arguments: { duration: 1, steps: 2 } }]);
      return text('Counted and waited.');
    });
    const session = await lw.start({
      bundlePath: bundleCopy(),
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
    const second = await startWorker(env);
    // Then kill that one while the MCP call runs: as soon as its activity has started (the operation takes 1 s, after the worker has started the MCP server).
    await fake.waitForRequests(2, 60_000);
    for (let i = 0; i < 600 && !(await mcpCallStarted()); i++) await new Promise((r) => setTimeout(r, 50));
    await second.kill('SIGKILL');
    await startWorker(env);

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
  },
  150_000,
);
