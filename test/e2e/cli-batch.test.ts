/**
 * `loopwright batch` and `loopwright schedule` end to end through `node bin/loopwright.js`, against a
 * dev server, the fake model and a worker of the test's own on the commands' task queue: a batch
 * with --json prints one summary object and writes one result line per item; a bad line is a usage
 * error naming it; a schedule is created paused, listed, triggered (its session runs and completes,
 * and shows in `list`), paused, unpaused and deleted.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChatMessage } from '../../common/messages';
import type { LoopwrightClient } from '../../client/session-client';
import { text } from '../../fake-model/server';
import { copyExampleBundle, startSessionHarness, type SessionHarness } from '../support/session-harness';
import { type CliResult, cliEnvironment, describeRun, runCli } from './cli-runner';

jest.setTimeout(90_000);

let h: SessionHarness;
let bundleCopy: ReturnType<typeof copyExampleBundle>;
let stateDir: string;
let env: NodeJS.ProcessEnv;
let loopwright: LoopwrightClient;

async function cli(args: string[], code: number): Promise<CliResult> {
  const result = await runCli(args, env, { cwd: bundleCopy.root });
  if (result.code !== code) throw new Error(`expected exit ${code}\n${describeRun(args, result)}`);
  return result;
}

async function eventually<T>(fn: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  h = await startSessionHarness();
  bundleCopy = copyExampleBundle();
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-cli-batch-'));
  const worker = await h.startWorker();
  loopwright = worker.loopwright;
  env = cliEnvironment({ TEMPORAL_ADDRESS: h.server.address, OPENAI_BASE_URL: h.fake.baseURL, LOOPWRIGHT_TASK_QUEUE: worker.taskQueue, LOOPWRIGHT_STATE_DIR: stateDir });
  h.fake.setResponder((request) => {
    const messages: ChatMessage[] = request.body?.messages ?? [];
    return text(`done: ${String(messages.filter((m) => m.role === 'user').at(-1)?.content ?? '')}`);
  });
}, 120_000);

afterAll(async () => {
  await h?.close();
  bundleCopy?.cleanup();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

test('batch --json: one summary object, one result line per item, exit 0', async () => {
  const input = path.join(bundleCopy.root, 'items.jsonl');
  fs.writeFileSync(input, ['"first"', '{"message": "second", "id": "b"}', '', '"third"'].join('\n'));
  const args = ['batch', bundleCopy.bundle, 'facilitator', '--input', 'items.jsonl', '--output', 'out.jsonl', '--concurrency', '2', '--id', 'cli-batch-1', '--json'];
  const result = await cli(args, 0);
  const summary = JSON.parse(result.stdout) as Record<string, unknown>;
  expect(summary).toMatchObject({
    batchId: 'cli-batch-1',
    total: 3,
    ok: 3,
    failed: 0,
    cancelled: 0,
    byStatus: { completed: 3 },
    resultLines: 3,
    outputPath: path.join(fs.realpathSync(bundleCopy.root), 'out.jsonl'),
  });
  const lines = fs
    .readFileSync(path.join(bundleCopy.root, 'out.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(lines.map((l) => [l.index, l.id, l.workflowId, l.response])).toEqual([
    [0, undefined, 'cli-batch-1-0', 'done: first'],
    [1, 'b', 'cli-batch-1-1', 'done: second'],
    [2, undefined, 'cli-batch-1-2', 'done: third'],
  ]);
  // The same command again: the finished batch's summary, nothing run twice.
  const before = h.fake.requests.length;
  const again = await cli(args, 0);
  expect(JSON.parse(again.stdout)).toEqual(summary);
  expect(h.fake.requests.length).toBe(before);
});

test('batch --headless: every item asks for the mode; its result line carries the JSON status; an item without one fails', async () => {
  const input = path.join(bundleCopy.root, 'headless.jsonl');
  fs.writeFileSync(input, ['"ok"', '"none"'].join('\n'));
  h.fake.setResponder((request) => {
    const messages: ChatMessage[] = request.body?.messages ?? [];
    const said = String(messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
    if (!said.startsWith('[headless: true]')) return text('not headless');
    return said.endsWith('ok') ? text('Done. {"status": "complete", "assumptions": ["a"], "open_questions": []}') : text('Done, no status.');
  });
  try {
    const args = ['batch', bundleCopy.bundle, 'facilitator', '--input', 'headless.jsonl', '--output', 'headless.out.jsonl', '--id', 'cli-batch-headless', '--headless', '--json'];
    const result = await cli(args, 1);
    expect(JSON.parse(result.stdout)).toMatchObject({ total: 2, ok: 1, failed: 1 });
    const lines = fs
      .readFileSync(path.join(bundleCopy.root, 'headless.out.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ index: 0, success: true, headless: { status: 'complete', assumptions: ['a'] } });
    expect(lines[1]).toMatchObject({ index: 1, success: false, error: 'the answer did not end with the JSON status a headless run asks for' });
  } finally {
    h.fake.setResponder((request) => {
      const messages: ChatMessage[] = request.body?.messages ?? [];
      return text(`done: ${String(messages.filter((m) => m.role === 'user').at(-1)?.content ?? '')}`);
    });
  }
});

test('batch: a bad line is a usage error naming it, before anything starts', async () => {
  const input = path.join(bundleCopy.root, 'bad.jsonl');
  fs.writeFileSync(input, ['"fine"', '42'].join('\n'));
  const result = await cli(['batch', bundleCopy.bundle, 'facilitator', '--input', 'bad.jsonl', '--id', 'cli-batch-bad'], 2);
  expect(result.stderr).toContain('--input bad.jsonl: line 2: expected a JSON string or an object');
  await expect(h.client.workflow.getHandle('cli-batch-bad').describe()).rejects.toThrow(/not found/i);
});

test('schedule: create paused, list, trigger (a session runs and completes), unpause, pause, delete', async () => {
  const name = `nightly-${process.pid}`;
  await cli(['schedule', 'create', name, bundleCopy.bundle, 'facilitator', 'Summarise the notes', '--every', '1h', '--paused'], 0);
  await eventually(async () => ((await loopwright.schedules.list()).some((s) => s.name === name) ? true : undefined));
  const { stdout } = await cli(['schedule', 'list', '--json'], 0);
  const listed = (JSON.parse(stdout) as { schedules: { name: string }[] }).schedules.find((s) => s.name === name);
  expect(listed).toMatchObject({ name, paused: true, agent: 'facilitator', message: 'Summarise the notes', when: 'every 1h', recent: [] });

  await cli(['schedule', 'trigger', name], 0);
  const sessionId = await eventually(async () => (await loopwright.schedules.describe(name)).recent[0]);
  expect(sessionId).toMatch(new RegExp(`^loopwright-schedule-${name}-`));
  const result = await loopwright.session(sessionId).result();
  expect(result).toMatchObject({ endedBy: 'one_shot', lastTurn: { status: 'completed', response: 'done: Summarise the notes' } });
  const inList = await eventually(async () => (await loopwright.list({ agent: 'facilitator' })).find((s) => s.workflowId === sessionId && s.status === 'completed'));
  expect(inList).toMatchObject({ agent: 'facilitator', turns: 1 });

  await loopwright.schedules.unpause(name);
  expect(await loopwright.schedules.describe(name)).toMatchObject({ paused: false });
  const paused = await cli(['schedule', 'pause', name, '--json'], 0);
  expect(JSON.parse(paused.stdout)).toEqual({ name, action: 'pause' });
  expect(await loopwright.schedules.describe(name)).toMatchObject({ paused: true });

  await cli(['schedule', 'delete', name], 0);
  await eventually(async () => ((await loopwright.schedules.list()).some((s) => s.name === name) ? undefined : true));
  await expect(loopwright.schedules.describe(name)).rejects.toThrow(/not found/i);
});
