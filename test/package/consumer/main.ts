// A consumer program: its own worker registers Loopwright's workflow and activities beside its
// own, then it starts a session through Loopwright's exported client and runs its own workflow.
// Usage: node out/main.js <temporal address> <model base URL> <bundle folder> <task queue>
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { LoopwrightClient, SESSION_WORKFLOW, type TurnResult } from 'loopwright';
import { createActivities } from 'loopwright/worker';

async function main(): Promise<void> {
  const [address, baseURL, bundlePath, taskQueue] = process.argv.slice(2);
  if (!address || !baseURL || !bundlePath || !taskQueue) throw new Error('usage: main <address> <baseURL> <bundle> <taskQueue>');
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  const workerConnection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection: workerConnection,
    taskQueue,
    workflowsPath: require.resolve('./workflows'),
    activities: {
      ...createActivities({ client, model: { baseURL, apiKey: 'consumer-key', defaultModel: 'consumer-model' } }),
      shout: async (text: string) => text.toUpperCase(),
    },
  });
  const outcome = await worker.runUntil(async () => {
    const greeting = await client.workflow.execute('greet', { taskQueue, workflowId: `greet-${taskQueue}`, args: ['loopwright'] });
    const loopwright = new LoopwrightClient(client, taskQueue);
    const session = await loopwright.start({ bundlePath, agentId: 'facilitator' });
    const turn: TurnResult = await session.send('hello from the consumer');
    await session.end();
    const described = await client.workflow.getHandle(session.workflowId).describe();
    return { greeting, workflowType: described.type, expectedType: SESSION_WORKFLOW, status: turn.status, reply: turn.response };
  });
  process.stdout.write(`${JSON.stringify(outcome)}\n`);
  await workerConnection.close();
  await connection.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
