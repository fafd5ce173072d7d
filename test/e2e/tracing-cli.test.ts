/**
 * Traces from the real command line: `loopwright run --once` with OTEL_EXPORTER_OTLP_ENDPOINT sends
 * its spans over OTLP/HTTP before it exits (the command's own, the in-process worker's and the
 * workflow's, in one trace), and a bad OTEL_* setting is an error that names the variable.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type FakeOpenAI, startFakeOpenAI, text, toolCalls } from '../../fake-model/server';
import { copyExampleBundle } from '../support/session-harness';
import { startTestTemporal, stopTestTemporal } from '../support/temporal-server';
import { cliEnvironment, describeRun, runCli } from './cli-runner';

jest.setTimeout(120_000);

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
}
interface OtlpBody {
  resourceSpans: { resource?: { attributes?: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

let server: Awaited<ReturnType<typeof startTestTemporal>>;
let fake: FakeOpenAI;
let collector: http.Server;
let collectorUrl: string;
const bodies: OtlpBody[] = [];
let bundleCopy: ReturnType<typeof copyExampleBundle>;
let stateDir: string;

beforeAll(async () => {
  [server, fake] = await Promise.all([startTestTemporal(), startFakeOpenAI()]);
  // A stand-in OTLP/HTTP collector: keeps every JSON body posted to /v1/traces.
  collector = http.createServer((req, res) => {
    let data = '';
    req.on('data', (chunk: Buffer) => (data += chunk.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') bodies.push(JSON.parse(data) as OtlpBody);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  bundleCopy = copyExampleBundle('lw-trace-cli-');
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-trace-state-'));
}, 120_000);

afterAll(async () => {
  await new Promise((resolve) => collector?.close(resolve));
  await fake?.close();
  if (server) await stopTestTemporal(server);
  bundleCopy?.cleanup();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

function env(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const base = cliEnvironment({ TEMPORAL_ADDRESS: server.address, OPENAI_BASE_URL: fake.baseURL, LOOPWRIGHT_TASK_QUEUE: `trace-cli-${process.pid}`, LOOPWRIGHT_STATE_DIR: stateDir });
  for (const key of Object.keys(base)) if (key.startsWith('OTEL_')) delete base[key];
  return { ...base, ...extra };
}

test('tracing cli: run --once sends one trace over OTLP/HTTP before it exits', async () => {
  fake.enqueue(toolCalls([{ name: 'read_file', arguments: { file_path: '{bundle-root}/config.yaml' }, id: 'call_read' }]), text('Done.'));
  const args = ['run', bundleCopy.bundle, 'facilitator', 'hello', '--once', '--json'];
  const result = await runCli(args, env({ OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl, OTEL_SERVICE_NAME: 'loopwright-e2e' }));
  expect({ code: result.code, run: describeRun(args, result) }).toMatchObject({ code: 0 });
  expect(JSON.parse(result.stdout)).toMatchObject({ success: true, response: 'Done.' });

  const spans = bodies.flatMap((b) => b.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
  const names = spans.map((s) => s.name);
  for (const name of [
    'loopwright run',
    'StartWorkflow:agentSession',
    'RunWorkflow:agentSession',
    'loopwright.turn',
    'StartActivity:callModelV2',
    'RunActivity:callModelV2',
    'loopwright.model_call',
    'loopwright.tool_call',
  ]) {
    expect(names).toContain(name);
  }
  // The read ran inline, in the model call that asked for it: its span is that call's child.
  const read = spans.find((s) => s.name === 'loopwright.tool_call')!;
  expect(spans.find((s) => s.spanId === read.parentSpanId)?.name).toBe('loopwright.model_call');
  expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
  const root = spans.find((s) => s.name === 'loopwright run')!;
  expect(root.parentSpanId || undefined).toBeUndefined();
  const services = new Set(bodies.flatMap((b) => b.resourceSpans.map((r) => r.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue)));
  expect([...services]).toEqual(['loopwright-e2e']);
});

test('tracing cli: a bad OTEL_* setting is an error naming the variable', async () => {
  const args = ['status', 'no-such-session'];
  const result = await runCli(args, env({ OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost 4318' }));
  expect({ code: result.code, run: describeRun(args, result) }).toMatchObject({ code: 1 });
  expect(result.stderr).toContain('OTEL_EXPORTER_OTLP_ENDPOINT is not a URL');
  expect(result.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
});
