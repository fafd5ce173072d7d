/**
 * A worker (a real `loopwright worker` process) killed with SIGKILL while a sandboxed command runs:
 * the command dies with it (nothing of it is left running), the call is not made again on the
 * replacement worker, and its result tells the model it may or may not have taken effect; the turn
 * goes on and the session ends as usual. A command the session's rules mark safe to repeat
 * (`commands.repeatable`) is made again on the replacement worker instead, and finishes.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { LoopwrightClient } from '../../client/session-client';
import type { ChatMessage, ToolMessage } from '../../common/messages';
import type { SessionState } from '../../common/session-types';
import { type FakeOpenAI, type Step, startFakeOpenAI, text, toolCalls } from '../../fake-model/server';
import { copyExampleBundle } from '../support/session-harness';
import { startTestTemporal, type TestTemporal } from '../support/temporal-server';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { processesWithMarker } from '../unit/commands-sandbox/sandbox-fixture';

jest.setTimeout(90_000);

/** In the command line, so its processes can be found on the host while it runs. */
const MARKER = 'lw-command-crash-marker';

let server: TestTemporal;
let fake: FakeOpenAI;
let connection: Connection;
let copy: ReturnType<typeof copyExampleBundle>;
const workers: WorkerProcess[] = [];

/** In the repeatable command's line (a sleep of an odd length), so its processes can be found. */
const REPEAT_MARKER = '1.5137';
/**
 * The two tests run at the same time (most of their time is spent waiting for the killed worker's
 * heartbeat timeout), each on a task queue and workers of its own; the fake model answers each
 * session by its request alone, and each command has its own marker. A killed worker holds its
 * sessions' next steps for its sticky timeout before the replacement may take them: a short one
 * here, as the 1 s of startWorkerProcess would be a good part of what the tests wait for.
 */
function workerEnv(taskQueue: string): Record<string, string> {
  return { TEMPORAL_ADDRESS: server.address, LOOPWRIGHT_TASK_QUEUE: taskQueue, OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: 'test-key', LOOPWRIGHT_STICKY_TIMEOUT: '200ms' };
}

async function startWorker(env: Record<string, string>): Promise<WorkerProcess> {
  const worker = await startWorkerProcess(env);
  workers.push(worker);
  return worker;
}

function scripted(req: { body: { messages?: ChatMessage[] } | null }): Step {
  const messages = req.body?.messages ?? [];
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  const step = messages.slice(lastUser).filter((m) => m.role === 'assistant').length;
  if (String(messages[lastUser]?.content).includes('repeatable')) {
    if (step === 0) return toolCalls([{ id: 'call_again', name: 'run_command', arguments: { command: `sleep ${REPEAT_MARKER} && touch {output_folder}/repeated.txt` } }]);
    return text('The command finished.');
  }
  if (step === 0) return toolCalls([{ id: 'call_slow', name: 'run_command', arguments: { command: `sleep 30; echo ${MARKER} > {output_folder}/finished.txt` } }]);
  return text('The command did not finish; I will not run it again blindly.');
}

beforeAll(async () => {
  [server, fake] = await Promise.all([startTestTemporal(), startFakeOpenAI({ responder: scripted })]);
  connection = await Connection.connect({ address: server.address });
  copy = copyExampleBundle('lw-command-crash-');
  fs.chmodSync(copy.root, 0o755);
  fs.mkdirSync(path.join(copy.bundle, 'docs'), { recursive: true });
  if (process.getuid?.() === 0) execFileSync('chown', ['-R', '65534:65534', copy.bundle]);
}, 120_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await connection?.close();
  await fake?.close();
  await server?.stop();
  copy?.cleanup();
});

/**
 * The command's own shell (`/bin/sh -c <line>` inside the sandbox) with `marker` in its line. Not
 * bwrap, whose arguments hold the line too from the moment it is spawned, before it has tied the
 * sandbox's life to the worker's: a kill that early could leave the sandbox running.
 */
async function commandShells(marker: string): Promise<number[]> {
  const shells: number[] = [];
  for (const pid of await processesWithMarker(marker)) {
    const argv0 = await fs.promises.readFile(`/proc/${pid}/cmdline`, 'utf8').then(
      (line) => line.split('\0')[0],
      () => '',
    );
    if (argv0 === '/bin/sh') shells.push(pid);
  }
  return shells;
}

async function waitFor<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never: ${what}`);
}

test.concurrent('crash: a worker killed mid-command takes the command with it; the call is not made again and says it may or may not have taken effect', async () => {
  const taskQueue = 'command-crash';
  const env = workerEnv(taskQueue);
  const lw = new LoopwrightClient(new Client({ connection }), taskQueue);
  const first = await startWorker(env);
  const session = await lw.start({ bundlePath: copy.bundle, agentId: 'facilitator', commands: { enabled: true }, timeouts: { toolHeartbeat: '2 seconds' } });
  const turn = session.send('run the slow command');
  await waitFor(async () => ((await session.state()) as SessionState).pendingApprovals[0], 'the approval');
  await session.approve('call_slow');
  // The command runs on the first worker: its sleep is on the host, inside the sandbox.
  await waitFor(async () => ((await commandShells(MARKER)).length > 0 ? true : undefined), 'the command running');
  await first.kill('SIGKILL');
  // The sandbox dies with the worker: nothing of the command is left.
  await waitFor(async () => ((await processesWithMarker(MARKER)).length === 0 ? true : undefined), 'the command gone');
  await startWorker(env);

  await expect(turn).resolves.toMatchObject({ success: true, response: 'The command did not finish; I will not run it again blindly.' });
  const messages = await session.messages();
  const result = JSON.parse(messages.find((m): m is ToolMessage => m.role === 'tool' && m.tool_call_id === 'call_slow')!.content) as Record<string, unknown>;
  expect(result).toMatchObject({ success: false, unknownOutcome: true });
  expect(String(result.error)).toMatch(/^run_command did not finish \(.+\); it may or may not have taken effect, and it was not run again/);
  // Not made again: the replacement worker never started it, and it never finished.
  expect(await processesWithMarker(MARKER)).toEqual([]);
  expect(fs.existsSync(path.join(copy.bundle, 'docs', 'finished.txt'))).toBe(false);
  await session.end();
  await session.result();
});

test.concurrent('crash: a command the rules mark safe to repeat is made again on the replacement worker and finishes', async () => {
  const taskQueue = 'command-crash-repeatable';
  const env = workerEnv(taskQueue);
  const lw = new LoopwrightClient(new Client({ connection }), taskQueue);
  const first = await startWorker(env);
  const rules = ['sleep *', 'touch {output_folder}/*'];
  const session = await lw.start({ bundlePath: copy.bundle, agentId: 'facilitator', commands: { enabled: true, allow: rules, repeatable: rules }, timeouts: { toolHeartbeat: '2 seconds' } });
  const turn = session.send('run the repeatable command');
  await waitFor(async () => ((await commandShells(REPEAT_MARKER)).length > 0 ? true : undefined), 'the command running');
  await first.kill('SIGKILL');
  await waitFor(async () => ((await processesWithMarker(REPEAT_MARKER)).length === 0 ? true : undefined), 'the command gone');
  await startWorker(env);

  await expect(turn).resolves.toMatchObject({ success: true, response: 'The command finished.' });
  const messages = await session.messages();
  const result = JSON.parse(messages.find((m): m is ToolMessage => m.role === 'tool' && m.tool_call_id === 'call_again')!.content) as Record<string, unknown>;
  expect(result).toMatchObject({ success: true, exitCode: 0 });
  expect(result.unknownOutcome).toBeUndefined();
  expect(fs.existsSync(path.join(copy.bundle, 'docs', 'repeated.txt'))).toBe(true);
  // Its activity ran twice: the attempt the crash ended, and the one that finished.
  const events = (await session.workflow.fetchHistory()).events ?? [];
  const started = events.filter((e) => e.activityTaskStartedEventAttributes);
  expect(started.some((e) => (e.activityTaskStartedEventAttributes!.attempt ?? 1) >= 2)).toBe(true);
  await session.end();
  await session.result();
});
