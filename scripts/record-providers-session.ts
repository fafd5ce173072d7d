/**
 * The session `record-history.ts --providers` records: a session on Anthropic's Messages API (the
 * fake Messages server of the tests) whose calls read from its prompt cache and are priced with it,
 * a streamed reply, a turn whose model is gone there and falls back to a Chat Completions model, and
 * a turn back on Anthropic: a history with both providers' replies, cached usage and cache pricing.
 */
import type { LoopwrightClient } from '../client/session-client';
import { type FakeOpenAI, text } from '../fake-model/server';
import { apiError, say, useTools, type FakeAnthropic } from '../test/support/fake-anthropic';

export async function recordProvidersSession(loopwright: LoopwrightClient, fake: FakeOpenAI, anthropic: FakeAnthropic, bundle: string, name: string): Promise<void> {
  anthropic.enqueue(
    useTools([{ name: 'read_file', input: { file_path: '{bundle-root}/config.yaml' } }], { text: 'Reading the config.' }),
    say('The config names the output folder.'),
    apiError(404, 'not_found_error', 'model: claude-fixture'),
    say('Back on Messages.'),
  );
  fake.enqueue(text('Answered through Chat Completions.'));
  await runFallbackSession(loopwright, { bundle, name, model: 'anthropic:claude-fixture', fallback: 'openai:loopwright-fake-model' });
}

/**
 * Three streamed, priced turns of a session on `model` whose second turn falls back to `fallback`
 * (the fakes are scripted for it); checks that a call read from the prompt cache, then ends it.
 */
export async function runFallbackSession(loopwright: LoopwrightClient, options: { bundle: string; name: string; model: string; fallback: string }): Promise<void> {
  const session = await loopwright.start({
    bundlePath: options.bundle,
    agentId: 'facilitator',
    workflowId: `fixture-${options.name}`,
    model: options.model,
    fallbackModels: [options.fallback],
    modelSettings: { stream: true },
    budget: { prices: { '*': { input: 3, output: 15 } } },
  });
  for (const message of ['What does the config say?', 'Are you there?', 'And now?']) {
    const result = await session.send(message);
    if (!result.success) throw new Error(`turn "${message}" failed: ${result.error}`);
  }
  const state = await session.state();
  if (!state.usage.cacheReadTokens) throw new Error('no call read from the prompt cache');
  await session.end();
  await session.result();
}
