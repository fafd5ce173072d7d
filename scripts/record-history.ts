/**
 * Records a replay fixture: runs a scripted session (tool calls in parallel, a bad tool call, an
 * interrupt, a second turn, end) on a fresh dev server and writes its history as JSON to
 * test/fixtures/histories/<name>.json. Fixtures are never edited afterwards: when workflow code
 * changes, old fixtures must still replay (use `patched`), and a new fixture is recorded beside them.
 *
 *   npx ts-node --transpile-only scripts/record-history.ts <name>
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { findTemporalCli } from '../client/server/find-temporal';
import { hang, text, toolCalls } from './fake-openai/server';
import { copyExampleBundle, startSessionHarness } from '../test/support/session-harness';

async function main(): Promise<void> {
  const name = process.argv[2];
  if (!name || !/^[a-z0-9-]+$/.test(name)) throw new Error('usage: record-history.ts <name> (lower-case letters, digits, dashes)');
  const file = path.resolve(__dirname, '../test/fixtures/histories', `${name}.json`);
  if (fs.existsSync(file)) throw new Error(`${file} exists; fixtures are never overwritten`);

  const h = await startSessionHarness();
  const bundle = copyExampleBundle();
  try {
    const { loopwright } = await h.startWorker();
    h.fake.enqueue(
      toolCalls([
        { id: 'call_1', name: 'execute_workflow', arguments: { workflow_path: '{bundle-root}/workflows/intake/workflow.yaml' } },
        { id: 'call_2', name: 'read_file', arguments: { file_path: '{bundle-root}/config.yaml' } },
        { id: 'call_3', name: 'no_such_tool', arguments: {} },
      ]),
      toolCalls([{ id: 'call_4', name: 'save_output', arguments: { file_path: '{output_folder}/fixture.md', content: '# Fixture\n' } }]),
      text('Saved.'),
      hang(),
      text('Resumed.'),
    );
    const session = await loopwright.start({ bundlePath: bundle.bundle, agentId: 'facilitator', workflowId: `fixture-${name}` });
    const first = await session.send('*intake');
    if (!first.success) throw new Error(`first turn failed: ${first.error}`);
    const second = session.send('take your time');
    await h.fake.waitForRequests(4, 20_000);
    await session.interrupt('recording an interrupt');
    if ((await second).status !== 'interrupted') throw new Error('the second turn was not interrupted');
    const third = await session.send('go on');
    if (!third.success) throw new Error(`third turn failed: ${third.error}`);
    await session.end();
    await session.result();
    // The Temporal CLI writes the standard JSON history format that every SDK's replayer reads.
    const cli = await findTemporalCli({ install: true });
    const json = execFileSync(cli.path, ['workflow', 'show', '--address', h.server.address, '--workflow-id', session.workflowId, '--output', 'json'], { encoding: 'utf8' });
    const events = (JSON.parse(json) as { events: unknown[] }).events.length;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, json.endsWith('\n') ? json : `${json}\n`);
    console.log(`wrote ${file} (${events} events)`);
  } finally {
    await h.close();
    bundle.cleanup();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
