/**
 * End to end through the real command line: `node bin/loopwright.js ...` as child processes
 * against a dev server this file starts on a free port, the fake OpenAI server, and a copy of the
 * example bundle. Every command gets its own task queue and a temp state folder, so nothing here
 * touches the repository's `.loopwright` folder or port 7233. The tests run at the same time
 * (`test.concurrent`): the fake model answers from each request alone, and each test reads only
 * its own sessions' requests. The tests that need a long-lived worker process share one (on its own
 * task queue), except the one that kills its worker.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startTestTemporal, type TestTemporal } from '../support/temporal-server';
import { LoopwrightClient } from '../../client/session-client';
import type { ChatMessage } from '../../common/messages';
import { type FakeOpenAI, hang, type RecordedRequest, type Step, startFakeOpenAI, text, toolCalls } from '../../fake-model/server';
import { copyExampleBundle } from '../support/session-harness';
import { startCliWorker, startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { type CliResult, cliEnvironment, describeRun, runCli, startCli, type RunningCli } from './cli-runner';
import { writeSkillsProject } from '../support/skills-project';

jest.setTimeout(90_000);

/** What the scripted model writes through `save_output` for `*intake`. */
const INTAKE_DOCUMENT = '# Requirements (e2e)\n\nA shared tool library for the street.\n';
const INTAKE_REPLY = 'Saved the intake document.';
/** A user message the model answers with tool calls forever. */
const ENDLESS = 'keep reading';
/** A user message the model never answers (until the client aborts). */
const SLOW = 'take your time';

let server: TestTemporal;
let fake: FakeOpenAI;
let connection: Connection;
let client: Client;
let bundleCopy: ReturnType<typeof copyExampleBundle>;
let stateDir: string;
let queueCounter = 0;
const background: RunningCli[] = [];
const workers: WorkerProcess[] = [];
const timings: string[] = [];
let shared: Promise<{ worker: WorkerProcess; env: NodeJS.ProcessEnv; taskQueue: string }> | undefined;

/** The long-lived worker process the tests share, started by the first test that asks, with the environment of its task queue. */
function sharedWorker(): Promise<{ worker: WorkerProcess; env: NodeJS.ProcessEnv; taskQueue: string }> {
  shared ??= (async () => {
    const { env, taskQueue } = freshEnv();
    const worker = await startCliWorker({ address: server.address, baseURL: fake.baseURL, taskQueue, stateDir });
    workers.push(worker);
    return { worker, env, taskQueue };
  })();
  return shared;
}

/**
 * The last model call of `*intake` waits for this, so that `run`'s progress shows the call in
 * flight whatever the machine's pace: the first test lets it go once it saw the line.
 */
let releaseIntake: () => void = () => undefined;
const intakeReleased = new Promise<void>((resolve) => (releaseIntake = resolve));

/** The text of the last user message of a request, and how many assistant replies followed it. */
function lastUserMessage(request: RecordedRequest): { said: string; step: number } {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const index = messages.map((m) => m.role).lastIndexOf('user');
  const said = index >= 0 ? String(messages[index].content) : '';
  return { said, step: messages.slice(index + 1).filter((m) => m.role === 'assistant').length };
}

/**
 * The model's answer depends only on the request, as a deterministic model's would: `*intake`
 * loads the workflow, saves the document and answers (slowly enough for progress to show);
 * ENDLESS asks for a tool every time; SLOW never answers; anything else is echoed.
 */
function respond(request: RecordedRequest): Step | Promise<Step> {
  const { said, step } = lastUserMessage(request);
  if (said.includes('*intake')) {
    if (step === 0) return toolCalls([{ name: 'execute_workflow', arguments: { workflow_path: '{bundle-root}/workflows/intake/workflow.yaml' } }]);
    if (step === 1) return toolCalls([{ name: 'save_output', arguments: { file_path: '{output_folder}/e2e-intake.md', content: INTAKE_DOCUMENT } }]);
    return intakeReleased.then(() => text(INTAKE_REPLY));
  }
  if (said.includes(ENDLESS)) return toolCalls([{ name: 'read_file', arguments: { file_path: '{bundle-root}/workflows/intake/template.md' } }]);
  if (said.includes(SLOW)) return hang();
  if (said.includes(APPROVAL_TURN)) {
    if (step < 2) {
      const n = step + 1;
      return toolCalls([{ id: `call_approve_${n}`, name: 'save_output', arguments: { file_path: `{output_folder}/approval-${n}.md`, content: `# A${n}` } }]);
    }
    return text('Both decided.');
  }
  return text(`You said: ${said}`);
}

/** A turn that asks to save twice, for the approval commands. */
const APPROVAL_TURN = 'save two files, asking first';

/** Environment for commands on a fresh task queue. */
function freshEnv(): { env: NodeJS.ProcessEnv; taskQueue: string } {
  const taskQueue = `e2e-cli-${process.pid}-${++queueCounter}`;
  const env = cliEnvironment({
    TEMPORAL_ADDRESS: server.address,
    OPENAI_BASE_URL: fake.baseURL,
    LOOPWRIGHT_TASK_QUEUE: taskQueue,
    LOOPWRIGHT_STATE_DIR: stateDir,
  });
  return { env, taskQueue };
}

/** Run a command, record how long it took, and return its result. */
async function cli(args: string[], env: NodeJS.ProcessEnv, options: { cwd?: string } = {}): Promise<CliResult> {
  const result = await runCli(args, env, { cwd: options.cwd ?? stateDir });
  timings.push(`${result.ms} ms  loopwright ${args[0]}${args.includes('--json') ? ' --json' : ''}${args.includes('--once') ? ' --once' : ''}`);
  return result;
}

/** Expect exit status `code`, showing the command's output when it differs. */
function expectExit(args: string[], result: CliResult, code: number): void {
  if (result.code !== code) throw new Error(`expected exit ${code}\n${describeRun(args, result)}`);
}

function sessionIdFrom(stderr: string): string {
  const match = /Session (\S+) started/.exec(stderr);
  if (!match) throw new Error(`no "Session <id> started" line in:\n${stderr}`);
  return match[1];
}

/** Resolves with the first request whose last user message contains `words`. */
function requestSaying(words: string, timeoutMs = 30_000): Promise<RecordedRequest> {
  return new Promise((resolve, reject) => {
    const found = fake.requests.find((r) => lastUserMessage(r).said.includes(words));
    if (found) return resolve(found);
    const timer = setTimeout(() => {
      fake.events.off('request', onRequest);
      reject(new Error(`the fake model saw no request saying "${words}" within ${timeoutMs} ms`));
    }, timeoutMs);
    const onRequest = (r: RecordedRequest): void => {
      if (!lastUserMessage(r).said.includes(words)) return;
      clearTimeout(timer);
      fake.events.off('request', onRequest);
      resolve(r);
    };
    fake.events.on('request', onRequest);
  });
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-e2e-cli-'));
  [server, fake] = await Promise.all([startTestTemporal(), startFakeOpenAI({ responder: respond })]);
  connection = await Connection.connect({ address: server.address });
  client = new Client({ connection });
  bundleCopy = copyExampleBundle('lw-e2e-bundle-');
}, 120_000);

afterAll(async () => {
  for (const run of background) run.kill();
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await connection?.close();
  await fake?.close();
  await server?.stop();
  bundleCopy?.cleanup();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
  if (timings.length) process.stderr.write(`CLI timings:\n  ${timings.join('\n  ')}\n`);
});

test.concurrent('cli: run with no worker polling runs the session in-process; send continues it and end completes it', async () => {
  const { env } = freshEnv();
  const runArgs = ['run', bundleCopy.bundle, 'facilitator', '*intake'];
  const running = startCli(runArgs, env, { cwd: stateDir });
  background.push(running);
  // The last model call waits until the progress poll has shown it.
  await waitFor('the progress line of the last model call', async () => (running.stderr().includes('iteration 3/50 · waiting for the model') || running.child.exitCode !== null ? true : undefined));
  releaseIntake();
  const run = await running.done;
  timings.push(`${run.ms} ms  loopwright run`);
  expectExit(runArgs, run, 0);
  const id = sessionIdFrom(run.stderr);
  expect(id).toMatch(/^loopwright-facilitator-[0-9a-f]{8}$/);
  expect(run.stderr).toContain('no worker was polling; running one in this process');
  expect(run.stderr).toContain('iteration 3/50 · waiting for the model');
  expect(run.stdout).toBe(`${INTAKE_REPLY}\n`);
  // {project-root} is the folder the command ran in, so the document lands in its docs/.
  const saved = path.join(fs.realpathSync(stateDir), 'docs', 'e2e-intake.md');
  expect(fs.readFileSync(saved, 'utf8')).toBe(INTAKE_DOCUMENT);

  const sendArgs = ['send', id, 'and one more thing'];
  const send = await cli(sendArgs, env);
  expectExit(sendArgs, send, 0);
  expect(send.stdout).toBe('You said: and one more thing\n');
  const last = [...fake.requests].reverse().find((r) => lastUserMessage(r).said === 'and one more thing')!.body!.messages!;
  expect(last.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['*intake', 'and one more thing']);

  // With no worker polling any more, `status` runs one for its query.
  const statusArgs = ['status', id];
  const status = await cli(statusArgs, env);
  expectExit(statusArgs, status, 0);
  expect(status.stdout).toContain('status:     waiting_for_user');
  expect(status.stdout).toContain('turn:       2');

  const endArgs = ['end', id];
  const end = await cli(endArgs, env);
  expectExit(endArgs, end, 0);
  expect(end.stdout).toContain(`Session ${id} ended after 2 turn(s)`);
  const description = await client.workflow.getHandle(id).describe();
  expect(description.status.name).toBe('COMPLETED');
});

test.concurrent('cli: run --once completes the workflow; a one-shot past the limit exits non-zero with the limit message', async () => {
  // On the shared worker: the first test runs a session in the command itself.
  const { env } = await sharedWorker();
  const okId = `e2e-once-ok-${process.pid}`;
  const okArgs = ['run', bundleCopy.bundle, 'facilitator', 'hello there', '--once', '--id', okId];
  const ok = await cli(okArgs, env);
  expectExit(okArgs, ok, 0);
  expect(ok.stdout).toBe('You said: hello there\n');
  expect((await client.workflow.getHandle(okId).describe()).status.name).toBe('COMPLETED');

  const overId = `e2e-once-over-${process.pid}`;
  const overArgs = ['run', bundleCopy.bundle, 'facilitator', ENDLESS, '--once', '--max-iterations', '2', '--id', overId];
  const over = await cli(overArgs, env);
  expectExit(overArgs, over, 1);
  expect(over.stderr).toContain('Agent execution exceeded maximum iterations (2)');
  expect((await client.workflow.getHandle(overId).describe()).status.name).toBe('FAILED');
});

test.concurrent('cli: status shows a slow model call; interrupt ends the turn of a background send and aborts the request', async () => {
  const { env, taskQueue } = freshEnv();
  const session = await new LoopwrightClient(client, taskQueue).start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator' });
  const sendArgs = ['send', session.workflowId, SLOW];
  const send = startCli(sendArgs, env, { cwd: stateDir });
  background.push(send);
  const request = await requestSaying(SLOW, 45_000);

  // While the model call hangs, `status` (answered by the send's own worker) shows it.
  const statusArgs = ['status', session.workflowId];
  const status = await cli(statusArgs, env);
  expectExit(statusArgs, status, 0);
  expect(status.stdout).toContain(`Session ${session.workflowId}: workflow running`);
  expect(status.stdout).toMatch(/agent: +Robin \(Requirements Facilitator\)/);
  expect(status.stdout).toMatch(/status: +thinking/);
  expect(status.stdout).toMatch(/turn: +1, iteration 1\/50/);

  // A second message while the turn runs is refused: exit 1, and with --json the refusal's type.
  const busyArgs = ['send', session.workflowId, 'me too', '--json'];
  const busy = await cli(busyArgs, env);
  expectExit(busyArgs, busy, 1);
  expect(JSON.parse(busy.stdout)).toEqual({ error: expect.stringMatching(/busy|turn is running/i), type: 'LoopwrightBusy' });

  const interruptArgs = ['interrupt', session.workflowId];
  const interrupt = await cli(interruptArgs, env);
  expectExit(interruptArgs, interrupt, 0);
  expect(interrupt.stdout).toContain(`Interrupt sent to ${session.workflowId}`);

  const sent = await send.done;
  timings.push(`${sent.ms} ms  loopwright send (background, interrupted)`);
  expectExit(sendArgs, sent, 1);
  expect(sent.stderr).toContain('Turn interrupted: Interrupted by the user');
  await fake.waitForAborts(1, 10_000);
  expect(request.aborted).toBe(true);
  // The session itself goes on, waiting for the next message (no worker is left to answer a query).
  expect((await session.workflow.describe()).status.name).toBe('RUNNING');
});

test.concurrent('cli: run --detach returns at once and the session runs on a long-lived worker process', async () => {
  const { env, taskQueue, worker } = await sharedWorker();
  const args = ['run', bundleCopy.bundle, 'facilitator', 'detached hello', '--detach'];
  const run = await cli(args, env);
  expectExit(args, run, 0);
  const id = run.stdout.trim();
  expect(id).toBe(sessionIdFrom(run.stderr));
  expect(run.stderr).toContain('Detached');
  expect(run.stderr).not.toContain('no worker was polling');

  const handle = new LoopwrightClient(client, taskQueue).session(id);
  const lastTurn = await waitFor('the detached turn', async () => (await handle.state()).lastTurn);
  expect(lastTurn).toMatchObject({ success: true, response: 'You said: detached hello' });

  const statusArgs = ['status', id, '--json'];
  const status = await cli(statusArgs, env);
  expectExit(statusArgs, status, 0);
  const parsed = JSON.parse(status.stdout) as { workflowId: string; workflowStatus: string; state: { status: string; turn: number } };
  expect(parsed).toMatchObject({ workflowId: id, workflowStatus: 'RUNNING', state: { status: 'waiting_for_user', turn: 1 } });

  // Every activity ran on the worker process (its session worker or, for file tools, its files worker), none in the command.
  const history = await handle.workflow.fetchHistory();
  const identities = [...new Set((history.events ?? []).flatMap((e) => (e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.identity ?? ''] : [])))];
  expect(identities.length).toBeGreaterThanOrEqual(1);
  expect(identities.filter((identity) => !new RegExp(`^loopwright-worker-${worker.child.pid}@`).test(identity))).toEqual([]);
  await handle.end();
  expect(await handle.result()).toMatchObject({ turns: 1, endedBy: 'end_signal' });
});

test.concurrent('cli: status lists a call waiting for approval; approve and deny decide it; extend needs a running turn', async () => {
  const { env, taskQueue } = await sharedWorker();
  const lw = new LoopwrightClient(client, taskQueue);
  const session = await lw.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator', approval: { policy: 'writes' } });
  const turn = session.send(APPROVAL_TURN);
  // Once the session waits for the decision, `status` lists the call.
  await waitFor('a pending approval', async () => ((await session.state()).pendingApprovals.length > 0 ? true : undefined));
  const status = await cli(['status', session.workflowId], env);
  expectExit(['status'], status, 0);
  expect(status.stdout).toMatch(/approval: {3}call_approve_1 save_output \S*approval-1\.md — 4 bytes: # A1/);
  const approve = await cli(['approve', session.workflowId, 'call_approve_1'], env);
  expectExit(['approve'], approve, 0);
  expect(approve.stdout).toBe('Approved: call_approve_1\n');
  await waitFor('the second approval', async () => ((await session.state()).pendingApprovals.length > 0 ? true : undefined));
  const deny = await cli(['deny', session.workflowId, '-', 'not', 'now'], env);
  expectExit(['deny'], deny, 0);
  expect(deny.stdout).toBe('Denied: call_approve_2\n');
  const result = await turn;
  expect(result.success).toBe(true);
  const nothing = await cli(['approve', session.workflowId], env);
  expect(nothing.code).toBe(1);
  expect(nothing.stderr).toContain('Rejected: No tool call is waiting for approval');
  const nothingJson = await cli(['approve', session.workflowId, '--json'], env);
  expect(nothingJson.code).toBe(1);
  expect(JSON.parse(nothingJson.stdout)).toEqual({ error: 'No tool call is waiting for approval', type: 'LoopwrightBadInput' });
  const extend = await cli(['extend', session.workflowId, '5'], env);
  expect(extend.code).toBe(1);
  expect(extend.stderr).toContain('No turn is running to extend');
  await session.end();
});

test.concurrent('cli: run right after the only worker was killed does not wait in silence: it runs a worker itself', async () => {
  const { env, taskQueue } = freshEnv();
  const worker = await startWorkerProcess({ TEMPORAL_ADDRESS: server.address, LOOPWRIGHT_TASK_QUEUE: taskQueue, OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: 'test-key' });
  workers.push(worker);
  // Its recent poll still says "a worker is polling" for a while.
  await worker.kill('SIGKILL');
  const args = ['run', bundleCopy.bundle, 'facilitator', 'anyone there?', '--once'];
  const run = await cli(args, env);
  expectExit(args, run, 0);
  expect(run.stdout).toBe('You said: anyone there?\n');
  expect(run.stderr).toMatch(/\((the session's workflow task waited for 3 s: no live worker took it|no worker was polling); running one in this process\)/);
});

test.concurrent('cli: rewind takes a session back to a turn and branch starts a new one from it; both say files stay on disk', async () => {
  const { env, taskQueue } = await sharedWorker();
  const lw = new LoopwrightClient(client, taskQueue);
  const session = await lw.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator' });
  await session.send('one');
  await session.send('two');
  const branch = await cli(['branch', session.workflowId, '--at-turn', '1'], env);
  expectExit(['branch'], branch, 0);
  expect(branch.stderr).toContain('stay on disk');
  const branchId = branch.stdout.trim();
  await waitFor('the branch to start', async () => ((await lw.session(branchId).state()).status === 'waiting_for_user' ? true : undefined));
  const users = (await lw.session(branchId).messages()).filter((m) => m.role === 'user').map((m) => m.content);
  expect(users).toEqual(['one']);
  const rewind = await cli(['rewind', session.workflowId, '--to-turn', '1'], env);
  expectExit(['rewind'], rewind, 0);
  expect(rewind.stdout).toMatch(/is back at the end of turn 1 .*stay on disk/);
  expect((await session.state()).turn).toBe(1);
  await session.end();
  const endArgs = ['end', branchId, '--json'];
  const end = await cli(endArgs, env);
  expectExit(endArgs, end, 0);
  expect(JSON.parse(end.stdout)).toMatchObject({ workflowId: branchId, turns: 1, endedBy: 'end_signal' });
});

test.concurrent('cli: a file a critical action names that is missing is a warning run prints once; --strict refuses the agent', async () => {
  // On the shared worker: the command prints the session's warnings, whichever worker ran it.
  const { env } = await sharedWorker();
  const copy = copyExampleBundle('lw-e2e-missing-');
  try {
    const agentFile = path.join(copy.bundle, 'agents', 'facilitator.md');
    fs.writeFileSync(agentFile, fs.readFileSync(agentFile, 'utf8').replace('  </critical-actions>', '    <i>Load COMPLETE file {bundle-root}/data/missing-notes.md</i>\n  </critical-actions>'));
    const args = ['run', copy.bundle, 'facilitator', 'hello', '--once'];
    const run = await cli(args, env);
    expectExit(args, run, 0);
    const warnings = run.stderr.split('\n').filter((line) => line.startsWith('Warning: '));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/could not load \S*missing-notes\.md \(not found\)/);
    // --json carries the same warning in its one object.
    const jsonArgs = [...args, '--json'];
    const jsonRun = await cli(jsonArgs, env);
    expectExit(jsonArgs, jsonRun, 0);
    const parsed = JSON.parse(jsonRun.stdout) as { success: boolean; warnings?: string[] };
    expect(parsed.success).toBe(true);
    expect(parsed.warnings).toEqual([expect.stringMatching(/could not load \S*missing-notes\.md \(not found\)/)]);
    const strictArgs = [...args, '--strict'];
    const strict = await cli(strictArgs, env);
    expectExit(strictArgs, strict, 1);
    expect(strict.stderr).toMatch(/missing-notes\.md/);
  } finally {
    copy.cleanup();
  }
});

test.concurrent('cli: demo runs the example bundle in its own worker and saves into demo/ of the state folder', async () => {
  const { env } = freshEnv();
  const result = await cli(['demo'], env);
  expect(result.code).toBe(0);
  expect(result.stdout).toContain(INTAKE_REPLY);
  expect(result.stderr).toMatch(/Saved: .*e2e-intake\.md/);
  expect(result.stderr).toContain('Session completed after 1 turn(s)');
  // The example bundle is found from the package root, the project is the state folder's demo/.
  expect(fs.readFileSync(path.join(stateDir, 'demo', 'docs', 'e2e-intake.md'), 'utf8')).toBe(INTAKE_DOCUMENT);
});

test.concurrent(
  'cli: demo <project> runs the first agent of a BMAD project of our own with the demo model: its first menu item activates a skill, reads one of its files by a bare path and saves into the output folder',
  async () => {
    const { env } = freshEnv();
    // No model configured: the demo's own canned model plays the agent.
    const { OPENAI_API_KEY: _key, OPENAI_BASE_URL: _url, ...scripted } = env;
    const project = writeSkillsProject('lw-e2e-demo-');
    try {
      const result = await cli(['demo', project.root], scripted);
      expect(result.code).toBe(0);
      expect(result.stderr).toContain('not a real model');
      expect(result.stderr).toContain('Agent: Gus, Harbour Guide');
      expect(result.stdout).toContain('(demo model) I ran the first menu item');
      const saved = path.join(project.root, 'out', 'loopwright-demo.md');
      expect(result.stderr).toContain(`Saved: ${saved}`);
      const note = fs.readFileSync(saved, 'utf8');
      expect(note).toContain('# Demo run of Gus, Harbour Guide');
      expect(note).toContain(path.join(project.root, '.claude/skills/lw-notes/assets/notes-template.md'));
    } finally {
      project.cleanup();
    }
  },
);
