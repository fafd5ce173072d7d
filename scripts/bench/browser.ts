/**
 * The chat app in a browser (`browser` part): how soon the first text of a streamed reply shows in
 * the page after the model server sends it. One Loopwright worker in this process on the bench's dev
 * server, a fake model in this process streaming a reply of 400 characters 8 every 20 ms,
 * `loopwright serve` in a process of its own, and headless Debian chromium (playwright-core, no
 * browser download) with the app open on one session, its event stream connected.
 *
 * Method, per turn (a warm-up, then `replies` turns of the same session, one at a time):
 * - before the message is sent, the page gets a MutationObserver on the conversation that notes
 *   `performance.timeOrigin + performance.now()` (epoch ms, this machine's clock) when a new agent
 *   message first holds text (in the DOM), and again at the next animation frame (painted, or about
 *   to be: what "visible" means here); a wrapper around EventSource installed before the app loads
 *   notes when the first TEXT_MESSAGE_CONTENT event of the turn arrived;
 * - the message goes to `POST /api/sessions/:id/messages` (from this process, not by typing);
 * - the fake server notes, with Date.now() on the same clock, when it wrote the reply's first content
 *   chunk (RecordedRequest.firstChunkAt);
 * - the figure is the page's time minus that one. The path in between: the worker's model activity
 *   (openai client, the first heartbeat with the reply so far), the dev server, serve's look at the
 *   session (state query and the running activity's heartbeat), the SSE write, Chromium's parser
 *   and the app's handler.
 */
import { LoopwrightClient } from '../../client/session-client';
import { startFakeOpenAI, text } from '../../fake-model/server';
import { createWorker } from '../../worker/create-worker';
import { findChromium, launchChromium } from '../../test/browser/chromium';
import { startServe } from '../../test/browser/serve-process';
import { findFreePort } from '../../test/support/temporal-server';
import type { BenchServer } from './bench-server';
import type { CleanupStack } from './cleanup-stack';
import { benchWorkflowBundle, waitUntilReady, withTimeout } from './durable-loop';
import { summarize, type SampleSummary } from './stats';
import { replyText } from './stream-reader';
import { ms, textTable } from './text-table';

/** Goal: the first text visible in the page at most this long after the model server sent it, at the median. */
export const BROWSER_FIRST_TEXT_TARGET_MS = 150;

export interface BrowserBenchOptions {
  server: BenchServer;
  bundlePath: string;
  agentId: string;
  model: string;
  turnTimeoutMs: number;
  /** Measured turns (default 15), after one warm-up. */
  replies?: number;
  replyChars?: number;
  chunkChars?: number;
  intervalMs?: number;
  progress?: (line: string) => void;
}

export interface BrowserFigures {
  /** Why the part did not run (no chromium here). */
  skipped?: string;
  browser?: string;
  replyChars: number;
  chunkChars: number;
  intervalMs: number;
  /** Model server's first content chunk to the first TEXT_MESSAGE_CONTENT event received by the page. */
  sseArrival?: SampleSummary;
  /** … to the text in the page's DOM. */
  inDom?: SampleSummary;
  /** … to the next animation frame after that (visible). */
  visible?: SampleSummary;
  /** Turns whose reply the page showed exactly, once. */
  exactReplies: number;
}

/** What the page notes of one turn. */
interface PageMarks {
  sse?: number;
  dom?: number;
  frame?: number;
}

/** Installed before the app loads: notes when the first text event of each turn arrives. */
const SSE_PROBE = `(() => {
  const Native = window.EventSource;
  window.__lwBench = { sse: undefined };
  window.EventSource = class extends Native {
    constructor(url, init) {
      super(url, init);
      this.addEventListener('message', (e) => {
        if (window.__lwBench.sse === undefined && e.data.includes('"TEXT_MESSAGE_CONTENT"')) window.__lwBench.sse = performance.timeOrigin + performance.now();
      });
    }
  };
})();`;

/**
 * Run in the page before each message (source text: this file is compiled without the DOM's
 * types): forget the last turn's marks and watch for the next agent message to hold text.
 */
const WATCH_NEXT_REPLY = `(() => {
  window.__lwBench = { sse: undefined, dom: undefined, frame: undefined };
  window.__lwObserver?.disconnect();
  const list = document.getElementById('conversation');
  const before = list.querySelectorAll('[data-testid="assistant-text"]').length;
  const observer = new MutationObserver(() => {
    const texts = list.querySelectorAll('[data-testid="assistant-text"]');
    if (window.__lwBench.dom !== undefined || texts.length <= before || !texts[texts.length - 1].textContent) return;
    window.__lwBench.dom = performance.timeOrigin + performance.now();
    requestAnimationFrame(() => (window.__lwBench.frame = performance.timeOrigin + performance.now()));
  });
  observer.observe(list, { childList: true, subtree: true, characterData: true });
  window.__lwObserver = observer;
})()`;

/** Runs the turns; everything started is stopped on `cleanup`. */
export async function measureBrowser(options: BrowserBenchOptions, cleanup: CleanupStack): Promise<BrowserFigures> {
  const replies = options.replies ?? 15;
  const replyChars = options.replyChars ?? 400;
  const chunkChars = options.chunkChars ?? 8;
  const intervalMs = options.intervalMs ?? 20;
  const base = { replyChars, chunkChars, intervalMs, exactReplies: 0 };
  const chromium = findChromium();
  if (!chromium) return { ...base, skipped: 'no chromium installed (npm run setup installs it as root: apt-get install chromium)' };

  const reply = replyText(replyChars);
  const fake = await startFakeOpenAI({ responder: () => text(reply), streaming: { chunkChars, intervalMs } });
  cleanup.push('browser fake model server', () => fake.close());
  const taskQueue = `loopwright-bench-browser-${process.pid}`;
  const [workflowBundle, connection] = await Promise.all([benchWorkflowBundle(), options.server.nativeConnection()]);
  const worker = await createWorker({ connection, taskQueue, workflowBundle, activityOptions: { model: { baseURL: fake.baseURL, apiKey: 'bench-key', defaultModel: options.model } } });
  const running = worker.run();
  cleanup.push('browser worker', async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
  });
  options.progress?.('browser: starting loopwright serve and chromium');
  // The model settings only say a model is configured (serve runs no worker: --no-worker); the worker here calls the fake.
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TEMPORAL_ADDRESS: options.server.address,
    LOOPWRIGHT_TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: fake.baseURL,
    OPENAI_API_KEY: 'bench-key',
  };
  const serve = await startServe(env, await findFreePort());
  cleanup.push('loopwright serve', () => serve.kill());
  const browser = await launchChromium();
  cleanup.push('chromium', () => browser.close());

  const loopwright = new LoopwrightClient(options.server.client, taskQueue);
  const session = await loopwright.start({ bundlePath: options.bundlePath, agentId: options.agentId, context: { window: 10_000_000 }, modelSettings: { stream: true } });
  await waitUntilReady(session, options.turnTimeoutMs);
  const page = await browser.newPage();
  await page.addInitScript(SSE_PROBE);
  await page.goto(`${serve.url}/#/session/${encodeURIComponent(session.workflowId)}`);
  await page.locator('[data-testid="stream-status"][data-status="open"]').waitFor({ timeout: options.turnTimeoutMs });

  const samples = { sse: [] as number[], dom: [] as number[], frame: [] as number[] };
  let exact = 0;
  options.progress?.(`browser: 1 warm-up, then ${replies} streamed turns of ${replyChars} characters (${chunkChars} every ${intervalMs} ms) shown in the page`);
  for (let i = 0; i <= replies; i++) {
    await page.evaluate(WATCH_NEXT_REPLY);
    const before = fake.requests.length;
    const state = await session.state();
    const sent = await fetch(`${serve.url}/api/sessions/${encodeURIComponent(session.workflowId)}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: `browser bench ${i}` }),
    });
    if (sent.status !== 202) throw new Error(`browser bench: sending a message answered ${sent.status}: ${await sent.text()}`);
    await page.waitForFunction('window.__lwBench.frame !== undefined', undefined, { timeout: options.turnTimeoutMs, polling: 50 });
    const marks = (await page.evaluate('window.__lwBench')) as PageMarks;
    // The turn's end: the page shows the whole reply and takes a message again.
    await withTimeout(waitForTurn(loopwright, session.workflowId, state.turn + 1), options.turnTimeoutMs, 'browser bench turn');
    await page.locator('#send:enabled').waitFor({ timeout: options.turnTimeoutMs });
    const shown = await page.getByTestId('assistant-text').last().textContent();
    const request = fake.requests[before];
    if (request?.firstChunkAt === undefined || marks.dom === undefined || marks.frame === undefined) throw new Error('browser bench: no first chunk or no text in the page');
    if (i === 0) continue;
    if (shown === reply) exact += 1;
    if (marks.sse !== undefined) samples.sse.push(marks.sse - request.firstChunkAt);
    samples.dom.push(marks.dom - request.firstChunkAt);
    samples.frame.push(marks.frame - request.firstChunkAt);
  }
  await session.end();
  return {
    ...base,
    browser: browser.version(),
    ...(samples.sse.length > 0 ? { sseArrival: summarize(samples.sse) } : {}),
    inDom: summarize(samples.dom),
    visible: summarize(samples.frame),
    exactReplies: exact,
  };
}

/** Wait until turn `turn` has ended. */
async function waitForTurn(loopwright: LoopwrightClient, workflowId: string, turn: number): Promise<void> {
  const session = loopwright.session(workflowId);
  for (;;) {
    const state = await session.state();
    if (state.lastTurn?.turn === turn) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The part's report. */
export function formatBrowser(f: BrowserFigures): string {
  const title = `Chat app in a browser: first reply text in the page after the model server sends it`;
  if (f.skipped || !f.visible || !f.inDom) return `${title}: skipped, ${f.skipped ?? 'no samples'}`;
  const row = (label: string, s: SampleSummary) => [label, ms(s.median, 1), ms(s.p95, 1), ms(s.min, 1), ms(s.max, 1)];
  const met = f.visible.median <= BROWSER_FIRST_TEXT_TARGET_MS ? 'met' : 'not met';
  return [
    `${title} (headless Chromium ${f.browser}, loopwright serve in its own process, worker in this process; a reply of ${f.replyChars} characters` +
      ` streamed ${f.chunkChars} every ${f.intervalMs} ms; ${f.visible.runs} turns after a warm-up; ms from the fake server writing the first content chunk)`,
    textTable(
      ['figure', 'median', 'p95', 'min', 'max'],
      [
        ...(f.sseArrival ? [row('first text event received by the page', f.sseArrival)] : []),
        row('first text in the DOM (MutationObserver)', f.inDom),
        row('first text visible (next animation frame)', f.visible),
      ],
    ),
    `   Target: visible <= ${BROWSER_FIRST_TEXT_TARGET_MS} ms at the median (${met}). Replies shown exactly, once: ${f.exactReplies}/${f.visible.runs}.`,
  ].join('\n');
}
