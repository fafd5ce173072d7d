/**
 * Run the fake model server on its own, for trying things by hand:
 *
 *   npx ts-node --transpile-only fake-model/cli.ts [--port 8787] [--model name]
 *     [--context-window N] [--max-output-tokens N] [--context-error-style openai|llamacpp] [--llama-props]
 *
 * It prints its base URL (use it as OPENAI_BASE_URL) and answers every chat-completion request with
 * a text that echoes the last user message. The limit options give it a context window and an
 * output cap as a real server has (prompts over the window get a 400, long replies are cut).
 * Ctrl-C stops it.
 */
import { parseArgs } from './cli-args';
import { startFakeOpenAI, text, type Responder } from './server';

/** Reply to each request with the last user message, so a manual session shows the round trip. */
const echo: Responder = (request) => {
  const users = (request.body?.messages ?? []).filter((m) => m.role === 'user');
  const last = users[users.length - 1];
  return text(`(fake model) You said: ${last ? last.content : '(nothing)'}`);
};

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const fake = await startFakeOpenAI({ ...options, responder: echo });
  console.log(`fake OpenAI-compatible server listening: OPENAI_BASE_URL=${fake.baseURL}`);
  fake.events.on('request', (r) => console.log(`request #${r.index + 1}: ${r.body?.messages?.length ?? 0} messages`));
  const stop = (): void => {
    fake.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
