/**
 * The command line's contract for scripts, end to end through `node bin/loopwright.js`: every
 * `--json` command prints exactly one JSON object however large (read by a late reader, past a
 * pipe's buffer), usage mistakes exit 2 and an unreachable server 3, and a run whose bundle or
 * agent cannot be loaded says so before any workflow starts, a failed turn is a failure object that
 * keeps its fields, and `interrupt` with no turn running exits 1. Against a dev server on a free port
 * and the fake OpenAI server (which echoes), with a copy of the example bundle. The tests run at
 * the same time (`test.concurrent`), each on its own task queue, reading only its own requests, except
 * the tests whose sessions run on one long-lived worker process they share (on its own queue).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startTestTemporal, type TestTemporal } from '../support/temporal-server';
import type { ChatMessage } from '../../common/messages';
import { type FakeOpenAI, type RecordedRequest, type Step, startFakeOpenAI, text, toolCalls } from '../../fake-model/server';
import { LoopwrightClient } from '../../client/session-client';
import { copyExampleBundle } from '../support/session-harness';
import { type CliResult, cliEnvironment, describeRun, REPO_ROOT, runCli } from './cli-runner';
import { verdict, writeVerifyBundle } from '../support/verify-bundle';
import { writeSkillsProject } from '../support/skills-project';
import { startCliWorker, type WorkerProcess } from '../support/worker-process';

jest.setTimeout(90_000);

let server: TestTemporal;
let fake: FakeOpenAI;
let connection: Connection;
let client: Client;
let bundleCopy: ReturnType<typeof copyExampleBundle>;
let stateDir: string;
let queueCounter = 0;
let shared: Promise<{ worker: WorkerProcess; env: NodeJS.ProcessEnv; taskQueue: string }> | undefined;

/** The long-lived worker process some tests share, started by the first that asks, with the environment of its task queue. */
function sharedWorker(): Promise<{ worker: WorkerProcess; env: NodeJS.ProcessEnv; taskQueue: string }> {
  shared ??= (async () => {
    const { env, taskQueue } = freshEnv();
    const worker = await startCliWorker({ address: server.address, baseURL: fake.baseURL, taskQueue, stateDir });
    return { worker, env, taskQueue };
  })();
  return shared;
}

/** A user message the model answers with tool calls forever. */
const ENDLESS = 'keep reading';

/** ENDLESS asks for a tool every time; a verification call fails the second item; anything else is answered at once. */
function respond(request: RecordedRequest): Step {
  if (JSON.stringify(request.body?.response_format ?? '').includes('checklist_result')) return verdict({ 2: 'no users are named' });
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const said = String(messages[messages.map((m) => m.role).lastIndexOf('user')]?.content ?? '');
  if (said.includes(ENDLESS)) return toolCalls([{ name: 'read_file', arguments: { file_path: '{bundle-root}/workflows/intake/template.md' } }]);
  if (said.startsWith('[headless: true]')) return headlessAnswer(said);
  return text('Noted.');
}

/** A headless run's answer: its JSON status by the trip asked for (A complete, B partial, anything else none). */
function headlessAnswer(said: string): Step {
  if (said.endsWith('trip A')) return text('Planned.\n```json\n{"status": "complete", "assumptions": [], "open_questions": []}\n```');
  if (said.endsWith('trip B')) return text('Planned, mostly. {"status": "partial", "assumptions": ["calm sea"], "open_questions": ["which pier?"], "artifact": "out/plans/trip.md"}');
  return text('Planned, I think.');
}

/** Environment for commands on a fresh task queue. */
function freshEnv(): { env: NodeJS.ProcessEnv; taskQueue: string } {
  const taskQueue = `e2e-cli-json-${process.pid}-${++queueCounter}`;
  const env = cliEnvironment({ TEMPORAL_ADDRESS: server.address, OPENAI_BASE_URL: fake.baseURL, LOOPWRIGHT_TASK_QUEUE: taskQueue, LOOPWRIGHT_STATE_DIR: stateDir });
  return { env, taskQueue };
}

function cli(args: string[], env: NodeJS.ProcessEnv, options: { cwd?: string } = {}): Promise<CliResult> {
  return runCli(args, env, { cwd: options.cwd ?? stateDir });
}

/** Expect exit status `code`, showing the command's output when it differs. */
function expectExit(args: string[], result: CliResult, code: number): void {
  if (result.code !== code) throw new Error(`expected exit ${code}\n${describeRun(args, result)}`);
}

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-e2e-cli-json-'));
  [server, fake] = await Promise.all([startTestTemporal(), startFakeOpenAI({ responder: respond })]);
  connection = await Connection.connect({ address: server.address });
  client = new Client({ connection });
  bundleCopy = copyExampleBundle('lw-e2e-json-bundle-');
}, 120_000);

afterAll(async () => {
  if (shared) await (await shared.catch(() => undefined))?.worker.kill('SIGKILL');
  await connection?.close();
  await fake?.close();
  await server?.stop();
  bundleCopy?.cleanup();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

test.concurrent('cli: validate and inspect the example bundle; usage mistakes exit 2; an unreachable server exits 3', async () => {
  const { env } = freshEnv();
  const unreachable = { ...env, TEMPORAL_ADDRESS: '127.0.0.1:9', LOOPWRIGHT_CONNECT_TIMEOUT: '1s' };
  const [validate, inspect, unknown, missing, badValue, noServer] = await Promise.all([
    cli(['validate', 'bundles/requirements-facilitator'], env, { cwd: REPO_ROOT }),
    cli(['inspect', 'bundles/requirements-facilitator', 'facilitator'], env, { cwd: REPO_ROOT }),
    cli(['frobnicate'], env),
    cli(['run', bundleCopy.bundle], env),
    cli(['list', '--limit', 'ten', '--json'], env),
    // Nothing answers there: the client gives up after its 10 s connect deadline.
    cli(['status', 'no-such-session', '--json'], unreachable),
  ]);
  expectExit(['validate'], validate, 0);
  expect(validate.stdout).toContain('no problems');
  expectExit(['inspect'], inspect, 0);
  // The example agent is Robin, the Requirements Facilitator (agents/facilitator.md).
  expect(inspect.stdout).toMatch(/^Agent: (\S+ )?Robin, Requirements Facilitator$/m);
  expectExit(['frobnicate'], unknown, 2);
  expect(unknown.stderr).toBe('error: unknown command \'frobnicate\'\nRun "loopwright --help" for the list of commands.\n');
  expectExit(['run'], missing, 2);
  expect(missing.stderr).toContain("error: missing required argument 'agent'");
  expect(missing.stderr).toContain('Usage: loopwright run [options] <bundle> <agent> <message>');
  expectExit(['list'], badValue, 2);
  expect(JSON.parse(badValue.stdout)).toEqual({ error: "option '--limit <n>' argument 'ten' is invalid. Expected a positive whole number.", type: 'UsageError' });
  expect(badValue.stderr).toBe('');
  expectExit(['status'], noServer, 3);
  expect(JSON.parse(noServer.stdout)).toEqual({ error: expect.stringContaining('cannot reach the Temporal server at 127.0.0.1:9'), type: 'ServerUnreachable' });
});

test.concurrent('cli: run with a missing bundle or an unknown agent says so before any workflow starts', async () => {
  const { env, taskQueue } = freshEnv();
  // Workflows on this test's queue (the file's other tests run at the same time, on theirs).
  const countWorkflows = async (): Promise<number> => {
    let n = 0;
    for await (const _ of client.workflow.list({ query: `TaskQueue = '${taskQueue}'` })) n += 1;
    return n;
  };
  const before = await countWorkflows();
  const missingPath = path.join(stateDir, 'no-such-bundle');
  const args = ['run', missingPath, 'facilitator', 'hi'];
  const run = await cli(args, env);
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  // The command's own error line names the cause.
  const errorLine = run.stderr.split('\n').find((line) => line.startsWith('Error: '));
  expect(errorLine).toMatch(/^Error: Bundle not found: /);
  expect(errorLine).toContain(missingPath);

  // With --json, scripts still get one object saying what went wrong.
  const json = await cli([...args.slice(0, 1), '--json', ...args.slice(1)], env);
  expect(json.code).toBe(1);
  const parsed = JSON.parse(json.stdout) as { success: boolean; status: string; error: string };
  expect(parsed).toMatchObject({ workflowId: null, success: false, status: 'failed', type: 'BundleNotFound' });
  expect(parsed.error).toContain(`Bundle not found: ${missingPath}`);

  const unknownArgs = ['run', bundleCopy.bundle, 'nobody', 'hi'];
  const unknown = await cli(unknownArgs, env);
  expectExit(unknownArgs, unknown, 1);
  expect(unknown.stderr).toMatch(/Error: Agent not found: nobody/);
  expect(unknown.stderr).not.toContain('Session ');
  // None of the three left a workflow behind.
  expect(await countWorkflows()).toBe(before);
});

/** Bytes the process has written so far (Linux's /proc/<pid>/io), or undefined where that cannot be read. */
function bytesWritten(pid: number): number | undefined {
  try {
    const match = /^wchar: (\d+)$/m.exec(fs.readFileSync(`/proc/${pid}/io`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs the command line with its stdout read only after a pause, so that the pipe is full while it
 * writes: until the process has written a pipe's capacity (64 KiB) and writes no more (blocked on
 * the full pipe), or 3 s where its written bytes cannot be read.
 */
async function lateReader(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'loopwright.js'), ...args], { env, stdio: ['ignore', 'pipe', 'ignore'] });
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  child.stdout.pause();
  const started = Date.now();
  let last = -1;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const written = bytesWritten(child.pid!);
    if (child.exitCode !== null || (written === undefined ? Date.now() - started >= 3_000 : written >= 65_536 && written === last)) break;
    if (written !== undefined) last = written;
    if (Date.now() - started > 30_000) throw new Error(`the command never filled its stdout pipe (${written} bytes written)`);
  }
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.stdout.resume();
  return { code: await closed, stdout: Buffer.concat(chunks).toString('utf8') };
}

test.concurrent('cli: every --json command prints exactly one JSON object, however large (inspect past the pipe buffer, list)', async () => {
  const { env } = freshEnv();
  const copy = copyExampleBundle('lw-e2e-large-');
  try {
    // A 700,000-character config line and a deeply nested map: the document is far past what a pipe or socket buffers.
    const nested = `${'{a: '.repeat(200)}1${'}'.repeat(200)}`;
    fs.appendFileSync(path.join(copy.bundle, 'config.yaml'), `\nlong_line: "${'x'.repeat(700_000)}"\nnested: ${nested}\n`);
    // Read by a reader that starts late, as `... --json | slow-consumer` would: the pipe fills.
    const inspected = await lateReader(['inspect', copy.bundle, 'facilitator', '--json'], env);
    expect(inspected.code).toBe(0);
    expect(inspected.stdout.length).toBeGreaterThan(700_000);
    // The config is loaded into the opening messages (and is too large to parse for variables: a warning).
    const parsed = JSON.parse(inspected.stdout) as { messages: { content: string }[]; warnings: string[] };
    expect(parsed.messages.some((m) => m.content.includes('x'.repeat(700_000)))).toBe(true);
    expect(parsed.warnings.join('\n')).toMatch(/config\.yaml is too large to parse/);
  } finally {
    copy.cleanup();
  }
  const listed = await cli(['list', '--json'], env);
  expectExit(['list', '--json'], listed, 0);
  const list = JSON.parse(listed.stdout) as { sessions: { workflowId: string }[]; count: number };
  expect(Array.isArray(list.sessions)).toBe(true);
  expect(list.count).toBe(list.sessions.length);
});

test.concurrent('cli: run --json prints one JSON object; past --max-iterations it reports success:false and exits non-zero', async () => {
  const { env } = await sharedWorker();
  const args = ['run', bundleCopy.bundle, 'facilitator', ENDLESS, '--json', '--max-iterations', '2'];
  const run = await cli(args, env);
  expectExit(args, run, 1);
  const lines = run.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  const parsed = JSON.parse(lines[0]) as Record<string, unknown>;
  // A failed turn is a --json failure ({error, type}) that keeps its result fields.
  expect(Object.keys(parsed).sort()).toEqual(['error', 'iterations', 'response', 'status', 'success', 'type', 'workflowId'].sort());
  expect(parsed).toMatchObject({ success: false, status: 'max_iterations', iterations: 2, error: 'Agent execution exceeded maximum iterations (2)', type: 'LoopwrightMaxIterationsExceeded' });
  // The session stays open, so the reply says how to go on instead of dropping the work.
  expect(parsed.response).toMatch(/limit of 2 iterations.*"continue"/);
  expect(parsed.workflowId).toMatch(/^loopwright-facilitator-/);
});

test.concurrent('cli: interrupt on a session with no running turn says so and exits 1', async () => {
  const { env, taskQueue } = await sharedWorker();
  const lw = new LoopwrightClient(client, taskQueue);
  const session = await lw.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator' });
  const args = ['interrupt', session.workflowId];
  const result = await cli(args, env);
  expectExit(args, result, 1);
  expect(result.stderr).toMatch(new RegExp(`No turn is running in ${session.workflowId} \\(status: (waiting for user|initializing)\\); nothing to interrupt`));
  await session.end();
});

test.concurrent('cli: a validate-workflow command reports the failed items and exits 1; --json carries the report', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-e2e-verify-'));
  try {
    const bundle = writeVerifyBundle(root);
    fs.mkdirSync(path.join(root, 'docs'));
    fs.writeFileSync(path.join(root, 'docs/spec.md'), 'Goal: faster invoices.\n');
    const { env } = await sharedWorker();
    const args = ['run', bundle, 'writer', '*validate-spec', '--once', '--project-root', root];
    const jsonArgs = [...args, '--json'];
    const [run, json] = await Promise.all([cli(args, env), cli(jsonArgs, env)]);
    expectExit(args, run, 1);
    expect(run.stdout).toContain('Verification *validate-spec: failed verification (1 of 3 items failed after 1 attempt)');
    expect(run.stdout).toContain('✗ [Content] Names the users — no users are named');
    expect(run.stderr).toContain('(failed: ✗ [Content] Names the users — no users are named)');
    expect(run.stderr).toContain('still fails its checklist');

    expectExit(jsonArgs, json, 1);
    const parsed = JSON.parse(json.stdout.trim()) as Record<string, unknown>;
    expect(parsed).toMatchObject({
      success: false,
      status: 'failed_verification',
      type: 'LoopwrightVerificationFailed',
      verification: { status: 'failed_verification', source: 'command', passed: 2, failed: 1, attempts: 1 },
    });
    expect((parsed.verification as { items: unknown[] }).items).toHaveLength(3);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test.concurrent('cli: run --headless asks for the mode and maps the JSON status: complete exits 0, partial 4, none 1', async () => {
  const { env } = await sharedWorker();
  const project = writeSkillsProject('lw-e2e-headless-');
  try {
    const run = (trip: string) => cli(['run', project.root, 'lw-agent-guide', `plan trip ${trip}`, '--headless', '--json'], env);
    // Four sessions at once, on the shared worker.
    const [complete, partial, none, plain] = await Promise.all([run('A'), run('B'), run('C'), cli(['run', project.root, 'lw-agent-guide', 'plan trip B', '--headless'], env)]);
    expectExit(['run', '--headless', 'A'], complete, 0);
    expect(JSON.parse(complete.stdout)).toMatchObject({ success: true, status: 'completed', headless: { status: 'complete', assumptions: [], open_questions: [] } });
    // The last request of this session (other tests of the file run at the same time).
    const request = [...fake.requests].reverse().find((r) => JSON.stringify(r.body?.messages ?? []).includes('plan trip A'))!.body!;
    const user = String((request.messages as ChatMessage[]).filter((m) => m.role === 'user').pop()?.content);
    expect(user.startsWith('[headless: true]') && user.endsWith('plan trip A')).toBe(true);
    // Nobody can answer a question: the question tool is not offered.
    expect((request.tools ?? []).map((t) => t.function.name)).not.toContain('ask_question');

    expectExit(['run', '--headless', 'B'], partial, 4);
    expect(JSON.parse(partial.stdout)).toMatchObject({ headless: { status: 'partial', open_questions: ['which pier?'], artifact: 'out/plans/trip.md' } });

    expectExit(['run', '--headless', 'C'], none, 1);
    expect(JSON.parse(none.stdout)).toMatchObject({ success: true, type: 'HeadlessStatusMissing', error: expect.stringContaining('did not end with the JSON status') });

    expectExit(['run', '--headless', 'B (text)'], plain, 4);
    expect(plain.stderr).toContain('Headless run: partial (1 assumption(s), 1 open question(s))');
  } finally {
    project.cleanup();
  }
});
