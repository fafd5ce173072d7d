// A consumer worker that adds Loopwright with LoopwrightPlugin and one tool of its own: the plugin
// brings the session workflow (the worker has none of its own) and the activities; the model calls
// the consumer's tool.
// Usage: node out/plugin.js <temporal address> <model base URL> <bundle folder> <task queue>
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { z } from 'zod';
import { LoopwrightClient } from 'loopwright';
import { defineTool, LoopwrightPlugin } from 'loopwright/worker';

const shout = defineTool({
  name: 'shout',
  description: 'Says a text loudly',
  parameters: z.object({ text: z.string() }),
  access: 'read',
  target: 'text',
  run: ({ text }) => `${text.toUpperCase()}!`,
});

async function main(): Promise<void> {
  const [address, baseURL, bundlePath, taskQueue] = process.argv.slice(2);
  if (!address || !baseURL || !bundlePath || !taskQueue) throw new Error('usage: plugin <address> <baseURL> <bundle> <taskQueue>');
  const connection = await Connection.connect({ address });
  const workerConnection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection: workerConnection,
    taskQueue,
    plugins: [new LoopwrightPlugin({ tools: [shout], model: { baseURL, apiKey: 'consumer-key', defaultModel: 'consumer-model' } })],
  });
  const outcome = await worker.runUntil(async () => {
    const session = await new LoopwrightClient(new Client({ connection }), taskQueue).start({ bundlePath, agentId: 'facilitator' });
    const turn = await session.send('call shout');
    const tools = (await session.state()).tools?.map((t) => `${t.name}:${t.kind}`);
    await session.end();
    return { status: turn.status, reply: turn.response, tools };
  });
  process.stdout.write(`${JSON.stringify(outcome)}\n`);
  await workerConnection.close();
  await connection.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
