/**
 * Files where they are, on the real dev server: two workers on one task queue, on hosts `host-a`
 * (in this process; it holds the session's files) and `host-b` (a `loopwright worker` process with
 * LOOPWRIGHT_HOST_ID=host-b; a process runs one worker per task queue). A session started with
 * `filesHost: 'host-a'` waits, and says so, while no worker of host-a runs; file tools never run on
 * host-b (a read it is handed as a local activity is refused before it touches anything and goes to
 * host-a); stopping host-a's worker mid-session loses nothing. Who ran what is read from the
 * history: every started activity names the worker that took it.
 */
import path from 'node:path';
import { filesQueue } from '../../common/files-host';
import type { SessionState } from '../../common/session-types';
import { text, toolCalls } from '../../fake-model/server';
import { LoopwrightClient, type SessionHandle } from '../../client/session-client';
import { createWorker } from '../../worker/create-worker';
import { filesHostSetting } from '../../cli/commands/files-host-option';
import { copyExampleBundle, startSessionHarness, type SessionHarness } from '../support/session-harness';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

jest.setTimeout(120_000);

const FILE_ACTIVITIES = new Set(['initializeAgent', 'listTools', 'read_file', 'save_output', 'execute_workflow', 'verifyDocument', 'callMcpTool']);
const MODEL_ACTIVITIES = new Set(['callModel', 'callModelV2', 'summarizeContext', 'describeModel']);

let h: SessionHarness;
let bundle: ReturnType<typeof copyExampleBundle>;
const taskQueue = `files-host-${process.pid}`;
beforeAll(async () => {
  h = await startSessionHarness();
  bundle = copyExampleBundle('lw-files-host-');
}, 120_000);

afterAll(async () => {
  await h?.close();
  bundle?.cleanup();
});

/** A worker of `host` in this process (identity `worker-<host>`; its files worker `worker-<host>@files`). */
async function startHostWorker(host: string): Promise<{ stop(): Promise<void> }> {
  const worker = await createWorker({
    connection: h.nativeConnection,
    taskQueue,
    workflowBundle: h.workflowBundle,
    activityOptions: { model: { baseURL: h.fake.baseURL, apiKey: 'test-key' } },
    hostId: host,
    overrides: { identity: `worker-${host}` },
  });
  const running = worker.run();
  return {
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}

async function waitForState(session: SessionHandle, test: (s: SessionState) => boolean, what: string): Promise<SessionState> {
  for (let i = 0; i < 400; i++) {
    const state = await session.state().catch(() => undefined);
    if (state && test(state)) return state;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`state never showed: ${what}`);
}

test('file tools run only on the files host, the session waits for it, and a stopped host worker loses nothing', async () => {
  const b: WorkerProcess = await startWorkerProcess({
    TEMPORAL_ADDRESS: h.server.address,
    LOOPWRIGHT_TASK_QUEUE: taskQueue,
    LOOPWRIGHT_HOST_ID: 'host-b',
    OPENAI_BASE_URL: h.fake.baseURL,
    OPENAI_API_KEY: 'test-key',
  });
  const loopwright = new LoopwrightClient(h.client, taskQueue);
  const session = await loopwright.start({ bundlePath: bundle.bundle, agentId: 'facilitator', filesHost: 'host-a', timeouts: { filesWait: '300 milliseconds' } });

  // Nobody on host-a: initialisation waits, and the state says for whom.
  const waiting = await waitForState(session, (s) => s.waitingForFiles !== undefined, 'waiting for host-a');
  expect(waiting.waitingForFiles?.host).toBe('host-a');

  let a = await startHostWorker('host-a');
  h.fake.enqueue(
    toolCalls([{ id: 'r1', name: 'read_file', arguments: { file_path: '{bundle-root}/config.yaml' } }]),
    toolCalls([{ id: 'w1', name: 'execute_workflow', arguments: { workflow_path: '{bundle-root}/workflows/intake/workflow.yaml' } }]),
    toolCalls([{ id: 's1', name: 'save_output', arguments: { file_path: '{output_folder}/files-host.md', content: '# Notes\n' } }]),
    text('Saved.'),
  );
  const first = await session.send('read and save');
  expect(first).toMatchObject({ status: 'completed', response: 'Saved.' });
  expect((await session.state()).waitingForFiles).toBeUndefined();
  const messages = await session.turnMessages(first);
  expect(messages.filter((m) => m.role === 'tool').map((m) => (JSON.parse(String(m.content)) as { success: boolean }).success)).toEqual([true, true, true]);

  // host-a's worker stops: the next read waits for it, then goes on once one is back.
  await a.stop();
  h.fake.enqueue(toolCalls([{ id: 'r2', name: 'read_file', arguments: { file_path: '{bundle-root}/config.yaml' } }]), text('Read it again.'));
  const second = session.send('read again');
  await waitForState(session, (s) => s.waitingForFiles !== undefined, 'waiting for host-a again');
  a = await startHostWorker('host-a');
  expect(await second).toMatchObject({ status: 'completed', response: 'Read it again.' });
  await session.end();
  await a.stop();
  await b.kill('SIGTERM');

  // From the history: the worker of every file activity, and of every model call.
  const started = new Map<number, string>();
  const events = (await session.workflow.fetchHistory()).events ?? [];
  for (const e of events) {
    const attrs = e.activityTaskStartedEventAttributes;
    if (attrs) started.set(Number(attrs.scheduledEventId), attrs.identity ?? '');
  }
  const byType = (types: Set<string>) =>
    events
      .filter((e) => types.has(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''))
      .map((e) => started.get(Number(e.eventId)))
      .filter((identity): identity is string => identity !== undefined);
  const fileWorkers = byType(FILE_ACTIVITIES);
  expect(fileWorkers.length).toBeGreaterThanOrEqual(5);
  expect(new Set(fileWorkers)).toEqual(new Set(['worker-host-a@files']));
  const modelWorkers = byType(MODEL_ACTIVITIES);
  expect(modelWorkers.length).toBeGreaterThanOrEqual(5);
  expect(modelWorkers.every((identity) => !identity.endsWith('@files'))).toBe(true);
  // The workflow began on host-b (the only worker then), so host-b was handed the first read as a
  // local activity: it refused, and the read went to host-a.
  const refused = events.filter((e) => e.markerRecordedEventAttributes?.failure?.applicationFailureInfo?.type === 'LoopwrightNotFilesHost');
  expect(refused.length).toBeGreaterThanOrEqual(1);
});

test('the files queue is named after the task queue and the host; the command line records this machine unless told otherwise', () => {
  expect(filesQueue('loopwright', 'laptop.local')).toBe('loopwright@laptop.local');
  expect(filesHostSetting(undefined, { LOOPWRIGHT_HOST_ID: 'build-7' })).toEqual({ filesHost: 'build-7' });
  expect(filesHostSetting('any', { LOOPWRIGHT_HOST_ID: 'build-7' })).toEqual({});
  expect(filesHostSetting('gpu-2', {})).toEqual({ filesHost: 'gpu-2' });
  expect(() => filesHostSetting('a b', {})).toThrow(/--files-host a b: expected a host id/);
  expect(() => filesHostSetting(undefined, { LOOPWRIGHT_HOST_ID: 'bad id' })).toThrow(/LOOPWRIGHT_HOST_ID must be/);
  expect(path.basename(bundle.bundle)).toBe('requirements-facilitator');
});
