/**
 * The session `record-history.ts --cache-cold` records: a session on Anthropic's Messages API (the
 * tests' fake, caching by its documented semantics) whose turns read a 2 KB file until its view is
 * close to the compaction threshold, then waits past the prompt cache's lifetime (five minutes of
 * real time: the dev server's clock is the workflow's) and starts a turn: the view is compacted
 * before that turn's first call, at no cached tokens, behind
 * `patched('loopwright-cache-cold-compaction')`.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { LoopwrightClient } from '../client/session-client';
import { DEFAULT_COMPACT_AT } from '../common/defaults';
import { CACHE_LIFETIME_MS } from '../workflows/context/context-manager';
import { say, useTools, type FakeAnthropic } from '../test/support/fake-anthropic';

const WINDOW = 16_384;

export async function recordCacheColdSession(loopwright: LoopwrightClient, anthropic: FakeAnthropic, bundle: string, name: string): Promise<void> {
  fs.writeFileSync(path.join(bundle, 'notes.md'), 'Every answer is written down and read back.\n'.repeat(45));
  const session = await loopwright.start({
    bundlePath: bundle,
    agentId: 'facilitator',
    workflowId: `fixture-${name}`,
    model: 'anthropic:claude-fixture',
    context: { window: WINDOW, keepRecent: 1, summarize: false },
    budget: { prices: { '*': { input: 3, output: 15 } } },
  });
  // The threshold with the default output limit (a quarter of the window held back), and the point past which a cold cache compacts early.
  const threshold = Math.floor(DEFAULT_COMPACT_AT * (WINDOW - WINDOW / 4));
  const early = threshold - WINDOW * 0.1;
  let turn = 0;
  for (;;) {
    turn += 1;
    anthropic.enqueue(useTools([{ name: 'read_file', input: { file_path: '{bundle-root}/notes.md' } }]), say(`Read them (${turn}).`));
    const result = await session.send(`Read the notes (${turn}).`);
    if (!result.success) throw new Error(`turn ${turn} failed: ${result.error}`);
    if (result.compactions?.length) throw new Error(`turn ${turn} compacted before the cache went cold: ${JSON.stringify(result.compactions)}`);
    const prompt = (await session.state()).context?.promptTokens ?? 0;
    if (prompt > early + 100) {
      if (prompt > threshold - 200) throw new Error(`the view (${prompt} tokens) is too close to the threshold (${threshold})`);
      console.log(`after turn ${turn}: ${prompt} estimated prompt tokens, threshold ${threshold}; waiting past the cache's lifetime`);
      break;
    }
    if (turn > 40) throw new Error(`the view did not grow past ${early} tokens`);
  }
  await new Promise((resolve) => setTimeout(resolve, CACHE_LIFETIME_MS + 10_000));
  anthropic.enqueue(useTools([{ name: 'read_file', input: { file_path: '{bundle-root}/notes.md' } }]), say('Read them again.'));
  const cold = await session.send('Read the notes once more.');
  const record = cold.compactions?.[0];
  if (!cold.success || record?.reason !== 'cache_cold' || record.cachedTokensLost !== 0) throw new Error(`no compaction at the cold cache: ${JSON.stringify(cold)}`);
  console.log(`compaction at the cold cache: ${JSON.stringify(record)}`);
  await session.end();
  await session.result();
}
