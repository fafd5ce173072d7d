/**
 * Worker metrics in Prometheus format: a `loopwright worker` with LOOPWRIGHT_METRICS serves the
 * SDK's own metrics and Loopwright's (model-call latency, tokens, tool calls and errors, turns by
 * status), read here by scraping the endpoint after a real session.
 */
import { Client } from '@temporalio/client';
import { findFreePort } from '../support/temporal-server';
import { LoopwrightClient } from '../../client/session-client';
import { text, toolCalls } from '../../fake-model/server';
import { copyExampleBundle, type SessionHarness, startSessionHarness } from '../support/session-harness';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

jest.setTimeout(90_000);

let h: SessionHarness;
let bundleCopy: ReturnType<typeof copyExampleBundle>;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  h = await startSessionHarness();
  bundleCopy = copyExampleBundle();
}, 120_000);

afterAll(async () => {
  await worker?.kill('SIGKILL');
  await h?.close();
  bundleCopy?.cleanup();
});

test('metrics: the worker serves SDK and Loopwright metrics in Prometheus format', async () => {
  const port = await findFreePort('127.0.0.1');
  worker = await startWorkerProcess({
    TEMPORAL_ADDRESS: h.server.address,
    LOOPWRIGHT_TASK_QUEUE: 'metrics',
    OPENAI_BASE_URL: h.fake.baseURL,
    OPENAI_API_KEY: 'test-key',
    LOOPWRIGHT_METRICS: `127.0.0.1:${port}`,
  });
  h.fake.enqueue(
    toolCalls([
      { name: 'read_file', arguments: { file_path: '{bundle-root}/config.yaml' }, id: 'call_ok' },
      { name: 'read_file', arguments: { file_path: '{bundle-root}/missing.md' }, id: 'call_missing' },
    ]),
    text('Done.'),
  );
  const session = await new LoopwrightClient(new Client({ connection: h.connection }), 'metrics').start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator' });
  await expect(session.send('read two files')).resolves.toMatchObject({ success: true });
  await session.end();
  await session.result();

  let body = '';
  for (let i = 0; i < 30 && !/loopwright_turns/.test(body); i++) {
    body = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    if (!/loopwright_turns/.test(body)) await new Promise((r) => setTimeout(r, 500));
  }
  const line = (pattern: RegExp): string | undefined => body.split('\n').find((l) => !l.startsWith('#') && pattern.test(l));
  expect(line(/loopwright_model_call_latency.*_count\{.*model=/)).toBeDefined();
  expect(
    Number(
      line(/^loopwright_model_tokens_in(_total)?\{/)
        ?.split(' ')
        .pop(),
    ),
  ).toBeGreaterThan(0);
  expect(line(/^loopwright_model_tokens_out(_total)?\{/)).toBeDefined();
  expect(line(/^loopwright_tool_calls(_total)?\{.*success="true".*tool="read_file"/)).toBeDefined();
  expect(
    line(/^loopwright_tool_errors(_total)?\{.*tool="read_file"/)
      ?.split(' ')
      .pop(),
  ).toBe('1');
  expect(
    line(/^loopwright_turns(_total)?\{.*status="completed"/)
      ?.split(' ')
      .pop(),
  ).toBe('1');
  // And the SDK's own.
  expect(body).toMatch(/workflow_task_execution_latency|activity_execution_latency/);
});
