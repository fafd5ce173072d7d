/**
 * One reply that reads many large files at once, on the real dev server: twenty 240 KB reads (4.7 MB
 * of results). Run as local activities, their results would all travel in one workflow task
 * completion, past the 4 MB the server takes, and the session failed; the first three now run
 * locally and the rest as normal activities, and the turn completes with every result in call order.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ToolMessage } from '../../common/messages';
import { text, toolCalls } from '../../fake-model/server';
import { copyExampleBundle, type SessionHarness, startSessionHarness } from '../support/session-harness';

jest.setTimeout(120_000);

let h: SessionHarness;
let copy: ReturnType<typeof copyExampleBundle>;

beforeAll(async () => {
  h = await startSessionHarness();
  copy = copyExampleBundle('lw-many-reads-');
}, 120_000);

afterAll(async () => {
  await h?.close();
  copy?.cleanup();
});

test('twenty 240 KB reads in one reply complete, every result in call order', async () => {
  const { loopwright } = await h.startWorker();
  fs.writeFileSync(path.join(copy.bundle, 'big.md'), `${'a line of a big file, read twenty times\n'.repeat(6200)}`);
  const calls = Array.from({ length: 20 }, (_, i) => ({ id: `r${i}`, name: 'read_file', arguments: { file_path: '{bundle-root}/big.md' } }));
  h.fake.enqueue(toolCalls(calls), text('Read them all.'));
  const session = await loopwright.start({ bundlePath: copy.bundle, agentId: 'facilitator', context: { window: 50_000_000 } });
  const turn = await session.send('read the big file twenty times');
  expect(turn).toMatchObject({ success: true, status: 'completed', response: 'Read them all.' });
  const results = (await session.turnMessages(turn)).filter((m): m is ToolMessage => m.role === 'tool');
  expect(results.map((m) => m.tool_call_id)).toEqual(calls.map((c) => c.id));
  expect(results.every((m) => (JSON.parse(m.content) as { success: boolean }).success)).toBe(true);
  await session.end();
});
