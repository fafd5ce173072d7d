/**
 * End to end through the real command line: the model, context and budget options of `run` reach
 * the model request and the session's state; `budget` shows and raises the budgets, `compact`
 * compacts (or says there is nothing to), and `status` shows the context and budget lines. Against
 * a dev server this file starts, the fake OpenAI server and a copy of the example bundle. One
 * long-lived worker process runs the session, so that the six commands need no worker of their own.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChatMessage } from '../../common/messages';
import type { BudgetState } from '../../common/session-types';
import { type FakeOpenAI, type RecordedRequest, startFakeOpenAI, text } from '../../fake-model/server';
import { copyExampleBundle } from '../support/session-harness';
import { startTestTemporal, type TestTemporal } from '../support/temporal-server';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { type CliResult, cliEnvironment, describeRun, runCli } from './cli-runner';

jest.setTimeout(90_000);

let server: TestTemporal;
let fake: FakeOpenAI;
let bundleCopy: ReturnType<typeof copyExampleBundle>;
let stateDir: string;
let worker: WorkerProcess | undefined;
const TASK_QUEUE = `e2e-ctx-${process.pid}`;

function lastUserMessage(request: RecordedRequest): string {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const index = messages.map((m) => m.role).lastIndexOf('user');
  return index >= 0 ? String(messages[index]!.content) : '';
}

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-e2e-ctx-'));
  [server, fake] = await Promise.all([startTestTemporal(), startFakeOpenAI({ responder: (request) => text(`You said: ${lastUserMessage(request)}`) })]);
  bundleCopy = copyExampleBundle('lw-e2e-ctx-bundle-');
  worker = await startWorkerProcess({ TEMPORAL_ADDRESS: server.address, OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: 'test', LOOPWRIGHT_TASK_QUEUE: TASK_QUEUE, LOOPWRIGHT_STATE_DIR: stateDir });
}, 120_000);

afterAll(async () => {
  await worker?.kill('SIGKILL');
  await fake?.close();
  await server?.stop();
  bundleCopy?.cleanup();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

async function cli(args: string[], env: NodeJS.ProcessEnv, code = 0): Promise<CliResult> {
  const result = await runCli(args, env, { cwd: stateDir });
  if (result.code !== code) throw new Error(`expected exit ${code}\n${describeRun(args, result)}`);
  return result;
}

test('cli: run passes the model settings and budgets; budget shows and raises them; compact and status report the context', async () => {
  const env = cliEnvironment({
    TEMPORAL_ADDRESS: server.address,
    OPENAI_BASE_URL: fake.baseURL,
    LOOPWRIGHT_TASK_QUEUE: TASK_QUEUE,
    LOOPWRIGHT_STATE_DIR: stateDir,
  });
  // An environment default and an option that wins over another one (the command reads both).
  env.LOOPWRIGHT_TURN_TOKEN_BUDGET = '400000';
  env.LOOPWRIGHT_TEMPERATURE = '1.5';
  const run = await cli(
    ['run', bundleCopy.bundle, 'facilitator', 'hello settings', '--json', '--max-output-tokens', '300', '--temperature', '0.3', '--extra-body', '{"top_k": 40}', '--session-token-budget', '900000'],
    env,
  );
  const { workflowId, status } = JSON.parse(run.stdout) as { workflowId: string; status: string };
  expect(status).toBe('completed');

  const request = fake.requests.find((r) => lastUserMessage(r).includes('hello settings'));
  expect(request?.body).toMatchObject({ temperature: 0.3, top_k: 40 });
  expect(request?.body?.max_tokens ?? request?.body?.max_completion_tokens).toBe(300);

  const shown = JSON.parse((await cli(['budget', workflowId, '--json'], env)).stdout) as { budget: BudgetState };
  expect(shown.budget.sessionTokens.limit).toBe(900000);
  expect(shown.budget.turnTokens.limit).toBe(400000);

  const raised = JSON.parse((await cli(['budget', workflowId, '--session-tokens', '100000', '--json'], env)).stdout) as { budget: BudgetState };
  expect(raised.budget.sessionTokens.limit).toBe(1000000);

  const compact = await cli(['compact', workflowId], env);
  expect(compact.stdout).toMatch(/^(nothing to compact|context compacted: [\d,]+ → [\d,]+ tokens)/);

  const statusText = (await cli(['status', workflowId], env)).stdout;
  expect(statusText).toMatch(/\n {2}context: {4}[\d,]+ \/ [\d,]+ tokens \(/);
  expect(statusText).toMatch(/\n {2}budget: {5}turn tokens: +[\d,]+ \/ 400,000/);

  await cli(['end', workflowId], env);
});
