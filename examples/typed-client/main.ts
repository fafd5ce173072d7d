/**
 * A typed client: start a session of the example bundle's agent, send it a message, approve the
 * file it asks to write, read its reply, and end the session. It needs a Temporal server and a
 * worker (see README.md); it runs no worker of its own.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { DEFAULT_TASK_QUEUE, LoopwrightClient } from 'loopwright';

async function main(): Promise<void> {
  // The Temporal server as the `temporal` CLI finds it: TEMPORAL_ADDRESS, a temporal.toml profile, else localhost:7233.
  const config = loadClientConnectConfig();
  const connection = await Connection.connect(config.connectionOptions);
  const client = new Client({ connection, namespace: config.namespace });
  // The task queue the worker polls (`loopwright worker` polls LOOPWRIGHT_TASK_QUEUE, default "loopwright").
  const loopwright = new LoopwrightClient(client, process.env.LOOPWRIGHT_TASK_QUEUE ?? DEFAULT_TASK_QUEUE);

  // The example bundle ships inside the package; its agent writes documents into the project's docs/ folder.
  const bundlePath = path.join(path.dirname(require.resolve('loopwright/package.json')), 'bundles', 'requirements-facilitator');
  const projectRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'loopwright-typed-client-'));

  // Writes wait for a yes (the client's default policy is "none": nothing waits).
  const session = await loopwright.start({ bundlePath, agentId: 'facilitator', projectRoot, approval: { policy: 'writes' } });
  console.log(`Session ${session.workflowId} started`);

  // Follow the turn from the moment it starts: tool calls as they run, and approvals to answer.
  const watching = (async () => {
    for await (const event of session.follow()) {
      if (event.type === 'tool_started') console.log(`  tool ${event.name}${event.detail ? ` ${event.detail}` : ''}`);
      if (event.type === 'approval_needed') {
        const { callId, tool, path: target } = event.approval;
        console.log(`  ${tool} waits for approval (${target ?? 'no path'}): approving`);
        await session.approve(callId);
      }
    }
  })();

  // `send` runs one turn and resolves with its result once the agent has answered.
  const turn = await session.send('*intake We want a tool library for our street.');
  await watching;
  console.log(`Turn ${turn.status} after ${turn.iterations} model call(s), ${turn.usage.totalTokens} tokens`);
  console.log(`Reply: ${turn.response ?? '(none)'}`);

  // The turn's own messages: here, the tool results show what was written.
  for (const message of await session.turnMessages(turn)) {
    if (message.role === 'tool') console.log(`  result: ${message.content.slice(0, 120)}`);
  }
  const docs = path.join(projectRoot, 'docs');
  if (fs.existsSync(docs)) console.log(`Documents: ${fs.readdirSync(docs).join(', ')} in ${docs}`);

  // End the session; `result()` resolves once the workflow has completed.
  await session.end();
  const ended = await session.result();
  console.log(`Session ended after ${ended.turns} turn(s)`);
  await connection.close();
  if (!turn.success) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
