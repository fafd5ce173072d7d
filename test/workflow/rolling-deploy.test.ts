/**
 * A rolling deploy under Worker Deployment Versioning, on a real dev server with real workers: build
 * A runs sessions; build B (a genuinely different bundle, hence build id) starts and is made
 * current; a session mid-turn on A finishes that turn on A, an idle one moves to B at its next turn,
 * new sessions start on B, and A drains and stops. Which build ran what is read from the sessions'
 * histories (the build each workflow task was completed by), never from timings.
 */
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { LoopwrightClient, type SessionHandle } from '../../client/session-client';
import type { SessionInput } from '../../common/session-types';
import { type FakeOpenAI, startFakeOpenAI, type Step, text } from '../../fake-model/server';
import { createWorker } from '../../worker/create-worker';
import { makeBuildCurrent } from '../../worker/current-build';
import { copyExampleBundle, quietRuntime } from '../support/session-harness';
import { startTestTemporal, type TestTemporal } from '../support/temporal-server';
import { testWorkflowBundle } from '../support/workflow-bundle';
import { closeNativeConnection } from '../../cli/temporal-session';

jest.setTimeout(120_000);

const DEPLOYMENT = 'loopwright-rolling';
const TASK_QUEUE = 'rolling-deploy';
/** The server re-reads whether a version still has pinned sessions every second, instead of after minutes. */
const FAST_DRAINAGE = ['matching.wv.VersionDrainageStatusVisibilityGracePeriod="1s"', 'matching.wv.VersionDrainageStatusRefreshInterval="1s"'];
const { EventType, VersionDrainageStatus } = temporal.api.enums.v1;

let server: TestTemporal;
let fake: FakeOpenAI;
let bundle: WorkflowBundle;
let connection: Connection;
let client: Client;
let nativeConnection: NativeConnection;
let bundleCopy: ReturnType<typeof copyExampleBundle>;
let loopwright: LoopwrightClient;
const workers: { worker: Worker; running: Promise<void> }[] = [];

beforeAll(async () => {
  quietRuntime();
  [server, fake, bundle] = await Promise.all([startTestTemporal({ dynamicConfig: FAST_DRAINAGE }), startFakeOpenAI(), testWorkflowBundle()]);
  connection = await Connection.connect({ address: server.address });
  client = new Client({ connection });
  nativeConnection = await NativeConnection.connect({ address: server.address });
  bundleCopy = copyExampleBundle();
  loopwright = new LoopwrightClient(client, TASK_QUEUE);
}, 120_000);

afterAll(async () => {
  for (const { worker } of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
  await Promise.all(workers.map(({ running }) => running.catch(() => undefined)));
  if (nativeConnection) await closeNativeConnection(nativeConnection);
  await connection?.close();
  await fake?.close();
  await server?.stop();
  bundleCopy?.cleanup();
});

/** A versioned worker of `code`, its build id derived as `loopwright worker` derives it; running until stopped. */
async function startBuild(code: WorkflowBundle): Promise<{ worker: Worker; version: WorkerDeploymentVersion; running: Promise<void> }> {
  const worker = await createWorker({
    connection: nativeConnection,
    taskQueue: TASK_QUEUE,
    workflowBundle: code,
    activityOptions: { model: { baseURL: fake.baseURL, apiKey: 'test-key' } },
    deployment: { deploymentName: DEPLOYMENT },
    overrides: { stickyQueueScheduleToStartTimeout: '1s' },
  });
  const options = worker.options.workerDeploymentOptions;
  if (!options?.useWorkerVersioning) throw new Error('the worker is not versioned');
  const running = worker.run();
  workers.push({ worker, running });
  return { worker, version: options.version, running };
}

/** The history of each run of a session, oldest first (following continue-as-new). */
async function historiesOf(session: SessionHandle): Promise<temporal.api.history.v1.IHistory[]> {
  const described = await client.workflowService.describeWorkflowExecution({ namespace: 'default', execution: { workflowId: session.workflowId } });
  const histories = [];
  let runId: string | undefined = described.workflowExecutionInfo?.firstRunId ?? undefined;
  while (runId) {
    const history = await client.workflow.getHandle(session.workflowId, runId).fetchHistory();
    histories.push(history);
    runId = history.events?.find((e) => e.workflowExecutionContinuedAsNewEventAttributes)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return histories;
}

/**
 * Each run of a session, oldest first: the builds that completed its workflow tasks, how many turns
 * it answered, and, when it continued as new, the build the carried state says it moved away from.
 */
async function runsOf(session: SessionHandle): Promise<{ builds: string[]; turnsAnswered: number; movedFrom?: string }[]> {
  return (await historiesOf(session)).map(({ events }) => {
    const builds = new Set<string>();
    let turnsAnswered = 0;
    let movedFrom: string | undefined;
    for (const event of events ?? []) {
      const completed = event.workflowTaskCompletedEventAttributes;
      if (completed) builds.add(completed.deploymentVersion?.buildId ?? 'unversioned');
      if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED && !event.workflowExecutionUpdateCompletedEventAttributes?.outcome?.failure) turnsAnswered += 1;
      const continued = event.workflowExecutionContinuedAsNewEventAttributes;
      if (continued) movedFrom = (JSON.parse(Buffer.from(continued.input!.payloads![0]!.data!).toString('utf8')) as SessionInput).continued?.upgradedFrom;
    }
    return { builds: [...builds].sort(), turnsAnswered, ...(movedFrom !== undefined ? { movedFrom } : {}) };
  });
}

/** Whether the server counts build `version` as drained: no session is pinned to it any more. */
async function drained(version: WorkerDeploymentVersion): Promise<boolean> {
  const { workerDeploymentVersionInfo: info } = await client.workflowService.describeWorkerDeploymentVersion({ namespace: 'default', deploymentVersion: version });
  return info?.drainageInfo?.status === VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINED;
}

test('rolling deploy: mid-turn sessions finish on build A, idle ones move to build B at their next turn, new ones start on B, A drains', async () => {
  const a = await startBuild(bundle);
  expect(await makeBuildCurrent(client, a.version)).toBeUndefined();

  // The model answers at once, except the first call of the turn "a long turn", which waits for the test.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let heldCalls = 0;
  fake.setResponder(async (request): Promise<Step> => {
    const last = request.body?.messages?.at(-1);
    if (last?.role === 'user' && last.content === 'a long turn') {
      heldCalls += 1;
      await held;
      return text('the long turn is done');
    }
    return text('noted');
  });
  const start = () => loopwright.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator' });
  const idle = await start();
  expect((await idle.send('first message')).status).toBe('completed');
  const busy = await start();
  const longTurn = busy.send('a long turn');
  while (heldCalls === 0) await new Promise((r) => setTimeout(r, 50));

  // Build B: the same sources, a different bundle, so a different derived build id.
  const b = await startBuild({ ...bundle, code: `// build B\n${bundle.code}` });
  expect(b.version.buildId).not.toBe(a.version.buildId);
  expect(b.version.buildId).toMatch(/^\d+\.\d+\.\d+.*-[0-9a-f]{12}$/);
  expect(await makeBuildCurrent(client, b.version)).toBe(a.version.buildId);

  release();
  expect((await longTurn).response).toBe('the long turn is done');
  expect((await idle.send('second message')).status).toBe('completed');
  const fresh = await start();
  expect((await fresh.send('hello')).status).toBe('completed');

  const A = a.version.buildId;
  const B = b.version.buildId;
  // Mid-turn: the turn finished on A (the run that answered it ran on A alone); the session then moved to B.
  expect(await runsOf(busy)).toEqual([
    { builds: [A], turnsAnswered: 1, movedFrom: A },
    { builds: [B], turnsAnswered: 0 },
  ]);
  // Idle: its first turn on A; the second message moved it to B before its turn, which B answered.
  expect(await runsOf(idle)).toEqual([
    { builds: [A], turnsAnswered: 1, movedFrom: A },
    { builds: [B], turnsAnswered: 1 },
  ]);
  expect(await runsOf(fresh)).toEqual([{ builds: [B], turnsAnswered: 1 }]);
  // The move is decided from what history recorded: each run replays, the moves included.
  for (const [i, history] of [...(await historiesOf(busy)), ...(await historiesOf(idle))].entries()) {
    await expect(Worker.runReplayHistory({ workflowBundle: bundle }, history, `rolling-${i}`)).resolves.toBeUndefined();
  }

  // A drains (no session is pinned to it), stops, and the sessions go on without it.
  while (!(await drained(a.version))) await new Promise((r) => setTimeout(r, 200));
  a.worker.shutdown();
  await a.running;
  expect((await busy.send('after A stopped')).status).toBe('completed');
  expect((await runsOf(busy)).at(-1)).toEqual({ builds: [B], turnsAnswered: 1 });
  b.worker.shutdown();
  await b.running;
});
