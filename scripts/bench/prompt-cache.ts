/**
 * What the provider's prompt cache saves a session: one 25-turn Loopwright session on the
 * dev server, worker in this process, whose every turn reads a 12 KB chapter of the bundle and
 * answers, with `anthropic:claude-bench` against the tests' fake Messages server (the real
 * `@anthropic-ai/sdk` client; the fake caches by Anthropic's documented semantics: a prefix match up
 * to a marked block, a minimum size, a five-minute lifetime). The window is small enough that the
 * session's own context manager compacts (pruning old reads to stubs; no summaries) about twice;
 * each compaction's record says the cached tokens it cost, as the workflow estimated them. Usage
 * (cache reads and writes) comes from the turns' results. The model call places its breakpoints
 * always (there is no switch to leave them out), so the session without them is the same calls
 * priced with every prompt token at the input price: the fake serves the same prompts either way.
 * Prices are Anthropic's shares: cached reads a tenth of the input price, writes 1.25 times.
 *
 * The same session runs once more with `responses:gpt-bench` against the tests' fake Responses
 * server, whose cache is automatic (a prefix of 1,024 tokens or more, in steps of 128): its cost is
 * set against the same calls priced as if nothing were cached.
 */
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { LoopwrightClient } from '../../client/session-client';
import type { TokenUsage } from '../../common/messages';
import { callCost } from '../../common/model-cost';
import type { CompactionRecord } from '../../common/session-types';
import { FAKE_ANTHROPIC_KEY, say, startFakeAnthropic, useTools } from '../../test/support/fake-anthropic';
import { callTools, FAKE_RESPONSES_KEY, say as sayResponses, startFakeResponses } from '../../test/support/fake-responses';
import { bundlerLogger, createWorker, WORKFLOWS_PATH } from '../../worker/create-worker';
import type { BenchServer } from './bench-server';
import type { CleanupStack } from './cleanup-stack';
import { withTimeout } from './durable-loop';
import { bytes, textTable } from './text-table';

/** Turns of the session, the read per turn, and the window that makes its context manager compact about twice. */
const TURNS = 25;
const READ_BYTES = 12_000;
const WINDOW = 56_000;
/** An input price per million tokens (the shares matter, not the currency). */
const PRICE = { input: 3, output: 15 };
const TURN_TIMEOUT_MS = 60_000;

/** One compaction of the session, with what the turn it happened in cost against the turn before. */
export interface CacheCompaction {
  record: CompactionRecord;
  turnCost: number;
  costTurnBefore: number;
  /** Prompt tokens the turn wrote to the cache, as the provider counted. */
  turnCacheWriteTokens: number;
}

/** One session's figures. */
export interface CacheSessionFigures {
  model: string;
  turns: number;
  completed: number;
  /** Share of prompt tokens read from the cache, from turn 3 on. */
  cachedShareAfterSecond: number;
  /** Prompt tokens of every call, and those read from and written to the cache. */
  promptTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Cost with cached tokens at their prices, and of the same calls with every prompt token at the input price. */
  cost: number;
  costUncached: number;
  compactions: CacheCompaction[];
  sessionSeconds: number;
}

/** The cache part's figures. */
export interface PromptCacheFigures {
  turns: number;
  readBytes: number;
  window: number;
  anthropic: CacheSessionFigures;
  responses: CacheSessionFigures;
}

const sum = (list: TokenUsage[], pick: (u: TokenUsage) => number) => list.reduce((n, u) => n + pick(u), 0);

/** Run the session against each fake, with a worker in this process on its own task queue. */
export async function measurePromptCache(options: { server: BenchServer; bundlePath: string; agentId: string; progress: (line: string) => void }, cleanup: CleanupStack): Promise<PromptCacheFigures> {
  const { server, progress } = options;
  fs.mkdirSync(path.join(options.bundlePath, 'bench'), { recursive: true });
  for (let n = 1; n <= TURNS; n++) fs.writeFileSync(path.join(options.bundlePath, 'bench', `chapter-${n}.md`), chapter(n));
  const anthropic = await startFakeAnthropic();
  cleanup.push('cache: fake Messages server', () => anthropic.close());
  const responses = await startFakeResponses();
  cleanup.push('cache: fake Responses server', () => responses.close());
  const taskQueue = `loopwright-bench-cache-${process.pid}`;
  const [workflowBundle, connection] = await Promise.all([bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: bundlerLogger }), server.nativeConnection()]);
  const model = { baseURL: responses.baseURL, apiKey: FAKE_RESPONSES_KEY, anthropicBaseURL: anthropic.baseURL, anthropicApiKey: FAKE_ANTHROPIC_KEY };
  const worker = await createWorker({ connection, taskQueue, workflowBundle, activityOptions: { model } });
  const running = worker.run();
  cleanup.push('cache worker', async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
  });
  const loopwright = new LoopwrightClient(server.client, taskQueue);

  const runSession = async (modelName: string, script: (file: string, n: number) => void): Promise<CacheSessionFigures> => {
    progress(`cache: ${TURNS} turns reading ${bytes(READ_BYTES)} bytes each, ${modelName}`);
    const started = performance.now();
    const session = await loopwright.start({
      bundlePath: options.bundlePath,
      agentId: options.agentId,
      model: modelName,
      context: { window: WINDOW, summarize: false },
      searchAttributes: false,
    });
    const usages: TokenUsage[] = [];
    const compactions: CacheCompaction[] = [];
    let completed = 0;
    for (let n = 1; n <= TURNS; n++) {
      const file = `{bundle-root}/bench/chapter-${n}.md`;
      script(file, n);
      const result = await withTimeout(session.send(`Read chapter ${n} (${file}) and note what it says.`), TURN_TIMEOUT_MS, `cache turn ${n}`);
      if (result.status === 'completed') completed += 1;
      usages.push(result.usage);
      for (const record of result.compactions ?? [])
        compactions.push({ record, turnCost: callCost(result.usage, PRICE), costTurnBefore: callCost(usages[n - 2] ?? result.usage, PRICE), turnCacheWriteTokens: result.usage.cacheWriteTokens ?? 0 });
    }
    await session.end();
    const later = usages.slice(2);
    return {
      model: modelName,
      turns: TURNS,
      completed,
      cachedShareAfterSecond: sum(later, (u) => u.cacheReadTokens ?? 0) / sum(later, (u) => u.promptTokens),
      promptTokens: sum(usages, (u) => u.promptTokens),
      cacheReadTokens: sum(usages, (u) => u.cacheReadTokens ?? 0),
      cacheWriteTokens: sum(usages, (u) => u.cacheWriteTokens ?? 0),
      cost: sum(usages, (u) => callCost(u, PRICE)),
      costUncached: sum(usages, (u) => callCost(u, PRICE, false)),
      compactions,
      sessionSeconds: (performance.now() - started) / 1000,
    };
  };

  const messages = await runSession('anthropic:claude-bench', (file, n) =>
    anthropic.enqueue(useTools([{ name: 'read_file', input: { file_path: file } }]), say(`Chapter ${n} is about the street's tool library; noted.`)),
  );
  const responsesFigures = await runSession('responses:gpt-bench', (file, n) =>
    responses.enqueue(callTools([{ name: 'read_file', input: { file_path: file } }]), sayResponses(`Chapter ${n} is about the street's tool library; noted.`)),
  );
  if (worker.getState() === 'RUNNING') worker.shutdown();
  await running;
  return { turns: TURNS, readBytes: READ_BYTES, window: WINDOW, anthropic: messages, responses: responsesFigures };
}

/** The figures as the report prints them. */
export function formatPromptCache(f: PromptCacheFigures): string {
  const money = (value: number) => value.toFixed(4);
  const sessions = [f.anthropic, f.responses];
  const row = (label: string, cell: (s: CacheSessionFigures) => string) => [label, ...sessions.map(cell)];
  return [
    `Prompt cache: a ${f.turns}-turn session (dev server, worker in this process), each turn reading a ${bytes(f.readBytes)}-byte file then answering, window ${bytes(f.window)} tokens` +
      ` (compaction by pruning, no summaries); anthropic: against the tests' caching Messages fake (breakpoints), responses: against the Responses fake (automatic cache).` +
      ` Cached reads priced at a tenth of input, writes at 1.25 times (input ${PRICE.input}, output ${PRICE.output} per million).` +
      ` Breakpoints cannot be switched off: the cost without them is the same calls with every prompt token at the input price`,
    textTable(
      ['measure', ...sessions.map((s) => s.model)],
      [
        row('turns completed (session time)', (s) => `${s.completed} of ${s.turns} (${s.sessionSeconds.toFixed(1)} s)`),
        row('prompt tokens, all calls', (s) => bytes(s.promptTokens)),
        row('read from the cache / written to it', (s) => `${bytes(s.cacheReadTokens)} / ${bytes(s.cacheWriteTokens)}`),
        row('share read from the cache, turns 3 on', (s) => `${(100 * s.cachedShareAfterSecond).toFixed(1)} %`),
        row('cost with the cache / priced uncached', (s) => `${money(s.cost)} / ${money(s.costUncached)} (${((100 * s.cost) / s.costUncached).toFixed(1)} %)`),
      ],
    ),
    '',
    "Each compaction: the workflow's record (view tokens, reads pruned, cached tokens lost), and its turn's cost and cache writes against the turn before",
    textTable(
      ['model, turn (reason)', 'view tokens', 'pruned', 'cached tokens lost', 'turn cost / turn before', 'written to the cache'],
      sessions.flatMap((s) =>
        s.compactions.map((c) => [
          `${s.model}, turn ${c.record.turn} (${c.record.reason})`,
          `${bytes(c.record.beforeTokens)} → ${bytes(c.record.afterTokens)}`,
          String(c.record.pruned),
          c.record.cachedTokensLost === undefined ? 'not counted' : bytes(c.record.cachedTokensLost),
          `${money(c.turnCost)} / ${money(c.costTurnBefore)}`,
          bytes(c.turnCacheWriteTokens),
        ]),
      ),
    ),
  ].join('\n');
}

/** READ_BYTES of text that differ from chapter to chapter. */
function chapter(n: number): string {
  return Array.from({ length: 240 }, (_, i) => `Chapter ${n}, line ${i}: the street's tool library lends drills and ladders.`)
    .join('\n')
    .slice(0, READ_BYTES);
}
