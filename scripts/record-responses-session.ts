/**
 * The session `record-history.ts --responses` records: a session on OpenAI's Responses API (the
 * fake Responses server of the tests) with a function call after reasoning (the reasoning item
 * carried back through the transcript), streamed replies read partly from the prompt cache and
 * priced with it, a turn whose model is gone there and falls back to an Anthropic model, and a turn
 * back on Responses: a history with both providers' replies, reasoning items and cached usage.
 */
import type { LoopwrightClient } from '../client/session-client';
import { say as anthropicSay, type FakeAnthropic } from '../test/support/fake-anthropic';
import { apiError, callTools, say, type FakeResponses } from '../test/support/fake-responses';
import { runFallbackSession } from './record-providers-session';

export async function recordResponsesSession(loopwright: LoopwrightClient, responses: FakeResponses, anthropic: FakeAnthropic, bundle: string, name: string): Promise<void> {
  responses.enqueue(
    callTools([{ name: 'read_file', input: { file_path: '{bundle-root}/config.yaml' } }], { reasoning: 'The config names the output folder; read it first.' }),
    say('The config names the output folder.'),
    apiError(404, 'invalid_request_error', 'The model `gpt-fixture` does not exist.', { code: 'model_not_found' }),
    say('Back on Responses.'),
  );
  anthropic.enqueue(anthropicSay('Answered through Messages.'));
  await runFallbackSession(loopwright, { bundle, name, model: 'responses:gpt-fixture', fallback: 'anthropic:claude-fixture' });
}
