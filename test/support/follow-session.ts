/**
 * A second process that follows a session's next turn through its own Temporal client and prints
 * each event as a JSON line (then `{"type":"end"}`): the client iterator as another host would use it.
 *
 *   ts-node --transpile-only test/support/follow-session.ts <address> <task queue> <workflow id>
 */
import { Client, Connection } from '@temporalio/client';
import { LoopwrightClient } from '../../client/session-client';

async function main(): Promise<void> {
  const [address, taskQueue, workflowId] = process.argv.slice(2);
  if (!address || !taskQueue || !workflowId) throw new Error('usage: follow-session <address> <task queue> <workflow id>');
  const connection = await Connection.connect({ address });
  const session = new LoopwrightClient(new Client({ connection }), taskQueue).session(workflowId);
  const turn = (await session.state()).turn + 1;
  process.stdout.write(`${JSON.stringify({ type: 'ready', turn })}\n`);
  for await (const event of session.follow({ turn, intervalMs: 25 })) process.stdout.write(`${JSON.stringify({ ...event, at: Date.now() })}\n`);
  process.stdout.write(`${JSON.stringify({ type: 'end' })}\n`);
  await connection.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
