/**
 * The chat app in a real browser (headless Debian chromium through playwright-core) against a real
 * `loopwright serve` process, a real dev server and worker, and the fake model streaming slowly:
 * - the agent picker shows the bundle's agents with their menus, and starts a session;
 * - a streamed reply grows in the page while the model is still writing it, and ends exactly;
 * - a write waits for approval, shown with its exact arguments; approved in the page, the file is written;
 * - the agent's question (ask_question) is shown and answered from the message box;
 * - Interrupt cancels the model call in flight and the turn ends interrupted;
 * - a reload mid-turn resumes the stream after the last event shown (?lastEventId=): nothing lost or repeated;
 * - the serve process killed and started again mid-turn: the page reconnects and the reply ends exactly;
 * - a session started from the command line is reopened from the list, its running turn rejoined;
 * - an eval's page shows a recorded session and its candidate side by side, exactly the planted
 *   differences marked, and the transcripts' markup as text.
 * Screenshots of the main states go to test-artifacts/screenshots/.
 * The tests run at the same time (`test.concurrent`), each in a browser context of its own with its
 * own messages, which the fake model streams at that test's pace and holds until that test lets
 * them go; the test that restarts the serve process restarts one of its own.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import type { ChatMessage } from '../../common/messages';
import { type RecordedRequest, type Step, type StreamRate, text, toolCalls } from '../../fake-model/server';
import { cliEnvironment, runCli } from '../e2e/cli-runner';
import { startEval } from '../../client/eval-client';
import { EVAL_CANDIDATE_MODEL, evalResponder, FAILED_ITEM_NOTE, INJECTED_IMG, INJECTED_SCRIPT, recordEvalSession, SECOND_MESSAGE } from '../support/eval-fixture';
import { useAppHarness } from './app-harness';
import { browserTestsSkipped, screenshot } from './chromium';

jest.setTimeout(120_000);

/** The reply to most messages, about 430 characters. */
const REPLY =
  'Good idea, Sam. A tool library lets neighbours borrow a drill or a ladder instead of each buying one. ' +
  'To capture the first requirements I will ask a few short questions, one at a time. First: who would run the library ' +
  'day to day, and where would the tools be kept? A garage, a shed in a shared garden or a room in the community centre ' +
  'all work; what matters is who holds the key and when people can come by.';
/** The reply to `long …`: long enough to reload the page, or restart the server, in the middle of it. */
const LONG = Array.from({ length: 240 }, (_, i) => `part${i + 1}`).join(' ');
const SAVE_MESSAGE = 'Save what we have so far.';
const ASK_MESSAGE = 'Ask me what you need to know.';
const QUESTION = 'Who will hold the key to the shed?';
const SAVED_CONTENT = '# Street tool library\n\n- Neighbours borrow tools instead of buying them.\n- Kept in the shared garden shed; Sam holds the key.\n';

/** The pace (and hold) of a test's message; other replies are written at once. */
const rates = new Map<string, StreamRate>();

/** The text of a request's last user message, and how many assistant replies followed it. */
function lastUserMessage(request: RecordedRequest): { said: string; step: number } {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  return { said: String(messages[lastUser]?.content ?? ''), step: messages.slice(lastUser).filter((m) => m.role === 'assistant').length };
}

/** A session of the eval page's test (its recording or its candidate), which `evalResponder` answers. */
function isEvalRequest(request: RecordedRequest): boolean {
  const { said } = lastUserMessage(request);
  return JSON.stringify(request.body?.response_format ?? '').includes('checklist_result') || said === '*spec' || said === SECOND_MESSAGE;
}

/**
 * SAVE_MESSAGE saves a note first; ASK_MESSAGE asks QUESTION; `long …` gets the long reply; anything
 * else REPLY; each at its message's pace. The eval page's sessions get `evalResponder`'s answers.
 */
function respond(request: RecordedRequest): Step {
  if (isEvalRequest(request)) return evalResponder(request);
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const { said, step } = lastUserMessage(request);
  const stream = rates.get(said);
  const options = stream ? { stream } : {};
  const last = messages.at(-1);
  if (last?.role === 'tool' && last.tool_call_id === 'call_ask') return text(`Noted: ${String(JSON.parse(last.content).answer)}.`, options);
  if (said === ASK_MESSAGE) return toolCalls([{ id: 'call_ask', name: 'ask_question', arguments: { question: QUESTION } }], options);
  if (said === SAVE_MESSAGE && step === 0) {
    return toolCalls([{ id: 'call_save', name: 'save_output', arguments: { file_path: '{output_folder}/street-notes.md', content: SAVED_CONTENT } }], options);
  }
  if (said === SAVE_MESSAGE) return text('Saved the notes to docs/street-notes.md. Next: how long may a neighbour keep a tool?', options);
  if (said.startsWith('long')) return text(LONG, options);
  return text(REPLY, options);
}

/** Stream the message `said` at `rate`, holding it at `rate.holdAfterChunks` until `release()`. */
function streamAt(said: string, rate: StreamRate): { release(): void } {
  let release: () => void = () => undefined;
  rates.set(said, { ...rate, release: new Promise<void>((resolve) => (release = resolve)) });
  return { release: () => release() };
}

const skipped = browserTestsSkipped('chat app in a browser');
const app = skipped ? undefined : useAppHarness();
/** The tests, or skipped ones where the browser is missing (outside CI only). */
const it = skipped ? test.skip : test.concurrent;

beforeAll(() => app?.h.fake.setResponder(respond));

/** A test's body on a page of its own (a fresh browser context on the shared serve process), closed after it. */
function inPage(body: (page: Page) => Promise<void>): () => Promise<void> {
  return async () => {
    const context = await app!.browser.newContext({ viewport: { width: 1280, height: 860 }, baseURL: app!.serve.url });
    try {
      await body(await context.newPage());
    } finally {
      await context.close();
    }
  };
}

/** The text of the page's last agent message. */
async function lastReply(page: Page): Promise<string> {
  const texts = page.getByTestId('assistant-text');
  return (await texts.count()) === 0 ? '' : ((await texts.last().textContent()) ?? '');
}

async function waitFor<T>(page: Page, read: () => Promise<T>, ok: (value: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const started = Date.now();
  let value = await read();
  while (!ok(value)) {
    if (Date.now() - started > timeoutMs) throw new Error(`never saw ${what}; last value: ${JSON.stringify(value)?.slice(0, 500)}\n${await pageSummary(page)}`);
    await new Promise((r) => setTimeout(r, 25));
    value = await read();
  }
  return value;
}

/** What the page shows, for a failure's message: the stream's and the session's status, the end of the conversation. */
async function pageSummary(page: Page): Promise<string> {
  try {
    const stream = await page.getByTestId('stream-status').getAttribute('data-status', { timeout: 1000 });
    const status = await page.getByTestId('session-status').textContent({ timeout: 1000 });
    const conversation = (await page.locator('#conversation').innerText({ timeout: 1000 })).slice(-800);
    return `page: stream ${stream}, session ${status}; the conversation ends:\n${conversation}`;
  } catch (err) {
    return `page: (not readable: ${String(err).slice(0, 200)})`;
  }
}

/** Open the app (at `url`, by default the shared serve process), pick the example bundle's agent and start a session; returns its id. */
async function startSessionInPage(page: Page, shot?: string, url = '/'): Promise<string> {
  await page.goto(url);
  await page.getByLabel('Bundle or project path').fill(app!.bundle);
  await page.getByRole('button', { name: 'Show agents' }).click();
  await page.getByRole('group', { name: 'Agent' }).waitFor();
  if (shot) await screenshot(page, shot);
  await page.getByRole('button', { name: 'Start session' }).click();
  await page.waitForURL(/#\/session\//);
  await page.getByLabel('Message').waitFor();
  return decodeURIComponent(new URL(page.url()).hash.replace('#/session/', ''));
}

async function send(page: Page, message: string): Promise<void> {
  await page.getByLabel('Message').fill(message);
  await page.getByRole('button', { name: 'Send' }).click();
}

/** The model calls made for the message `said`. */
function requestsSaying(said: string): RecordedRequest[] {
  return app!.h.fake.requests.filter((r) => lastUserMessage(r).said === said);
}

/** The fake model's latest request for the message `said` is still being streamed. */
function modelStillWriting(said: string): boolean {
  const last = requestsSaying(said).at(-1);
  return last !== undefined && last.status === null && !last.aborted;
}

it(
  'picker: the bundle path shows its agents with their menus; Start session opens the session with its title and commands',
  inPage(async (page) => {
    const id = await startSessionInPage(page, 'agent-picker');
    expect(id).toBeTruthy();
    // The agent is known once the session is initialised.
    const state = await waitFor(
      page,
      async () => (await (await fetch(`${app!.serve.url}/api/sessions/${encodeURIComponent(id)}`)).json()) as { agent?: { name: string }; webUiUrl?: string },
      (s) => Boolean(s.agent?.name),
      'the session initialised',
    );
    const agent = state.agent!;
    await waitFor(
      page,
      () => page.getByRole('heading', { level: 1 }).textContent(),
      (t) => (t ?? '').includes(agent.name),
      "the agent's name as the title",
    );
    // The agent's menu is offered as commands that fill the message box.
    await page
      .getByRole('group', { name: 'Agent commands' })
      .getByRole('button', { name: /\*intake/ })
      .click();
    await expect(page.getByLabel('Message').inputValue()).resolves.toBe('*intake');
    const link = page.getByRole('link', { name: 'Open in the Temporal Web UI' });
    if (state.webUiUrl) await expect(link.getAttribute('href')).resolves.toBe(state.webUiUrl);
  }),
);

it(
  'streaming: the reply grows in the page while the model is still writing it, and ends exactly, once',
  inPage(async (page) => {
    await startSessionInPage(page);
    // Four characters every 20 ms, held after its tenth event (the role, then nine pieces: 36 characters) until
    // released: the page must show those 36 characters while the model is certainly still writing, however
    // slow the machine, and then the rest as it comes.
    const message = 'We want a tool library for our street.';
    const hold = streamAt(message, { chunkChars: 4, intervalMs: 20, holdAfterChunks: 10 });
    await send(page, message);
    await expect(page.getByTestId('user-message').last().textContent()).resolves.toContain('tool library');
    const seen = new Set<number>();
    await waitFor(
      page,
      async () => {
        const now = await lastReply(page);
        if (now.length > 0) seen.add(now.length);
        return now;
      },
      (t) => t === REPLY.slice(0, 36),
      'the first nine pieces of the reply while the model is held',
    );
    expect(modelStillWriting(message)).toBe(true);
    expect([...seen].every((n) => n <= 36)).toBe(true);
    hold.release();
    // The picture when a good part is written.
    await waitFor(
      page,
      () => lastReply(page),
      (t) => t.length > 160,
      'a good part of the reply',
    );
    if (modelStillWriting(message)) await screenshot(page, 'streaming-reply');
    await waitFor(
      page,
      () => lastReply(page),
      (t) => t === REPLY,
      'the whole reply',
    );
    await page.getByRole('button', { name: 'Send' }).and(page.locator(':enabled')).waitFor();
    await expect(page.getByTestId('assistant-text').count()).resolves.toBe(1);
    await waitFor(
      page,
      () => page.getByTestId('session-tokens').textContent(),
      (t) => /^[1-9]/.test(t ?? ''),
      'tokens counted',
    );
  }),
);

it(
  'approval: a session started in the page asks before writing; the save_output call waits with its exact arguments, and Approve writes the file',
  inPage(async (page) => {
    await startSessionInPage(page);
    await send(page, SAVE_MESSAGE);
    const approval = page.getByRole('article', { name: 'Approval of save_output' });
    await approval.waitFor();
    // The exact content the call would write, and the path with its variables filled in.
    await expect(approval.getByTestId('approval-arg-content').textContent()).resolves.toBe(SAVED_CONTENT);
    await expect(approval.getByTestId('approval-arg-file_path').textContent()).resolves.toBe('{output_folder}/street-notes.md');
    const saved = path.join(app!.bundle, 'docs', 'street-notes.md');
    await expect(approval.getByTestId('approval-path').textContent()).resolves.toBe(saved);
    expect(fs.existsSync(saved)).toBe(false);
    await screenshot(page, 'approval');
    await approval.getByRole('button', { name: 'Approve' }).click();
    await waitFor(
      page,
      () => lastReply(page),
      (t) => t.startsWith('Saved the notes'),
      'the reply after the write',
    );
    expect(fs.readFileSync(saved, 'utf8')).toBe(SAVED_CONTENT);
    await expect(approval.count()).resolves.toBe(0);
    await expect(page.getByTestId('tool-call').filter({ hasText: 'save_output' }).getAttribute('data-status')).resolves.toBe('done');
    await page.getByRole('button', { name: 'Send' }).and(page.locator(':enabled')).waitFor();
    await screenshot(page, 'finished-turn');
  }),
);

it(
  'question: the question the agent asks is shown, and the message box sends the answer as its result',
  inPage(async (page) => {
    await startSessionInPage(page);
    await send(page, ASK_MESSAGE);
    const question = page.getByRole('region', { name: 'The agent asks' });
    await question.waitFor();
    await expect(question.getByTestId('question-text').textContent()).resolves.toBe(QUESTION);
    await page.getByLabel('Your answer').fill('Sam, who lives next to it');
    await page.getByRole('button', { name: 'Send' }).click();
    await waitFor(
      page,
      () => lastReply(page),
      (t) => t === 'Noted: Sam, who lives next to it.',
      'the reply to the answer',
    );
    await expect(question.isHidden()).resolves.toBe(true);
    await expect(page.getByTestId('user-message').last().textContent()).resolves.toContain('Sam, who lives next to it');
  }),
);

it(
  'interrupt: the button cancels the model call in flight; the turn ends interrupted and the page takes a message again',
  inPage(async (page) => {
    await startSessionInPage(page);
    // The reply stops after 40 characters and is never let go: the interrupt lands while the model is writing.
    const message = 'long reply please (interrupt)';
    streamAt(message, { chunkChars: 4, intervalMs: 20, holdAfterChunks: 10 });
    await send(page, message);
    await waitFor(
      page,
      () => lastReply(page),
      (t) => t.length > 20,
      'the first text',
    );
    await page.getByRole('button', { name: 'Interrupt' }).click();
    await page.getByTestId('notice').filter({ hasText: 'Interrupted' }).waitFor();
    await waitFor(
      page,
      async () => requestsSaying(message)[0]?.aborted === true,
      (aborted) => aborted,
      'the model call aborted',
      10_000,
    );
    expect((await lastReply(page)).length).toBeLessThan(LONG.length);
    await expect(page.getByRole('button', { name: 'Send' }).isEnabled()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Interrupt' }).isDisabled()).resolves.toBe(true);
  }),
);

it(
  'reload mid-turn: the page shows the turn as it was and resumes the stream after its last event, nothing lost or repeated',
  inPage(async (page) => {
    await startSessionInPage(page);
    // The reply stops after 144 characters until released: the reload lands while the model is certainly writing.
    const message = 'long reply please (reload)';
    const hold = streamAt(message, { chunkChars: 16, intervalMs: 5, holdAfterChunks: 10 });
    await send(page, message);
    await waitFor(
      page,
      () => lastReply(page),
      (t) => t.length > 100,
      'a good part of the reply',
    );
    const streams: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/events')) streams.push(request.url());
    });
    await page.reload();
    expect(modelStillWriting(message)).toBe(true);
    hold.release();
    await waitFor(
      page,
      () => lastReply(page),
      (t) => t === LONG,
      'the whole reply after the reload',
      60_000,
    );
    await expect(page.getByTestId('assistant-text').count()).resolves.toBe(1);
    await expect(page.getByTestId('user-message').count()).resolves.toBe(1);
    // The page resumed after its last event rather than reading the turn again from its start.
    expect(streams.length).toBeGreaterThan(0);
    expect(new URL(streams[0]!).searchParams.get('lastEventId')).toBeTruthy();
  }),
);

it(
  'serve restarted mid-turn: the page reconnects with its last event id and the reply ends exactly',
  inPage(async (page) => {
    // A serve process of this test's own: the other tests' pages stay connected to theirs.
    const serve = await app!.startOwnServe();
    await startSessionInPage(page, undefined, `${serve.url}/`);
    // The reply stops after 72 characters until released: the serve process stops and starts again while the model writes.
    const message = 'long reply please (restart)';
    const hold = streamAt(message, { chunkChars: 8, intervalMs: 5, holdAfterChunks: 10 });
    await send(page, message);
    await waitFor(
      page,
      () => lastReply(page),
      (t) => t.length > 40,
      'the first text',
    );
    const resumed: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/events')) resumed.push(request.url());
    });
    await serve.restart();
    expect(modelStillWriting(message)).toBe(true);
    hold.release();
    await waitFor(
      page,
      () => lastReply(page),
      (t) => t === LONG,
      'the whole reply after the restart',
      60_000,
    );
    await expect(page.getByTestId('assistant-text').count()).resolves.toBe(1);
    expect(resumed.some((url) => new URL(url).searchParams.get('lastEventId'))).toBe(true);
    await waitFor(
      page,
      () => page.getByTestId('stream-status').getAttribute('data-status'),
      (s) => s === 'open',
      'the stream open again',
    );
  }),
);

it(
  'rejoin: a session started from the command line is opened from the list and its running turn followed',
  inPage(async (page) => {
    // The reply stops after 32 characters until released: the page opens the turn while the model writes it.
    const message = 'long story from the terminal';
    const hold = streamAt(message, { chunkChars: 8, intervalMs: 5, holdAfterChunks: 5 });
    const env = cliEnvironment({
      TEMPORAL_ADDRESS: app!.h.server.address,
      OPENAI_BASE_URL: app!.h.fake.baseURL,
      LOOPWRIGHT_TASK_QUEUE: app!.taskQueue,
      LOOPWRIGHT_STATE_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'lw-browser-cli-')),
    });
    const run = await runCli(['run', app!.bundle, 'facilitator', message, '--detach', '--stream', '--json'], env, { timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    const id = String(JSON.parse(run.stdout).workflowId);
    await page.goto('/');
    const item = page.getByRole('navigation', { name: 'Sessions' }).getByRole('link').filter({ hasText: id });
    await waitFor(
      page,
      async () => {
        await page.getByRole('button', { name: 'Refresh the session list' }).click();
        return item.count();
      },
      (n) => n === 1,
      'the session in the list',
    );
    await item.click();
    await page.waitForURL(new RegExp(`#/session/${encodeURIComponent(id)}$`));
    await waitFor(
      page,
      () => lastReply(page),
      (t) => t.length > 0 && modelStillWriting(message),
      'the running turn rejoined while it is written',
    );
    hold.release();
    await waitFor(
      page,
      () => lastReply(page),
      (t) => t === LONG,
      'the whole reply',
      60_000,
    );
    await expect(page.getByTestId('user-message').last().textContent()).resolves.toContain(message);
    await expect(page.getByTestId('assistant-text').count()).resolves.toBe(1);
    await screenshot(page, 'rejoined-turn');
  }),
);

it(
  'eval page: the recording and the candidate side by side per turn, exactly the planted differences marked, markup shown as text',
  inPage(async (page) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-browser-eval-'));
    try {
      // The fake model answers this test's sessions with evalResponder (isEvalRequest).
      const project = path.join(root, 'project');
      fs.mkdirSync(project);
      const recorded = await recordEvalSession(app!.loopwright, project);
      const evaluation = await startEval(app!.loopwright, {
        sources: [recorded],
        candidate: { model: EVAL_CANDIDATE_MODEL },
        scratchRoot: path.join(root, 'scratch'),
        workflowId: `browser-eval-${process.pid}`,
      });
      await evaluation.result();

      await page.goto('/');
      await page.getByRole('list', { name: 'Evals' }).getByRole('link').filter({ hasText: evaluation.workflowId }).click();
      await page.getByRole('table', { name: 'Recorded sessions' }).getByRole('link', { name: recorded }).click();
      const turn = (n: number) => page.getByRole('article', { name: `Turn ${n}` });
      await turn(2).waitFor();
      const kinds = (n: number) =>
        turn(n)
          .getByTestId('difference')
          .evaluateAll((els) => els.map((e) => e.getAttribute('data-kind')));
      const side = (n: number, which: 'Recording' | 'Candidate') => turn(n).getByRole('region', { name: which, exact: true });
      /** The tool calls of a side, each `tool mark diverged` (a gap: `gap mark`). */
      const calls = (n: number, which: 'Recording' | 'Candidate') =>
        side(n, which)
          .locator('.eval-call')
          .evaluateAll((els) =>
            els.map((e) => [e.classList.contains('gap') ? 'gap' : e.getAttribute('data-tool'), e.getAttribute('data-mark') ?? '-', e.getAttribute('data-diverged') ?? '-'].join(' ')),
          );
      const markedFigures = (n: number, which: 'Recording' | 'Candidate') =>
        side(n, which)
          .locator('dd[data-mark]')
          .evaluateAll((els) => els.map((e) => e.getAttribute('data-mark')));

      // Turn 1: the spec saved with other content (ran in the scratch copy), the checklist item it failed, the status that changed.
      await expect(kinds(1)).resolves.toEqual(['arguments', 'diverged', 'status', 'check']);
      await expect(calls(1, 'Recording')).resolves.toEqual(['execute_workflow - -', 'save_output arguments -']);
      await expect(calls(1, 'Candidate')).resolves.toEqual(['execute_workflow - -', 'save_output arguments run']);
      await expect(markedFigures(1, 'Candidate')).resolves.toEqual(['status', 'check']);
      await expect(markedFigures(1, 'Recording')).resolves.toEqual([]);
      await expect(side(1, 'Candidate').getByTestId('failed-item').allTextContents()).resolves.toEqual([`Content: Names the users — ${FAILED_ITEM_NOTE}`]);
      // Turn 2: the second read skipped (a gap where it was), more tokens and cost.
      await expect(kinds(2)).resolves.toEqual(['missing', 'tokens', 'cost']);
      await expect(calls(2, 'Recording')).resolves.toEqual(['read_file - -', 'read_file missing -']);
      await expect(calls(2, 'Candidate')).resolves.toEqual(['read_file - -', 'gap missing -']);
      await expect(markedFigures(2, 'Candidate')).resolves.toEqual(['tokens', 'cost']);
      await screenshot(page, 'eval-side-by-side');

      // Markup in the message, the arguments and the answers is text: no element made of it, no script run.
      await expect(turn(2).getByTestId('eval-message').textContent()).resolves.toBe(SECOND_MESSAGE);
      await expect(side(2, 'Candidate').getByTestId('eval-response').textContent()).resolves.toBe(`Read them. ${INJECTED_IMG}`);
      await expect(side(1, 'Recording').getByTestId('eval-response').textContent()).resolves.toBe(`Saved the spec. ${INJECTED_SCRIPT}`);
      await expect(side(1, 'Recording').getByTestId('eval-args').last().textContent()).resolves.toContain(INJECTED_SCRIPT);
      await expect(page.locator('#eval img, #eval script').count()).resolves.toBe(0);
      await expect(page.evaluate(() => (globalThis as { __lwInjected?: number }).__lwInjected)).resolves.toBeUndefined();
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  }),
);
