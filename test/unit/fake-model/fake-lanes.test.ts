/**
 * The tests' fake-model lanes (test/support/fake-lanes.ts) through the real openai client: a request
 * is answered from the script of the lane whose folder it names and recorded there only; waits
 * count the lane's own requests; a request that names no lane, or a lane with no step left, gets a
 * 500 that says so.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI, { InternalServerError } from 'openai';
import { hang, startFakeOpenAI, text, type FakeOpenAI } from '../../../fake-model/server';
import { FakeLanes } from '../../support/fake-lanes';

let fake: FakeOpenAI;
let client: OpenAI;
let lanes: FakeLanes;

beforeEach(async () => {
  fake = await startFakeOpenAI();
  client = new OpenAI({ apiKey: 'test', baseURL: fake.baseURL, maxRetries: 0 });
  lanes = new FakeLanes(fake);
});

afterEach(async () => {
  lanes.close();
  await fake.close();
});

/** A request whose system prompt names `bundle`, as a session's does. */
function ask(bundle: string, said: string, signal?: AbortSignal) {
  const messages = [
    { role: 'system' as const, content: `Bundle root: ${bundle}` },
    { role: 'user' as const, content: said },
  ];
  return client.chat.completions.create({ model: 'gpt-test', messages }, { signal });
}

test('fake lanes: each request takes a step of the lane its prompt names, and is recorded there only', async () => {
  const a = lanes.open();
  const b = lanes.open();
  expect(a.bundle).not.toBe(b.bundle);
  expect(fs.existsSync(path.join(a.bundle, 'agents'))).toBe(true);
  a.enqueue(text('from a'));
  b.enqueue(text('from b 1'), text('from b 2'));
  b.setResponder(() => text('b responder'));
  const replies = await Promise.all([ask(b.bundle, 'one'), ask(a.bundle, 'two'), ask(b.bundle, 'three')]);
  expect(replies.map((r) => r.choices[0]!.message.content).sort()).toEqual(['from a', 'from b 1', 'from b 2']);
  expect((await ask(b.bundle, 'four')).choices[0]!.message.content).toBe('b responder');
  expect(a.requests.map((r) => r.body?.messages?.at(-1)?.content)).toEqual(['two']);
  expect(b.requests.map((r) => r.body?.messages?.at(-1)?.content).sort()).toEqual(['four', 'one', 'three']);
  expect(fake.requests).toHaveLength(4);
});

test('fake lanes: a request that names no lane, and a lane with no step left, get a 500 saying so', async () => {
  const a = lanes.open();
  await expect(ask('/nowhere/bundle', 'hello')).rejects.toThrow(/names no lane/);
  await expect(ask(a.bundle, 'hello')).rejects.toBeInstanceOf(InternalServerError);
  await expect(ask(a.bundle, 'hello')).rejects.toThrow(/no step left/);
  expect(a.requests).toHaveLength(2);
});

test("fake lanes: waits count the lane's own requests and aborts; a lane on a folder of the test's own", async () => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-lanes-test-'));
  try {
    const own = lanes.open(folder);
    const other = lanes.open();
    other.enqueue(text('other'));
    await ask(other.bundle, 'first');
    await expect(own.waitForRequests(1, 100)).rejects.toThrow(/0 of 1 requests/);
    own.enqueue(hang());
    const controller = new AbortController();
    const pending = ask(path.join(folder, 'project'), 'wait', controller.signal).catch((err: unknown) => err);
    await own.waitForRequests(1);
    controller.abort();
    const [aborted] = await own.waitForAborts(1);
    expect(aborted!.aborted).toBe(true);
    await pending;
    expect(other.requests.every((r) => !r.aborted)).toBe(true);
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
});
