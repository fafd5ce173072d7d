/**
 * The examples the runner runs, in the order examples/README.md lists them: how each is started
 * (with what arguments, and what else it needs running), what the scripted model answers it, and
 * what its output must show when that model plays it. With a real model only the exit status and
 * the turn's end are checked: its words are its own.
 */
import fs from 'node:fs';
import path from 'node:path';
import { demoResponder } from '../../fake-model/demo-model';
import { DEMO_DOCUMENT, projectDemoResponder } from '../../fake-model/demo-project-model';
import type { Responder } from '../../fake-model/server';
import { bmadProject } from './bmad-project';
import { BIN, REPO, runProgram, start, startProgram } from './processes';
import { batchResponder, workerPluginResponder } from './responders';
import { findChromium } from '../../test/browser/chromium';
import { checkWebPage } from './web-page-check';

/** What an example gets from the runner. */
export interface RunContext {
  /** The environment of its processes: TEMPORAL_ADDRESS, LOOPWRIGHT_TASK_QUEUE, the model's variables, LOOPWRIGHT_STATE_DIR. */
  env: NodeJS.ProcessEnv;
  /** True when the scripted model answers (no OPENAI_API_KEY or OPENAI_BASE_URL given). */
  scripted: boolean;
  /** A scratch folder of this run. */
  scratch: string;
  /** Lines to show above the example's output (where its inputs came from). */
  note(line: string): void;
}

/** One example of examples/. */
export interface Example {
  /** Its folder under examples/. */
  name: string;
  /** The scripted model's part in it. */
  responder: Responder;
  /** Why it cannot run here, when it cannot (it is then reported skipped, never passed). */
  skipped?(): string | undefined;
  /** Run it to its end; resolves with its output, rejects saying what went wrong. */
  run(context: RunContext): Promise<string>;
}

const TIMEOUT_MS = 120_000;
const file = (...parts: string[]): string => path.join(REPO, 'examples', ...parts);

/** Every line of `expected` must be in `output` (scripted model only). */
function expectOutput(output: string, context: RunContext, expected: (string | RegExp)[]): string {
  if (!context.scripted) return output;
  const missing = expected.filter((e) => (typeof e === 'string' ? !output.includes(e) : !e.test(output)));
  if (missing.length > 0) throw new Error(`The output lacks ${missing.map(String).join(', ')}:\n${output}`);
  return output;
}

export const EXAMPLES: Example[] = [
  {
    name: 'typed-client',
    responder: demoResponder,
    run: async (context) => {
      const output = await runProgram(file('typed-client', 'main.ts'), [], context.env, TIMEOUT_MS);
      return expectOutput(output, context, ['save_output waits for approval', 'Turn completed', /Documents: requirements-[\d-]+\.md/, 'Session ended after 1 turn(s)']);
    },
  },
  {
    name: 'worker-plugin',
    responder: workerPluginResponder,
    run: async (context) => {
      // A task queue of its own: every worker of a queue must offer the same tools, and the runner's has no get_ticket.
      const env = { ...context.env, LOOPWRIGHT_TASK_QUEUE: `${context.env.LOOPWRIGHT_TASK_QUEUE}-plugin` };
      const output = await runProgram(file('worker-plugin', 'worker.ts'), [], env, TIMEOUT_MS);
      return expectOutput(output, context, [
        'custom tools: get_ticket',
        /mcp tools: .*notes__read_text_file/,
        'Turn completed after 2 model call(s)',
        // Only the MCP server's read of kickoff.md knows about Saturdays; only the tool knows TL-7's title.
        'The shed opens on Saturday mornings, so build TL-7 "Borrowers can see which tools are free" (open) first.',
      ]);
    },
  },
  {
    name: 'batch-jsonl',
    responder: batchResponder,
    run: async (context) => {
      const output = await runProgram(file('batch-jsonl', 'main.ts'), [], context.env, TIMEOUT_MS);
      return expectOutput(output, context, ['Done: 3 ok, 0 failed of 3', '#2 seed-swap completed: (scripted model) On "A seed swap box']);
    },
  },
  {
    name: 'bmad-project',
    responder: projectDemoResponder,
    run: async (context) => {
      const { project, note } = await bmadProject(context.scratch, context.env);
      context.note(`BMAD project: ${note}`);
      const output = await runProgram(file('bmad-project', 'main.ts'), [project], context.env, TIMEOUT_MS);
      return expectOutput(output, context, [/Session \S+: .*, Product Manager/, 'activate_skill', 'Turn completed', `In ${path.join(project, '_bmad-output')}: ${DEMO_DOCUMENT}`]);
    },
  },
  {
    name: 'web-page',
    responder: demoResponder,
    // As the chat app's browser tests: skipped without chromium only outside CI, where set-up installs it.
    skipped: () => (findChromium() === undefined && process.env.CI !== 'true' ? 'chromium is not installed (npm run setup installs it as root, or set LOOPWRIGHT_CHROMIUM)' : undefined),
    run: async (context) => {
      // `loopwright serve` on a free port, with the runner's worker (so with its model), then the page's own server.
      const serve = start(process.execPath, [BIN, 'serve', '--host', '127.0.0.1', '--port', '0', '--no-worker'], { env: context.env });
      let page: ReturnType<typeof startProgram> | undefined;
      try {
        const serveUrl = (await serve.waitForLine(/^http:\/\/127\.0\.0\.1:\d+\/$/, 60_000).catch((e: Error) => fail('loopwright serve', e, serve.output()))).trim();
        page = startProgram(file('web-page', 'server.ts'), { ...context.env, LOOPWRIGHT_SERVE_URL: serveUrl, PORT: '0' });
        const pageUrl = (await page.waitForLine(/^http:\/\/127\.0\.0\.1:\d+\/ /, 60_000).catch((e: Error) => fail('the page server', e, page!.output()))).split(' ')[0]!;
        context.note(`loopwright serve at ${serveUrl}, the page at ${pageUrl}`);
        const shown = await checkWebPage(pageUrl, context.scripted);
        const docs = path.join(context.env.LOOPWRIGHT_STATE_DIR!, 'demo', 'docs');
        const saved = fs.existsSync(docs) ? fs.readdirSync(docs) : [];
        if (context.scripted && saved.length !== 1) throw new Error(`Approved in the page, the document should be in ${docs}; found ${saved.join(', ') || 'nothing'}`);
        return [...shown.lines, `screenshot: ${path.relative(REPO, shown.screenshot)}`, `saved: ${saved.join(', ')}`].join('\n');
      } finally {
        await page?.stop();
        await serve.stop();
      }
    },
  },
];

function fail(what: string, error: Error, output: string): never {
  throw new Error(`${what} ${error.message}:\n${output}`);
}
