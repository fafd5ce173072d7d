/**
 * The session `record-history.ts --cache-compaction` records: a session on Anthropic's Messages API
 * (the tests' fake, caching by its documented semantics) with a small window, whose turns read a
 * 6 KB file, so its view is compacted before a call and once on demand while the provider holds the
 * prompt in its cache: compaction records that count the cached prompt tokens they cost, behind
 * `patched('loopwright-compaction-cache-cost')`.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { LoopwrightClient } from '../client/session-client';
import { say, useTools, type FakeAnthropic } from '../test/support/fake-anthropic';

export async function recordCacheCompactionSession(loopwright: LoopwrightClient, anthropic: FakeAnthropic, bundle: string, name: string, window: number): Promise<void> {
  fs.writeFileSync(path.join(bundle, 'notes.md'), 'Every answer is written down and read back to the user.\n'.repeat(110));
  const session = await loopwright.start({
    bundlePath: bundle,
    agentId: 'facilitator',
    workflowId: `fixture-${name}`,
    model: 'anthropic:claude-fixture',
    context: { window, keepRecent: 1, summarize: false },
    budget: { prices: { '*': { input: 3, output: 15 } } },
  });
  for (let turn = 1; turn <= 4; turn++) {
    anthropic.enqueue(useTools([{ name: 'read_file', input: { file_path: '{bundle-root}/notes.md' } }]), say(`Read them (${turn}).`));
    const result = await session.send(`Read the notes (${turn}).`);
    if (!result.success) throw new Error(`turn ${turn} failed: ${result.error}`);
  }
  const state = await session.state();
  if (!state.context?.lastCompaction || state.context.lastCompaction.cachedTokensLost === undefined) throw new Error(`no compaction counted its cache cost: ${JSON.stringify(state.context)}`);
  const onDemand = await session.compact();
  anthropic.enqueue(say('Done.'));
  await session.send('Thanks.');
  console.log(`compactions: ${state.context.compactions} before the one on demand; last ${JSON.stringify(state.context.lastCompaction)}; on demand ${JSON.stringify(onDemand)}`);
  await session.end();
  await session.result();
}
