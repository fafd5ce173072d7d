/**
 * A second process that follows a session's next turn through its own Temporal client and prints
 * each event as a JSON line (then `{"type":"end"}`): the client iterator as another host would use it.
 *
 *   node test/support/follow-session.js <address> <task queue> <workflow id>
 *
 * Plain JavaScript, so that it starts at once: it loads the compiled client from dist/ when that is
 * fresh, else the TypeScript sources through ts-node (as bin/loopwright.js does).
 */
'use strict';
const path = require('node:path');
const { distIsFresh } = require('../../bin/freshness');

const ROOT = path.resolve(__dirname, '../..');
let base = path.join(ROOT, 'dist');
if (!distIsFresh()) {
  require('ts-node').register({ transpileOnly: true, project: path.join(ROOT, 'tsconfig.json') });
  base = ROOT;
}
const { Client, Connection } = require('@temporalio/client');
const { LoopwrightClient } = require(path.join(base, 'client', 'session-client'));

async function main() {
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

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
