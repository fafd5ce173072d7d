/**
 * `npm run examples [-- <name>...]`: type-checks examples/ against the package's declarations and
 * runs every example (or those named) end to end, as CI does in its own phase. It starts what the
 * examples need, as `loopwright demo` does: a Temporal dev server (unless TEMPORAL_ADDRESS names
 * one), Loopwright's scripted model (unless OPENAI_API_KEY or OPENAI_BASE_URL names a real one) and
 * a `loopwright worker` on a task queue of its own. Exit status 1 when the type check or any
 * example fails, 2 for an unknown example name.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startFakeOpenAI, type FakeOpenAI } from '../fake-model/server';
import { startTestTemporal, type TestTemporal } from '../test/support/temporal-server';
import { EXAMPLES, type RunContext } from './examples/catalog';
import { BIN, REPO, start, type Child } from './examples/processes';

const run = promisify(execFile);
const TSC = path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');

const seconds = (since: number): string => `${((Date.now() - since) / 1000).toFixed(1)} s`;
const indent = (text: string): string =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');

async function main(): Promise<number> {
  const names = process.argv.slice(2);
  const unknown = names.filter((name) => !EXAMPLES.some((e) => e.name === name));
  if (unknown.length > 0) {
    console.error(`No example ${unknown.join(', ')}; there are: ${EXAMPLES.map((e) => e.name).join(', ')}`);
    return 2;
  }
  const chosen = names.length > 0 ? EXAMPLES.filter((e) => names.includes(e.name)) : EXAMPLES;

  // The examples import 'loopwright' as users do, so they get dist/ (its code and its declarations): built when a source is newer.
  let since = Date.now();
  await run(process.execPath, [path.join(REPO, 'scripts', 'build.js'), '--if-stale'], { cwd: REPO });
  const checks = await Promise.allSettled(['examples/tsconfig.json', 'examples/web-page/tsconfig.json'].map((project) => run(process.execPath, [TSC, '-p', project], { cwd: REPO })));
  const failedChecks = checks.filter((c): c is PromiseRejectedResult => c.status === 'rejected');
  for (const failure of failedChecks) console.error(indent(String((failure.reason as { stdout?: string }).stdout || failure.reason)));
  console.log(`${failedChecks.length === 0 ? '✓' : '✗'} type check of examples/ (${seconds(since)})`);
  if (failedChecks.length > 0) return 1;

  since = Date.now();
  const scripted = !process.env.OPENAI_API_KEY && !process.env.OPENAI_BASE_URL;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'loopwright-examples-'));
  let temporal: TestTemporal | undefined;
  let fake: FakeOpenAI | undefined;
  let worker: Child | undefined;
  let failed = 0;
  let skipped = 0;
  try {
    [temporal, fake] = await Promise.all([process.env.TEMPORAL_ADDRESS ? undefined : startTestTemporal(), scripted ? startFakeOpenAI({ responder: chosen[0]!.responder }) : undefined]);
    const env = environment({
      TEMPORAL_ADDRESS: temporal?.address ?? process.env.TEMPORAL_ADDRESS!,
      LOOPWRIGHT_TASK_QUEUE: `loopwright-examples-${process.pid}`,
      LOOPWRIGHT_STATE_DIR: path.join(scratch, 'state'),
      // The examples' own scratch folders (os.tmpdir()) go with the runner's.
      TMPDIR: fs.mkdirSync(path.join(scratch, 'tmp'), { recursive: true }) ?? path.join(scratch, 'tmp'),
      // Not "scripted": the model's key is redacted from what it says.
      ...(fake ? { OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: 'examples-key' } : {}),
    });
    worker = start(process.execPath, [BIN, 'worker'], { env });
    await worker.waitForLine(/Worker polling task queue/, 60_000).catch((error: Error) => {
      throw new Error(`loopwright worker ${error.message}:\n${worker!.output()}`);
    });
    console.log(
      `Temporal at ${env.TEMPORAL_ADDRESS}, ${fake ? `the scripted model at ${fake.baseURL}` : `the model at ${process.env.OPENAI_BASE_URL ?? 'OpenAI'}`}, a worker on ${env.LOOPWRIGHT_TASK_QUEUE} (${seconds(since)})`,
    );

    for (const example of chosen) {
      const why = example.skipped?.();
      if (why !== undefined) {
        skipped++;
        console.log(`\n- ${example.name} SKIPPED: ${why}`);
        continue;
      }
      fake?.setResponder(example.responder);
      const notes: string[] = [];
      const context: RunContext = { env, scripted, scratch, note: (line) => notes.push(line) };
      since = Date.now();
      console.log(`\n== examples/${example.name}`);
      try {
        const output = await example.run(context);
        for (const line of notes) console.log(indent(line));
        console.log(indent(output));
        console.log(`✓ ${example.name} (${seconds(since)})`);
      } catch (error) {
        failed++;
        for (const line of notes) console.log(indent(line));
        console.log(indent(error instanceof Error ? error.message : String(error)));
        console.log(`✗ ${example.name} (${seconds(since)})`);
      }
    }
  } finally {
    await worker?.stop();
    await fake?.close();
    await temporal?.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  console.log(`\nExamples: ${chosen.length - failed - skipped} passed, ${failed} failed, ${skipped} skipped`);
  return failed > 0 ? 1 : 0;
}

/**
 * This process's environment without its Temporal, model and Loopwright settings (those the caller
 * gave for a server or a model of their own stay), plus `settings`.
 */
function environment(settings: Record<string, string>): NodeJS.ProcessEnv {
  const keep = new Set(['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'TEMPORAL_API_KEY', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'LOOPWRIGHT_MODEL']);
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (keep.has(key) || !/^(TEMPORAL_|OPENAI_|LOOPWRIGHT_)/.test(key)) env[key] = value;
  return { ...env, ...settings };
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
