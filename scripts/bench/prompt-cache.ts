/**
 * What Anthropic's prompt cache saves a session (issue 33): a 25-call tool loop that reads a 12 KB
 * file per call, sent through the Messages provider (the real `@anthropic-ai/sdk` client) to the
 * tests' fake Messages server, which caches by the documented semantics; once with the
 * breakpoints the model call places, once without. Two compactions prune old tool results to
 * stubs (as the session's first compaction stage does) after calls 10 and 20: the call after each
 * writes the cache anew, and its cost over the call before is the compaction's cache cost. Prices
 * are Anthropic's shares: cached reads a tenth of the input price, writes 1.25 times. The same loop
 * goes once more through the OpenAI Responses provider (the real `openai` client) to the tests' fake
 * Responses server, whose cache is automatic (a prefix of 1,024 tokens or more, in steps of 128):
 * its cost is set against the same calls priced as if nothing were cached. No Temporal server: the
 * calls run in a mock activity environment.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { resolveModelConfig } from '../../activities/model/model-config';
import { ModelProviders } from '../../activities/model/providers';
import type { ChatMessage, TokenUsage } from '../../common/messages';
import { callCost } from '../../common/model-cost';
import type { ModelProvider } from '../../activities/model/provider';
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, useTools } from '../../test/support/fake-anthropic';
import { callTools, FAKE_RESPONSES_KEY, startFakeResponses } from '../../test/support/fake-responses';
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
  compactions: { afterCall: number; cost: number; costBefore: number; cacheWriteTokens: number; cachedTokensLost: number }[];
  /** The same loop through the Responses provider (automatic caching, no writes counted). */
  responses?: ResponsesCacheFigures;
}

/** The cache part's figures for the Responses provider. */
export interface ResponsesCacheFigures {
  cachedShareAfterSecond: number;
  promptTokens: number;
  cacheReadTokens: number;
  /** Cost with cached reads at their price, and of the same calls with every prompt token at the input price. */
  cost: number;
  costWithoutCache: number;
  /** Per compaction: the call after it, what it cost, and what the call before cost. */
  compactions: { afterCall: number; cost: number; costBefore: number; cachedTokensLost: number }[];
}

const noChat = { chat: { completions: { create: () => Promise.reject(new Error('not used')) } } };

/** The loop: CALLS calls, each answered by a read whose result joins the transcript; `reply` scripts the fake's answer. */
async function runLoop(provider: ModelProvider, model: string, reply: (call: number) => void, cache: boolean): Promise<TokenUsage[]> {
  const transcript: ChatMessage[] = [
    { role: 'system', content: `You are a facilitator. ${'Follow the workflow step by step and write down every answer. '.repeat(40)}` },
    { role: 'user', content: `Read the ${CALLS} chapters, one per call.` },
  ];
  const usages: TokenUsage[] = [];
  for (let call = 1; call <= CALLS; call++) {
    reply(call);
    const prepared = provider.prepare({ model, messages: transcript, tools: [], label: 'bench', cache });
    // An environment per call: the clients add a listener to its cancellation signal per request.
    const { reply: answer } = (await new MockActivityEnvironment().run(() => prepared.send())) as Awaited<ReturnType<typeof prepared.send>>;
    usages.push(answer.usage!);
    transcript.push(answer.message, { role: 'tool', tool_call_id: answer.message.tool_calls![0]!.id, content: chapter(call) });
    if (COMPACT_AFTER.includes(call)) prune(transcript);
  }
  return usages;
}

const sum = (list: TokenUsage[], pick: (u: TokenUsage) => number) => list.reduce((n, u) => n + pick(u), 0);

/** What a compaction cost the cache, as the provider counted: what it held at the call before, less what the call after read. */
const cachedTokensLost = (before: TokenUsage, after: TokenUsage): number => Math.max(0, (before.cacheReadTokens ?? 0) + (before.cacheWriteTokens ?? 0) - (after.cacheReadTokens ?? 0));

/** The loop through the Responses provider against a fresh Responses fake. */
async function measureResponses(): Promise<ResponsesCacheFigures> {
  const fake = await startFakeResponses();
  try {
    const config = resolveModelConfig({ apiKey: FAKE_RESPONSES_KEY, baseURL: fake.baseURL }, {});
    const { provider, model } = new ModelProviders(config, noChat).resolve('responses:gpt-bench');
    const usages = await runLoop(provider, model, (call) => fake.enqueue(callTools([{ name: 'read_file', input: { file_path: `chapter-${call}.md` } }])), true);
    const later = usages.slice(2);
    return {
      cachedShareAfterSecond: sum(later, (u) => u.cacheReadTokens ?? 0) / sum(later, (u) => u.promptTokens),
      promptTokens: sum(usages, (u) => u.promptTokens),
      cacheReadTokens: sum(usages, (u) => u.cacheReadTokens ?? 0),
      cost: sum(usages, (u) => callCost(u, PRICE)),
      costWithoutCache: sum(usages, (u) => callCost(u, PRICE, false)),
      compactions: COMPACT_AFTER.map((after) => ({
        afterCall: after,
        cost: callCost(usages[after]!, PRICE),
        costBefore: callCost(usages[after - 1]!, PRICE),
        cachedTokensLost: cachedTokensLost(usages[after - 1]!, usages[after]!),
      })),
    };
  } finally {
    await fake.close();
  }
}

/** Run the loop twice against a fresh fake, with and without breakpoints. */
export async function measurePromptCache(options: { progress: (line: string) => void }): Promise<PromptCacheFigures> {
  const fake = await startFakeAnthropic();
  try {
    const config = resolveModelConfig({ anthropicApiKey: FAKE_ANTHROPIC_KEY, anthropicBaseURL: fake.baseURL }, {});
    const { provider, model } = new ModelProviders(config, noChat).resolve('anthropic:claude-bench');
    const run = (cache: boolean): Promise<TokenUsage[]> => {
      fake.reset();
      return runLoop(provider, model, (call) => fake.enqueue(useTools([{ name: 'read_file', input: { file_path: `chapter-${call}.md` } }])), cache);
    };
    options.progress(`prompt cache: ${CALLS} calls with breakpoints`);
    const cached = await run(true);
    options.progress(`prompt cache: the same ${CALLS} calls without`);
    const plain = await run(false);
    options.progress(`prompt cache: the same ${CALLS} calls through the Responses provider`);
    const responses = await measureResponses();
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
        cachedTokensLost: cachedTokensLost(cached[after - 1]!, cached[after]!),
      })),
      responses,
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
          `${money(c.cost)} against ${money(c.costBefore)} the call before (${bytes(c.cachedTokensLost)} cached tokens lost, ${bytes(c.cacheWriteTokens)} written anew)`,
        ]),
      ],
    ),
    ...(f.responses ? ['', formatResponses(f.responses)] : []),
  ].join('\n');
}

/** The Responses provider's figures, beside Anthropic's. */
function formatResponses(r: ResponsesCacheFigures): string {
  const money = (value: number) => value.toFixed(4);
  return [
    `The same loop through the OpenAI Responses provider, against the tests' fake with automatic caching (cached reads priced at a tenth of input; no breakpoints, so set against the calls priced uncached)`,
    textTable(
      ['measure', 'value'],
      [
        ['prompt tokens, all calls', bytes(r.promptTokens)],
        ['read from the cache', bytes(r.cacheReadTokens)],
        ['share read from the cache, calls 3 on', `${(100 * r.cachedShareAfterSecond).toFixed(1)} %`],
        ['cost with the cache / priced uncached', `${money(r.cost)} / ${money(r.costWithoutCache)} (${((100 * r.cost) / r.costWithoutCache).toFixed(1)} %)`],
        ...r.compactions.map((c) => [
          `call after the compaction after call ${c.afterCall}`,
          `${money(c.cost)} against ${money(c.costBefore)} the call before (${bytes(c.cachedTokensLost)} cached tokens lost)`,
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
