/**
 * Setting up context management and budgets for one run (workflows/context/manage-context.ts):
 * the window is the session's when it names one, else asked of the server once with the
 * `describeModel` activity (named for the Web UI), else the default; a run continued from another
 * asks nothing and takes the carried view, window and budgets; the view's head is the leading
 * system messages; fallback models and the continuation limit come from the input (default 2), and
 * a compaction refreshes the session's details.
 */
jest.mock('@temporalio/workflow', () => jest.requireActual('../../support/workflow-fakes').fakeWorkflowModule());

import type { CompactionRecord, ContinuedSession, InitializeResult, SessionInput } from '../../../common/session-types';
import { manageContext } from '../../../workflows/context/manage-context';
import { FakeActivities, readingSession, system, transcriptOf, user, workflowFake } from '../../support/workflow-fakes';

beforeEach(() => workflowFake.reset());

const INIT = { tools: [] } as unknown as Omit<InitializeResult, 'messages'>;
const input = (extra: Partial<SessionInput> = {}): SessionInput => ({ bundlePath: '/b', agentId: 'pm', ...extra });

test('manage context: a session that names no window asks the server once, and takes what it says', async () => {
  const fake = new FakeActivities().script('describeModel', { model: 'qwen', contextWindow: 12_000, source: 'llama.cpp /props n_ctx' });
  const managed = await manageContext(
    input({ model: 'qwen' }),
    fake.stubs,
    readingSession(1, 10),
    INIT,
    undefined,
    () => 0,
    () => undefined,
  );
  expect(fake.calls).toEqual([{ name: 'describeModel', args: [{ model: 'qwen' }], summary: 'describeModel qwen · context window', local: false }]);
  expect(managed.context.window).toBe(12_000);
  expect(managed.context.windowSource).toBe('server: llama.cpp /props n_ctx');
  expect(workflowFake.logs.map((l) => [l.message, l.attrs])).toEqual([['Context window', { window: 12_000, source: 'server: llama.cpp /props n_ctx', tools: 0 }]]);
});

test.each([null, 0, -1, 1.5])('manage context: a window of %p from the server is not believed: the default stands', async (contextWindow) => {
  const fake = new FakeActivities().script('describeModel', { model: 'm', contextWindow, source: 'no /v1/models entry' });
  const managed = await manageContext(
    input(),
    fake.stubs,
    readingSession(1, 10),
    INIT,
    undefined,
    () => 0,
    () => undefined,
  );
  expect(fake.calls[0]!.summary).toBe('describeModel default model · context window');
  expect(fake.calls[0]!.args).toEqual([{}]);
  expect([managed.context.window, managed.context.windowSource]).toEqual([32_768, 'default']);
  expect(workflowFake.logged('info')).toEqual(['Context window unknown; using the default', 'Context window']);
});

test('manage context: a window the session names is used without asking; the head is the leading system messages', async () => {
  const fake = new FakeActivities();
  const transcript = transcriptOf(system('prompt'), system('config loaded'), user('hello'), system('a later note'));
  const managed = await manageContext(
    input({ context: { window: 9000, keepRecent: 1 } }),
    fake.stubs,
    transcript,
    INIT,
    undefined,
    () => 0,
    () => undefined,
  );
  expect(fake.calls).toEqual([]);
  expect([managed.context.window, managed.context.windowSource]).toEqual([9000, 'session']);
  expect(managed.context.view).toEqual({ head: 2, from: 2, pruneBefore: 0 });
});

test('manage context: budgets, fallbacks and continuations come from the input; a compaction refreshes the details', async () => {
  let refreshed = 0;
  const managed = await manageContext(
    input({ context: { window: 9000 }, budget: { turnTokens: 500 }, fallbackModels: ['b', 'c'], modelSettings: { temperature: 0 } }),
    new FakeActivities().stubs,
    readingSession(1, 10),
    INIT,
    undefined,
    () => 42,
    () => (refreshed += 1),
  );
  expect(managed.fallbackModels).toEqual(['b', 'c']);
  expect(managed.maxContinuations).toBe(2);
  expect(managed.settings).toEqual({ temperature: 0 });
  expect(managed.budgets.state()).toEqual({ turnTokens: { used: 0, limit: 500 }, sessionTokens: { used: 42 }, cost: { used: 0 } });
  managed.onCompaction({} as CompactionRecord);
  expect(refreshed).toBe(1);
  const strict = await manageContext(
    input({ context: { window: 9000 }, maxContinuations: 0 }),
    new FakeActivities().stubs,
    readingSession(1, 10),
    INIT,
    undefined,
    () => 0,
    () => undefined,
  );
  expect(strict.maxContinuations).toBe(0);
  expect(strict.fallbackModels).toEqual([]);
});

test('manage context: a continued run asks nothing and goes on with the carried view, window and budgets', async () => {
  const fake = new FakeActivities();
  const carried = {
    context: { view: { head: 1, from: 9, summary: 'earlier', pruneBefore: 12 }, window: 12_000, windowSource: 'server: props', compactions: 2, calibration: 1.2 },
    budget: { sessionTokensExtra: 1000, sessionCostExtra: 0, cost: 0.25 },
  } as ContinuedSession;
  const managed = await manageContext(
    input({ budget: { sessionTokens: 5000 } }),
    fake.stubs,
    readingSession(4, 10),
    INIT,
    carried,
    () => 100,
    () => undefined,
  );
  expect(fake.calls).toEqual([]);
  expect(managed.context.carry()).toEqual({ ...carried.context });
  expect(managed.budgets.state()).toEqual({ turnTokens: { used: 0 }, sessionTokens: { used: 100, limit: 6000 }, cost: { used: 0.25 } });
});
