/**
 * `loopwright chat` driven through pipes, as a script would: messages one per line, replies on
 * stdout, progress and approvals on stderr, `/approve` answering the write the agent asks for,
 * `/end` ending the session; and `chat --id` rejoining a session and showing its last exchange. The
 * tests run at the same time (`test.concurrent`), each with its own session, and the fake model
 * answers from each request alone. The first two run on one long-lived worker process they share
 * (so that their chats start no worker of their own); the Ctrl-C test's chat runs its own worker,
 * which must go on after the interrupt.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startTestTemporal, type TestTemporal } from '../support/temporal-server';
import type { ChatMessage } from '../../common/messages';
import { type FakeOpenAI, hang, type RecordedRequest, type Step, startFakeOpenAI, text, toolCalls } from '../../fake-model/server';
import { copyExampleBundle } from '../support/session-harness';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { cliEnvironment, startCli } from './cli-runner';

jest.setTimeout(90_000);

let server: TestTemporal;
let fake: FakeOpenAI;
let connection: Connection;
let client: Client;
let bundleCopy: ReturnType<typeof copyExampleBundle>;
let stateDir: string;
let worker: WorkerProcess | undefined;
/** The shared worker's task queue. */
const TASK_QUEUE = `chat-${process.pid}`;

/** A message the model never answers (until the client aborts). */
const SLOW = 'take your time';

/** `*intake` loads the workflow, saves a document (which waits for approval), then answers; SLOW hangs; anything else is echoed. */
/** The last user message of a request. */
function lastUserMessage(request: RecordedRequest): { said: string; lastUser: number; messages: ChatMessage[] } {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  return { said: String(messages[lastUser]?.content ?? ''), lastUser, messages };
}

function respond(request: RecordedRequest): Step {
  const { said, lastUser, messages } = lastUserMessage(request);
  const step = messages.slice(lastUser).filter((m) => m.role === 'assistant').length;
  if (said === '*intake') {
    if (step === 0) return toolCalls([{ id: 'call_wf', name: 'execute_workflow', arguments: { workflow_path: '{bundle-root}/workflows/intake/workflow.yaml' } }]);
    if (step === 1) return toolCalls([{ id: 'call_save', name: 'save_output', arguments: { file_path: '{output_folder}/chat.md', content: '# From chat\n' } }]);
    return text('Your requirements are saved.');
  }
  if (said === SLOW) return hang();
  return text(`You said: ${said}`);
}

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-chat-'));
  [server, fake] = await Promise.all([startTestTemporal(), startFakeOpenAI({ responder: respond })]);
  connection = await Connection.connect({ address: server.address });
  client = new Client({ connection });
  bundleCopy = copyExampleBundle('lw-chat-bundle-');
  worker = await startWorkerProcess({ TEMPORAL_ADDRESS: server.address, OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: 'test', LOOPWRIGHT_TASK_QUEUE: TASK_QUEUE, LOOPWRIGHT_STATE_DIR: stateDir });
}, 120_000);

afterAll(async () => {
  await worker?.kill('SIGKILL');
  await connection?.close();
  await fake?.close();
  await server?.stop();
  bundleCopy?.cleanup();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

/** A chat process with piped stdin; `waitFor` resolves once its output matches. */
function startChat(args: string[], taskQueue = TASK_QUEUE) {
  const env = cliEnvironment({ TEMPORAL_ADDRESS: server.address, OPENAI_BASE_URL: fake.baseURL, LOOPWRIGHT_TASK_QUEUE: taskQueue, LOOPWRIGHT_STATE_DIR: stateDir });
  const run = startCli(['chat', ...args], env, { cwd: stateDir, timeoutMs: 80_000, stdin: 'pipe' });
  const { child } = run;
  return {
    write: (line: string) => child.stdin!.write(`${line}\n`),
    signal: (name: NodeJS.Signals) => child.kill(name),
    close: () => child.stdin!.end(),
    stdout: run.stdout,
    stderr: run.stderr,
    exited: run.done.then((result) => result.code),
    async waitFor(pattern: RegExp, where: 'stdout' | 'stderr' = 'stderr'): Promise<RegExpMatchArray> {
      for (let i = 0; i < 600; i++) {
        const match = run[where]().match(pattern);
        if (match) return match;
        if (child.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`no ${pattern} in ${where}:\nstdout: ${run.stdout()}\nstderr: ${run.stderr()}`);
    },
  };
}

test.concurrent('chat: piped messages, a write that waits for /approve, replies on stdout, /end ends the session', async () => {
  const chat = startChat([bundleCopy.bundle, 'facilitator', '--id', `chat-${process.pid}`]);
  chat.write('*intake');
  const asked = await chat.waitFor(/\? save_output (\S+chat\.md) — 12 bytes: # From chat/);
  expect(asked[1]).not.toContain('{output_folder}');
  expect(chat.stderr()).toMatch(/… iteration \d+\/50/);
  expect(chat.stderr()).toMatch(/✓ workflow intake/);
  chat.write('/approve');
  await chat.waitFor(/Your requirements are saved\./, 'stdout');
  expect(chat.stderr()).toMatch(/approved: call_save/);
  const saved = path.join(fs.realpathSync(stateDir), 'docs', 'chat.md');
  expect(fs.readFileSync(saved, 'utf8')).toBe('# From chat\n');
  chat.write('hello again');
  chat.write('/end');
  expect(await chat.exited).toBe(0);
  expect(chat.stdout()).toBe('Your requirements are saved.\nYou said: hello again\n');
  expect(chat.stderr()).toContain(`Session chat-${process.pid} ended.`);
  expect((await client.workflow.getHandle(`chat-${process.pid}`).describe()).status.name).toBe('COMPLETED');
});

test.concurrent('chat: --id rejoins an open session and shows its last exchange; closing the input leaves the session open', async () => {
  const id = `chat-rejoin-${process.pid}`;
  const first = startChat([bundleCopy.bundle, 'facilitator', '--id', id, '--approve', 'none']);
  first.write('remember the blue door');
  await first.waitFor(/You said: remember the blue door/, 'stdout');
  first.close();
  expect(await first.exited).toBe(0);
  expect((await client.workflow.getHandle(id).describe()).status.name).toBe('RUNNING');

  const again = startChat(['--id', id]);
  await again.waitFor(/You: remember the blue door/);
  await again.waitFor(/You said: remember the blue door/, 'stdout');
  again.write('/status');
  await again.waitFor(/status waiting for user · turn 1/);
  again.write('/end');
  expect(await again.exited).toBe(0);
});

test.concurrent('chat: without a terminal, Ctrl-C (SIGINT) during a turn interrupts the turn and the chat goes on', async () => {
  const id = `chat-sigint-${process.pid}`;
  const hung = new Promise<void>((resolve) => {
    const onRequest = (r: RecordedRequest): void => {
      if (lastUserMessage(r).said !== SLOW) return;
      fake.events.off('request', onRequest);
      resolve();
    };
    fake.events.on('request', onRequest);
  });
  // A queue no worker polls: the chat runs the session on a worker of its own.
  const chat = startChat([bundleCopy.bundle, 'facilitator', '--id', id, '--approve', 'none'], `chat-sigint-${process.pid}`);
  chat.write(SLOW);
  await chat.waitFor(/… iteration 1\/50/);
  // Interrupt once the model call hangs on the server (not before it was sent, which would leave the hang for the next turn).
  await hung;
  chat.signal('SIGINT');
  await chat.waitFor(/turn interrupted/);
  chat.write('and now?');
  // The interrupted turn's message and this one reach the model as one user message (strict chat templates need turns to alternate).
  await chat.waitFor(/You said: take your time\s+and now\?/, 'stdout');
  chat.write('/end');
  expect(await chat.exited).toBe(0);
});
