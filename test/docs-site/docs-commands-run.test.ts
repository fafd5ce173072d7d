/**
 * The command lines the docs show are run, not only parsed: every `loopwright inspect`, `validate`,
 * `run` and `list` line of a code block in docs/ and README.md whose folders are in the repository
 * (the example bundle, the demo project) runs for real against a dev server and the demo's scripted
 * model, in a scratch copy of those folders, and must exit 0. Lines that need what a reader brings
 * (their own project, an MCP config, an API key, a session id) are parsed by
 * test/unit/docs/docs-commands.test.ts instead; this file counts how many of each it ran, so a
 * change that stopped finding them fails. Run in the docs phase of .ci/run (`npm run
 * test:docs-site`), not in `npm test`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { demoResponder } from '../../fake-model/demo-model';
import { type FakeOpenAI, startFakeOpenAI } from '../../fake-model/server';
import { runCli, cliEnvironment, REPO_ROOT } from '../e2e/cli-runner';
import { startTestTemporal, type TestTemporal } from '../support/temporal-server';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { loopwrightArgs, shellCommands } from '../unit/docs/command-lines';
import { codeBlockLines, docFiles } from '../unit/docs/docs-files';

jest.setTimeout(240_000);

/** Commands a docs line may show that run here with nothing but the repository. */
const RUNNABLE = new Set(['inspect', 'validate', 'run', 'list']);

interface DocsLine {
  where: string;
  args: string[];
}

/** The runnable lines: a runnable command, no placeholder, no setting that needs the reader's own files or keys, its folder in the repository. */
function runnableLines(): DocsLine[] {
  const lines: DocsLine[] = [];
  for (const file of docFiles()) {
    for (const { line, text } of codeBlockLines(file).filter(({ lang }) => lang !== '')) {
      for (const words of shellCommands(text.replace(/^\s*\$\s+/, '').replace(/(\S)\s{3,}(?!#).*$/, '$1'))) {
        const args = loopwrightArgs(words);
        if (!args || !RUNNABLE.has(args[0]!)) continue;
        if (args.some((a) => /[<>[\]]|\.\.\./.test(a))) continue;
        if (args.some((a) => /^--(mcp-config|tool-module|scorer-module|allow-command|command-network)$/.test(a) || a.startsWith('anthropic:'))) continue;
        const folder = args[1];
        if (args[0] !== 'list' && (folder === undefined || folder.startsWith('-') || !fs.existsSync(path.join(REPO_ROOT, folder)))) continue;
        const same = lines.find((l) => l.args.join('\0') === args.join('\0'));
        if (same) same.where += `, ${file}:${line}`;
        else lines.push({ where: `${file}:${line}`, args });
      }
    }
  }
  return lines;
}

let server: TestTemporal;
let fake: FakeOpenAI;
let work: string;
let worker: WorkerProcess | undefined;
const TASK_QUEUE = 'docs-commands';

beforeAll(async () => {
  [server, fake] = await Promise.all([startTestTemporal(), startFakeOpenAI({ responder: demoResponder })]);
  // The folders the lines name, copied: a `run` saves its document under the folder it runs in.
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-docs-commands-'));
  fs.cpSync(path.join(REPO_ROOT, 'bundles'), path.join(work, 'bundles'), { recursive: true });
  // One worker for every line, as a reader's `loopwright worker` would be (else each `run` starts its own).
  worker = await startWorkerProcess({ TEMPORAL_ADDRESS: server.address, LOOPWRIGHT_TASK_QUEUE: TASK_QUEUE, OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: 'test' });
});

afterAll(async () => {
  await worker?.kill();
  await fake?.close();
  await server?.stop();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

test('docs commands: every runnable loopwright line of the docs runs and exits 0', async () => {
  const lines = runnableLines();
  const failures: string[] = [];
  const ran = new Map<string, number>();
  for (const { where, args } of lines) {
    const env = cliEnvironment({
      TEMPORAL_ADDRESS: server.address,
      OPENAI_BASE_URL: fake.baseURL,
      LOOPWRIGHT_TASK_QUEUE: TASK_QUEUE,
      LOOPWRIGHT_STATE_DIR: fs.mkdtempSync(path.join(work, 'state-')),
    });
    const result = await runCli(args, env, { cwd: work, timeoutMs: 90_000 });
    if (result.code !== 0) failures.push(`${where}: loopwright ${args.join(' ')} exited ${result.code}\n${result.stderr.slice(-1500)}`);
    ran.set(args[0]!, (ran.get(args[0]!) ?? 0) + 1);
  }
  process.stdout.write(`docs commands: ran ${lines.length} distinct lines (${[...ran].map(([c, n]) => `${n} ${c}`).join(', ')})\n`);
  expect(failures).toEqual([]);
  // The docs show these: a change that stopped finding them would pass for nothing.
  expect(ran.get('run') ?? 0).toBeGreaterThanOrEqual(3);
  expect(ran.get('inspect') ?? 0).toBeGreaterThanOrEqual(1);
});
