/**
 * Run the fake model server on its own, for trying things by hand:
 *
 *   npx ts-node --transpile-only fake-model/cli.ts [--port 8787] [--model name]
 *
 * It prints its base URL (use it as OPENAI_BASE_URL) and answers every chat-completion request with
 * a text that echoes the last user message. Ctrl-C stops it.
 */
import { startFakeOpenAI, text, type Responder } from './server';

/** Parsed command-line options. */
interface CliOptions {
  port: number;
  model?: string;
}

function parseArgs(argv: string[]): CliOptions {
  const options: CliOptions = { port: 0 };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = argv[i + 1];
    if (arg === '--port' && value !== undefined) {
      const port = Number(value);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0..65535, got "${value}"`);
      options.port = port;
      i += 1;
    } else if (arg === '--model' && value !== undefined) {
      options.model = value;
      i += 1;
    } else {
      throw new Error(`unknown argument "${arg}" (usage: cli.ts [--port N] [--model NAME])`);
    }
  }
  return options;
}

/** Reply to each request with the last user message, so a manual session shows the round trip. */
const echo: Responder = (request) => {
  const users = (request.body?.messages ?? []).filter((m) => m.role === 'user');
  const last = users[users.length - 1];
  return text(`(fake model) You said: ${last ? last.content : '(nothing)'}`);
};

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const fake = await startFakeOpenAI({ port: options.port, model: options.model, responder: echo });
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
