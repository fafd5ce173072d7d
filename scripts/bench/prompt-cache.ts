/**
 * What Anthropic's prompt cache saves a session (issue 33): a 25-call tool loop that reads a 12 KB
 * file per call, sent through the Messages provider (the real `@anthropic-ai/sdk` client) to the
 * tests' fake Messages server, which caches by the documented semantics; once with the
 * breakpoints the model call places, once without. Two compactions prune old tool results to
 * stubs (as the session's first compaction stage does) after calls 10 and 20: the call after each
 * writes the cache anew, and its cost over the call before is the compaction's cache cost. Prices
 * are Anthropic's shares: cached reads a tenth of the input price, writes 1.25 times. No Temporal
 * server: the calls run in a mock activity environment.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { resolveModelConfig } from '../../activities/model/model-config';
import { ModelProviders } from '../../activities/model/providers';
import type { ChatMessage, TokenUsage } from '../../common/messages';
import { callCost } from '../../common/model-cost';
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, useTools } from '../../test/support/fake-anthropic';
import { bytes, textTable } from './text-table';

/** Calls of the loop, the read per call, and the calls after which a compaction prunes. */
const CALLS = 25;
const READ_BYTES = 12_000;
const COMPACT_AFTER = [10, 20];
/** Tool results a compaction keeps whole (the latest). */
const KEEP_RECENT = 3;
/** An input price per million tokens (the shares matter, not the currency). */
const PRICE = { input: 3, output: 15 };

/** The cache part's figures. */
export interface PromptCacheFigures {
  calls: number;
  readBytes: number;
  /** Share of prompt tokens read from the cache, from the third call on. */
  cachedShareAfterSecond: number;
  /** Prompt tokens of every call, and those read from and written to the cache. */
  promptTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Cost of the session with breakpoints, and of the same calls without. */
  cost: number;
  costWithoutBreakpoints: number;
  /** Per compaction: the call after it, what it cost, and what the call before cost. */
  compactions: { afterCall: number; cost: number; costBefore: number; cacheWriteTokens: number }[];
}

/** Run the loop twice against a fresh fake, with and without breakpoints. */
export async function measurePromptCache(options: { progress: (line: string) => void }): Promise<PromptCacheFigures> {
  const fake = await startFakeAnthropic();
  try {
    const config = resolveModelConfig({ anthropicApiKey: FAKE_ANTHROPIC_KEY, anthropicBaseURL: fake.baseURL }, {});
    const { provider } = new ModelProviders(config, { chat: { completions: { create: () => Promise.reject(new Error('not used')) } } }).resolve('anthropic:claude-bench');
    const env = new MockActivityEnvironment();
    const run = async (cache: boolean): Promise<TokenUsage[]> => {
      fake.reset();
      const transcript: ChatMessage[] = [
        { role: 'system', content: `You are a facilitator. ${'Follow the workflow step by step and write down every answer. '.repeat(40)}` },
        { role: 'user', content: `Read the ${CALLS} chapters, one per call.` },
      ];
      const usages: TokenUsage[] = [];
      for (let call = 1; call <= CALLS; call++) {
        fake.enqueue(useTools([{ name: 'read_file', input: { file_path: `chapter-${call}.md` } }]));
        const prepared = provider.prepare({ model: 'claude-bench', messages: transcript, tools: [], label: 'bench', cache });
        const { reply } = (await env.run(() => prepared.send())) as Awaited<ReturnType<typeof prepared.send>>;
        usages.push(reply.usage!);
        transcript.push(reply.message, { role: 'tool', tool_call_id: reply.message.tool_calls![0]!.id, content: chapter(call) });
        if (COMPACT_AFTER.includes(call)) prune(transcript);
      }
      return usages;
    };
    options.progress(`prompt cache: ${CALLS} calls with breakpoints`);
    const cached = await run(true);
    options.progress(`prompt cache: the same ${CALLS} calls without`);
    const plain = await run(false);
    const sum = (list: TokenUsage[], pick: (u: TokenUsage) => number) => list.reduce((n, u) => n + pick(u), 0);
    const later = cached.slice(2);
    return {
      calls: CALLS,
      readBytes: READ_BYTES,
      cachedShareAfterSecond: sum(later, (u) => u.cacheReadTokens ?? 0) / sum(later, (u) => u.promptTokens),
      promptTokens: sum(cached, (u) => u.promptTokens),
      cacheReadTokens: sum(cached, (u) => u.cacheReadTokens ?? 0),
      cacheWriteTokens: sum(cached, (u) => u.cacheWriteTokens ?? 0),
      cost: sum(cached, (u) => callCost(u, PRICE)),
      costWithoutBreakpoints: sum(plain, (u) => callCost(u, PRICE)),
      compactions: COMPACT_AFTER.map((after) => ({
        afterCall: after,
        cost: callCost(cached[after]!, PRICE),
        costBefore: callCost(cached[after - 1]!, PRICE),
        cacheWriteTokens: cached[after]!.cacheWriteTokens ?? 0,
      })),
    };
  } finally {
    await fake.close();
  }
}

/** The figures as the report prints them. */
export function formatPromptCache(f: PromptCacheFigures): string {
  const money = (value: number) => value.toFixed(4);
  return [
    `Prompt cache: a ${f.calls}-call tool loop reading ${bytes(f.readBytes)} bytes per call through the Anthropic Messages provider, against the tests' caching fake` +
      ` (reads priced at a tenth of input, writes at 1.25 times; input ${PRICE.input}, output ${PRICE.output} per million); no Temporal server`,
    textTable(
      ['measure', 'value'],
      [
        ['prompt tokens, all calls', bytes(f.promptTokens)],
        ['read from the cache / written to it', `${bytes(f.cacheReadTokens)} / ${bytes(f.cacheWriteTokens)}`],
        ['share read from the cache, calls 3 on', `${(100 * f.cachedShareAfterSecond).toFixed(1)} %`],
        ['cost with breakpoints / without', `${money(f.cost)} / ${money(f.costWithoutBreakpoints)} (${((100 * f.cost) / f.costWithoutBreakpoints).toFixed(1)} %)`],
        ...f.compactions.map((c) => [
          `call after the compaction after call ${c.afterCall}`,
          `${money(c.cost)} against ${money(c.costBefore)} the call before (${bytes(c.cacheWriteTokens)} tokens written anew)`,
        ]),
      ],
    ),
  ].join('\n');
}

/** Old tool results become stubs, all but the latest KEEP_RECENT (the first stage of compaction). */
function prune(transcript: ChatMessage[]): void {
  const tools = transcript.map((m, i) => (m.role === 'tool' ? i : -1)).filter((i) => i >= 0);
  for (const index of tools.slice(0, -KEEP_RECENT)) {
    const message = transcript[index]!;
    if (message.role === 'tool') transcript[index] = { ...message, content: '[pruned: an earlier read]' };
  }
}

/** About READ_BYTES of text that differ from chapter to chapter. */
function chapter(n: number): string {
  return Array.from({ length: 240 }, (_, i) => `Chapter ${n}, line ${i}: the street's tool library lends drills and ladders.`)
    .join('\n')
    .slice(0, READ_BYTES);
}
