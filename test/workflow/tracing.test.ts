/**
 * OpenTelemetry traces on the real dev server: one turn (two reads, one of a missing file, a model
 * call that fails once and is retried, a write, a reply) collected in memory, and its span tree
 * checked from the command's root span down to Loopwright's own spans in the activities. A worker
 * without tracing produces no span, and recorded histories replay with the tracing interceptors.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { testWorkflowBundle } from '../support/workflow-bundle';
import { LoopwrightClient } from '../../client/session-client';
import { fault, text, toolCalls } from '../../fake-model/server';
import { createWorker } from '../../worker/create-worker';
import { bundleCanTrace, inCommandSpan, tracingClientInterceptors, tracingResource } from '../../worker/tracing';
import { copyExampleBundle, type SessionHarness, startSessionHarness } from '../support/session-harness';

jest.setTimeout(90_000);

/** Must never show up in a span: the user's message, a file's content, the API key. */
const USER_MESSAGE = 'Plan the street tool library, codename bluebird-7';
const SAVED_CONTENT = 'Document body with a marker: zebra-quartz-91';
const API_KEY = 'test-key-never-in-spans';

const exporter = new InMemorySpanExporter();
const processor = new SimpleSpanProcessor(exporter);

let h: SessionHarness;
let tracedBundle: WorkflowBundle;
let bundleCopy: ReturnType<typeof copyExampleBundle>;

beforeAll(async () => {
  [h, tracedBundle] = await Promise.all([startSessionHarness(), testWorkflowBundle({ traced: true })]);
  bundleCopy = copyExampleBundle('lw-trace-');
}, 120_000);

afterAll(async () => {
  await h?.close();
  bundleCopy?.cleanup();
});

beforeEach(() => {
  h.fake.reset();
  exporter.reset();
});

/** Start a worker on a fresh queue (traced or not) and a client for it; stop() shuts the worker down. */
async function startWorker(traced: boolean) {
  const taskQueue = `trace-${traced ? 'on' : 'off'}-${process.pid}`;
  const worker = await createWorker({
    connection: h.nativeConnection,
    taskQueue,
    workflowBundle: traced ? tracedBundle : h.workflowBundle,
    activityOptions: { model: { baseURL: h.fake.baseURL, apiKey: API_KEY } },
    // Not traced: what a worker does with no OTEL_* variable set (jest's environment has none).
    ...(traced ? { tracing: { spanProcessor: processor } } : {}),
  });
  const running = worker.run();
  const client = traced ? new Client({ connection: h.connection, interceptors: await tracingClientInterceptors() }) : h.client;
  return {
    worker,
    loopwright: new LoopwrightClient(client, taskQueue),
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}

/** The script of one turn: two reads (one of a missing file), a failed model call, a write, a reply. */
function scriptTurn(): void {
  h.fake.enqueue(
    toolCalls([
      { name: 'read_file', arguments: { file_path: '{bundle-root}/config.yaml' }, id: 'call_read' },
      { name: 'read_file', arguments: { file_path: '{bundle-root}/no-such-file.md' }, id: 'call_missing' },
    ]),
    fault(503, { retryAfterMs: 50 }),
    toolCalls([{ name: 'save_output', arguments: { file_path: '{output_folder}/trace.md', content: SAVED_CONTENT }, id: 'call_save' }]),
    text('Saved it.'),
  );
}

/** One session, one turn, ended. */
async function runOneTurn(loopwright: LoopwrightClient): Promise<void> {
  const session = await loopwright.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator', model: 'trace-model' });
  const turn = await session.send(USER_MESSAGE);
  expect(turn).toMatchObject({ status: 'completed', iterations: 3, toolCalls: 3 });
  await session.end();
  await session.result();
}

/** The tree of spans as indented lines (`name` plus a few attributes), children in start order. */
function drawTree(spans: ReadableSpan[]): string {
  const byParent = new Map<string | undefined, ReadableSpan[]>();
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  for (const span of spans) {
    const parent = span.parentSpanId && ids.has(span.parentSpanId) ? span.parentSpanId : undefined;
    byParent.set(parent, [...(byParent.get(parent) ?? []), span]);
  }
  const start = (s: ReadableSpan) => s.startTime[0] * 1e9 + s.startTime[1];
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    for (const span of (byParent.get(parent) ?? []).sort((a, b) => start(a) - start(b))) {
      const a = span.attributes;
      const notes = [a['loopwright.tool.path'], a['loopwright.attempt'] !== undefined ? `attempt ${String(a['loopwright.attempt'])}` : undefined, a['error.type']].filter((x) => x !== undefined);
      lines.push(`${'  '.repeat(depth)}${span.name}${notes.length ? ` (${notes.join(', ')})` : ''}`);
      walk(span.spanContext().spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join('\n');
}

test('tracing: one turn is one trace, from the command down to the model and tool calls', async () => {
  const { loopwright, stop } = await startWorker(true);
  try {
    scriptTurn();
    const code = await inCommandSpan('run', async () => {
      await runOneTurn(loopwright);
      return 0;
    });
    expect(code).toBe(0);
  } finally {
    await stop();
  }
  await processor.forceFlush();
  const spans = exporter.getFinishedSpans();
  const tree = drawTree(spans);
  // Shown when an expectation fails, and a record of what a turn looks like.
  if (process.env.LOOPWRIGHT_SHOW_TRACE) process.stderr.write(`${tree}\n`);

  expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const parentOf = (span: ReadableSpan) => (span.parentSpanId ? byId.get(span.parentSpanId) : undefined);
  const named = (name: string) => spans.filter((s) => s.name === name);
  const one = (name: string) => {
    const found = named(name);
    expect({ name, count: found.length, tree }).toEqual({ name, count: 1, tree });
    return found[0]!;
  };

  const root = one('loopwright run');
  expect(root.parentSpanId).toBeUndefined();
  expect(parentOf(one('StartWorkflow:agentSession'))).toBe(root);
  expect(parentOf(one('RunWorkflow:agentSession'))?.name).toBe('StartWorkflow:agentSession');
  const update = one('StartWorkflowUpdate:send');
  expect(parentOf(update)).toBe(root);
  const handle = one('HandleUpdate:send');
  expect(parentOf(handle)).toBe(update);

  const turn = one('loopwright.turn');
  expect(parentOf(turn)).toBe(handle);
  expect(turn.attributes).toMatchObject({
    'loopwright.turn': 1,
    'loopwright.agent': 'facilitator',
    'gen_ai.request.model': 'trace-model',
    'loopwright.status': 'completed',
    'loopwright.iterations': 3,
    'loopwright.tool_calls': 3,
  });
  expect(turn.attributes['loopwright.session_id']).toMatch(/^loopwright-facilitator-/);
  expect(turn.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);

  // The tools of each reply run in a phase span of the turn: gather when they only read, act when one writes.
  const gather = named('loopwright.phase.gather');
  const act = named('loopwright.phase.act');
  expect(gather).toHaveLength(1);
  expect(act).toHaveLength(1);
  for (const phase of [...gather, ...act]) expect(parentOf(phase)).toBe(turn);
  expect(gather[0]!.attributes).toMatchObject({ 'loopwright.turn': 1, 'loopwright.iteration': 1, 'loopwright.tool_calls': 2 });
  expect(act[0]!.attributes).toMatchObject({ 'loopwright.iteration': 2, 'loopwright.tool_calls': 1 });

  // Every activity the turn scheduled is its child (a tool's, through its phase); each run of it (retries too) a child of that.
  const startsOf = (type: string) => named(`StartActivity:${type}`).filter((s) => parentOf(s) === turn || [...gather, ...act].includes(parentOf(s)!));
  const runsUnder = (starts: ReadableSpan[]) => spans.filter((s) => s.name.startsWith('RunActivity:') && starts.includes(parentOf(s)!));
  const ownUnder = (runs: ReadableSpan[], name: string) => spans.filter((s) => s.name === name && runs.includes(parentOf(s)!));

  const modelStarts = startsOf('callModelV2');
  expect(modelStarts).toHaveLength(3);
  const modelRuns = runsUnder(modelStarts);
  expect(modelRuns).toHaveLength(4); // one attempt failed with a 503 and was retried
  const modelCalls = ownUnder(modelRuns, 'loopwright.model_call');
  expect(modelCalls).toHaveLength(4);
  const failed = modelCalls.filter((s) => s.attributes['error.type'] !== undefined);
  expect(failed).toHaveLength(1);
  expect(failed[0]!.attributes).toMatchObject({ 'error.type': 'ModelServerError', 'loopwright.attempt': 1, 'gen_ai.request.model': 'trace-model' });
  expect(failed[0]!.status.code).toBe(2); // ERROR
  const retried = modelCalls.find((s) => s.attributes['loopwright.attempt'] === 2);
  expect(parentOf(parentOf(retried!)!)).toBe(parentOf(parentOf(failed[0]!)!)); // the same StartActivity
  for (const call of modelCalls.filter((s) => s !== failed[0])) {
    expect(call.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'trace-model' });
    expect(call.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(call.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    expect(call.attributes['gen_ai.response.finish_reasons']).toEqual([expect.stringMatching(/^(tool_calls|stop)$/)]);
  }

  // Reads run inline, in the model call that asked for them: their spans are children of its span,
  // and the gather phase says how many ran there.
  expect(gather[0]!.attributes).toMatchObject({ 'loopwright.inline_reads': 2 });
  const readCalls = spans.filter((s) => s.name === 'loopwright.tool_call' && s.attributes['loopwright.tool'] === 'read_file');
  expect(readCalls).toHaveLength(2);
  for (const read of readCalls) expect(modelCalls).toContain(parentOf(read));
  const good = readCalls.find((s) => s.attributes['loopwright.tool.path'] === '{bundle-root}/config.yaml');
  expect(good?.attributes).toMatchObject({ 'loopwright.tool': 'read_file', 'loopwright.tool.success': true, 'loopwright.local_activity': false, 'loopwright.inline': true });
  const missing = readCalls.find((s) => s.attributes['loopwright.tool.path'] === '{bundle-root}/no-such-file.md');
  expect(missing?.attributes).toMatchObject({ 'loopwright.tool': 'read_file', 'loopwright.tool.success': false, 'loopwright.tool.error_code': 'ENOENT' });
  expect(missing?.status.code).toBe(2);
  const writes = ownUnder(runsUnder(startsOf('save_output')), 'loopwright.tool_call');
  expect(writes).toHaveLength(1);
  expect(parentOf(parentOf(parentOf(writes[0]!)!)!)).toBe(act[0]);
  expect(writes[0]!.attributes).toMatchObject({
    'loopwright.tool': 'save_output',
    'loopwright.tool.path': '{output_folder}/trace.md',
    'loopwright.tool.success': true,
    'loopwright.local_activity': false,
  });

  // Nothing the user wrote, no file content, no key.
  const everything = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, status: s.status, events: s.events })));
  for (const secret of [USER_MESSAGE, 'bluebird-7', SAVED_CONTENT, 'zebra-quartz-91', API_KEY]) expect(everything).not.toContain(secret);
});

test('tracing: a worker without tracing has no plugin and makes no span', async () => {
  const { worker, loopwright, stop } = await startWorker(false);
  try {
    expect(worker.options.interceptors.activity).toHaveLength(0);
    expect(bundleCanTrace(h.workflowBundle.code)).toBe(false);
    scriptTurn();
    await runOneTurn(loopwright);
  } finally {
    await stop();
  }
  await processor.forceFlush();
  // The process has a tracer provider (the first test installed one): still nothing from this worker.
  expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual([]);
});

// This test and the next make no span (a worker shut down at once; a replay worker calls no sink), so
// they run beside the others, whose spans the exporter collects.
test.concurrent('tracing: a prebuilt bundle without the tracing interceptors is replaced by one bundled from source', async () => {
  expect(bundleCanTrace(tracedBundle.code)).toBe(true);
  const worker = await createWorker({
    connection: h.nativeConnection,
    taskQueue: `trace-fallback-${process.pid}`,
    workflowBundle: h.workflowBundle,
    activityOptions: { model: { baseURL: h.fake.baseURL, apiKey: API_KEY } },
    tracing: { spanProcessor: processor },
  });
  // The worker bundled the workflows itself, with the interceptors.
  expect(worker.options.workflowBundle).toBeUndefined();
  expect(worker.options.interceptors.activity.length).toBeGreaterThan(0);
  const running = worker.run();
  worker.shutdown();
  await running;
});

test.concurrent('tracing: recorded histories replay with the tracing interceptors (spans add no command)', async () => {
  const dir = path.resolve(__dirname, '../fixtures/histories');
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();
  const histories = files.map((file) => ({ workflowId: `traced-${file}`, history: JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as unknown }));
  // One replay worker for every history, each replayed on its own: a failure names its file.
  const results: [string, unknown][] = [];
  for await (const result of Worker.runReplayHistories(
    { workflowBundle: tracedBundle, plugins: [new OpenTelemetryPlugin({ spanProcessor: processor, resource: await tracingResource() })] },
    histories,
  )) {
    results.push([result.workflowId, result.error]);
  }
  expect(results).toEqual(files.map((file) => [`traced-${file}`, undefined]));
});

test('tracing: the verify phase is a span of the turn, with the verifier model call inside it', async () => {
  const workflowFile = `${bundleCopy.bundle}/workflows/intake/workflow.yaml`;
  const original = fs.readFileSync(workflowFile, 'utf8');
  fs.writeFileSync(workflowFile, `${original}\nvalidation: "{installed_path}/checklist.md"\n`);
  fs.writeFileSync(`${bundleCopy.bundle}/workflows/intake/checklist.md`, '- [ ] Names the users\n- [ ] States the goal\n');
  const { loopwright, stop } = await startWorker(true);
  try {
    h.fake.enqueue(
      toolCalls([{ name: 'execute_workflow', arguments: { workflow_path: '{bundle-root}/workflows/intake/workflow.yaml' }, id: 'call_wf' }]),
      toolCalls([{ name: 'save_output', arguments: { file_path: '{output_folder}/requirements-{date}.md', content: SAVED_CONTENT }, id: 'call_save' }]),
      text('Saved it.'),
      text(
        JSON.stringify({
          items: [
            { n: 1, passed: true, note: 'ok' },
            { n: 2, passed: true, note: 'ok' },
          ],
        }),
      ),
    );
    const session = await loopwright.start({ bundlePath: bundleCopy.bundle, agentId: 'facilitator' });
    expect(await session.send(USER_MESSAGE)).toMatchObject({ status: 'completed', verification: { status: 'verified', attempts: 1 } });
    await session.end();
  } finally {
    await stop();
    fs.writeFileSync(workflowFile, original);
  }
  await processor.forceFlush();
  const spans = exporter.getFinishedSpans();
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const ancestors = (span: ReadableSpan): string[] => {
    const names: string[] = [];
    for (let p = span.parentSpanId ? byId.get(span.parentSpanId) : undefined; p; p = p.parentSpanId ? byId.get(p.parentSpanId) : undefined) names.push(p.name);
    return names;
  };
  const phase = spans.filter((s) => s.name === 'loopwright.phase.verify');
  expect(phase).toHaveLength(1);
  expect(ancestors(phase[0]!)[0]).toBe('loopwright.turn');
  expect(phase[0]!.attributes).toMatchObject({ 'loopwright.verify.attempt': 1, 'loopwright.verify.passed': 2, 'loopwright.verify.failed': 0, 'loopwright.verify.source': 'workflow' });
  const call = spans.filter((s) => s.name === 'loopwright.verify');
  expect(call).toHaveLength(1);
  expect(ancestors(call[0]!)).toContain('loopwright.phase.verify');
  const turn = spans.find((s) => s.name === 'loopwright.turn')!;
  expect(turn.attributes).toMatchObject({ 'loopwright.verification': 'verified', 'loopwright.verify.attempts': 1 });
  // The document's content is never in a span.
  expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain('zebra-quartz-91');
});
