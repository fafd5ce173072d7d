/**
 * The JSON API of `loopwright serve` over real HTTP, on a real dev server with a real worker and the
 * fake model: health, a bundle's agents and skills, starting sessions (settings checked by the
 * settings table, internal ones refused), state with its Web UI link, sending a message (202 at once,
 * the result later), transcript pages, approve and deny, interrupt, extend, budget, rewind, branch,
 * end, the session list, batches and schedules, and errors in one shape.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { delay, text, toolCalls } from '../../fake-model/server';
import { api, startServe, useServeSuite } from './serve-harness';

jest.setTimeout(120_000);

const suite = useServeSuite();
const SAVE = { name: 'save_output', arguments: { file_path: '{output_folder}/approved.md', content: '# Approved\n' }, id: 'call_save' };

/** Start a session and wait until its agent is ready. */
async function startSession(settings: Record<string, unknown> = {}): Promise<string> {
  const created = await api(suite.serve.base, 'POST', '/api/sessions', { bundlePath: suite.bundle, agentId: 'facilitator', ...settings });
  expect(created.status).toBe(201);
  const id = String(created.body.id);
  await until(id, (s) => s.status === 'waiting_for_user', 'ready');
  return id;
}

/** Wait until the session's state passes `test`. */
async function until(id: string, test: (state: Record<string, unknown>) => boolean, what: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 400; i++) {
    const { body } = await api(suite.serve.base, 'GET', `/api/sessions/${id}`);
    if (test(body)) return body;
    await sleep(50);
  }
  throw new Error(`the session never got to ${what}`);
}

/** The result of a turn, once it ended. */
async function turnResult(id: string, turn: number): Promise<Record<string, unknown>> {
  for (let i = 0; i < 400; i++) {
    const answer = await api(suite.serve.base, 'GET', `/api/sessions/${id}/turns/${turn}`);
    if (answer.status === 200) return answer.body;
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ running: true });
    await sleep(50);
  }
  throw new Error(`turn ${turn} never ended`);
}

test('api: health says where Temporal is; agents lists the agents with their menus, and skills', async () => {
  const { base } = suite.serve;
  const health = await api(base, 'GET', '/api/health');
  expect(health.status).toBe(200);
  expect(health.body).toEqual({ ok: true, temporal: { address: suite.h.server.address, namespace: 'default' }, taskQueue: suite.loopwright.taskQueue, scriptedModel: false });
  const agents = await api(base, 'GET', `/api/agents?bundlePath=${encodeURIComponent(suite.bundle)}`);
  expect(agents.status).toBe(200);
  expect(agents.body).toMatchObject({ bundlePath: suite.bundle, skills: [] });
  const facilitator = (agents.body.agents as { id: string; menu: { cmd: string }[] }[]).find((a) => a.id === 'facilitator')!;
  expect(facilitator).toMatchObject({ name: expect.any(String), title: expect.any(String) });
  expect(facilitator.menu.map((m) => m.cmd)).toEqual(expect.arrayContaining(['*intake']));
  // A relative path, a folder that is no bundle: 400 naming the problem.
  expect((await api(base, 'GET', '/api/agents?bundlePath=bundles/x')).body.error).toMatchObject({ type: 'BadRequest', field: 'bundlePath' });
  const missing = await api(base, 'GET', `/api/agents?bundlePath=${encodeURIComponent('/nonexistent/bundle')}`);
  expect(missing.status).toBe(400);
  expect(missing.body.error!.type).toMatch(/Bundle|Error/);
});

test("api: the example bundle's sessions work in the example project, never in the bundle's own folder", async () => {
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-serve-example-'));
  const other = await startServe(suite.h, suite.loopwright, { exampleBundle: suite.bundle, exampleProject: path.join(project, 'demo') });
  try {
    const agents = await api(other.base, 'GET', `/api/agents?bundlePath=${encodeURIComponent(suite.bundle)}`);
    expect(agents.body).toMatchObject({ bundlePath: suite.bundle, projectRoot: path.join(fs.realpathSync(project), 'demo') });
    expect(fs.statSync(path.join(project, 'demo')).isDirectory()).toBe(true);
  } finally {
    await other.close();
    fs.rmSync(project, { recursive: true, force: true });
  }
});

test('api: a session started with settings the table checks; a bad or internal setting is a 400 naming the field', async () => {
  const { base } = suite.serve;
  const bad = await api(base, 'POST', '/api/sessions', { bundlePath: suite.bundle, agentId: 'facilitator', maxIterations: 'many' });
  expect(bad.status).toBe(400);
  expect(bad.body.error).toMatchObject({ type: 'BadRequest', field: 'maxIterations' });
  const internal = await api(base, 'POST', '/api/sessions', { bundlePath: suite.bundle, agentId: 'facilitator', continued: {} });
  expect(internal.body.error).toMatchObject({ type: 'BadRequest', field: 'continued' });
  const unknown = await api(base, 'POST', '/api/sessions', { bundlePath: suite.bundle, agentId: 'facilitator', maxIteration: 3 });
  expect(unknown.body.error).toMatchObject({ type: 'BadRequest', field: 'maxIteration' });
  const missing = await api(base, 'POST', '/api/sessions', { bundlePath: suite.bundle });
  expect(missing.body.error).toMatchObject({ type: 'BadRequest', field: 'agentId' });
  const relative = await api(base, 'POST', '/api/sessions', { bundlePath: 'bundles/requirements-facilitator', agentId: 'facilitator' });
  expect(relative.body.error).toMatchObject({ field: 'bundlePath' });

  const id = await startSession({ maxIterations: 7, workflowId: `api-settings-${Date.now()}` });
  expect(id).toMatch(/^api-settings-/);
  const state = (await api(base, 'GET', `/api/sessions/${id}`)).body;
  expect(state).toMatchObject({ id, maxIterations: 7, turn: 0, webUiUrl: `http://localhost:8233/namespaces/default/workflows/${id}` });
  // The same id again: 409.
  const again = await api(base, 'POST', '/api/sessions', { bundlePath: suite.bundle, agentId: 'facilitator', workflowId: id });
  expect(again.status).toBe(409);
  await api(base, 'POST', `/api/sessions/${id}/end`, {});
});

test('api: a message is taken at once (202 with its turn); the result comes when the turn ends; a second message while it runs is refused (409 LoopwrightBusy)', async () => {
  const { base } = suite.serve;
  const id = await startSession();
  // The first answer waits until the test lets it go: the message is taken while the model is held.
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  let calls = 0;
  suite.h.fake.setResponder(async () => (++calls === 1 ? held.then(() => text('first answer')) : text('second answer')));
  try {
    const sent = await api(base, 'POST', `/api/sessions/${id}/messages`, { text: 'hello' });
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({ turn: 1 });
    const busy = await api(base, 'POST', `/api/sessions/${id}/messages`, { text: 'again' });
    expect(busy.status).toBe(409);
    expect(busy.body.error!.type).toBe('LoopwrightBusy');
    expect((await api(base, 'GET', `/api/sessions/${id}/turns/1`)).status).toBe(202);
    release();
    expect(await turnResult(id, 1)).toMatchObject({ turn: 1, success: true, status: 'completed', response: 'first answer' });
    expect((await api(base, 'POST', `/api/sessions/${id}/messages`, { text: 'next' })).body).toEqual({ turn: 2 });
    expect(await turnResult(id, 2)).toMatchObject({ turn: 2, response: 'second answer' });
  } finally {
    release();
    suite.h.fake.setResponder(undefined);
  }
  expect((await api(base, 'GET', `/api/sessions/${id}/turns/3`)).status).toBe(404);
  // Empty and malformed messages.
  expect((await api(base, 'POST', `/api/sessions/${id}/messages`, { text: '   ' })).body.error).toMatchObject({ type: 'BadRequest', field: 'text' });
  expect((await api(base, 'POST', `/api/sessions/${id}/messages`, { words: 'x' })).status).toBe(400);

  // Transcript pages: the last 50 by default, [from, to) when asked.
  const page = await api(base, 'GET', `/api/sessions/${id}/messages`);
  const count = (await api(base, 'GET', `/api/sessions/${id}`)).body.messageCount as number;
  expect(page.body).toMatchObject({ from: Math.max(0, count - 50), to: count });
  const last = page.body.messages as { role: string; content: string }[];
  expect(last.at(-1)).toEqual({ role: 'assistant', content: 'second answer' });
  const part = await api(base, 'GET', `/api/sessions/${id}/messages?from=${count - 2}&to=${count}`);
  expect(part.body.messages).toEqual(last.slice(-2));
  expect((await api(base, 'GET', `/api/sessions/${id}/messages?from=${count + 5}&to=${count}`)).status).toBe(400);
  await api(base, 'POST', `/api/sessions/${id}/end`, {});
});

test('api: approve and deny name the calls; interrupt ends a running turn; extend and budget answer or refuse', async () => {
  const { base } = suite.serve;
  const id = await startSession({ approval: { policy: 'writes' }, budget: { sessionTokens: 1_000_000 } });
  suite.h.fake.enqueue(toolCalls([SAVE]), text('saved'));
  await api(base, 'POST', `/api/sessions/${id}/messages`, { text: 'save it' });
  const waiting = await until(id, (s) => s.status === 'waiting_for_approval', 'an approval');
  expect(waiting.pendingApprovals).toEqual([expect.objectContaining({ callId: 'call_save', tool: 'save_output' })]);
  expect((await api(base, 'POST', `/api/sessions/${id}/approve`, { callId: 'call_save' })).body).toEqual({ approved: ['call_save'] });
  expect(await turnResult(id, 1)).toMatchObject({ response: 'saved' });
  // Nothing waits now: the session refuses (409 with its failure type).
  const none = await api(base, 'POST', `/api/sessions/${id}/approve`, {});
  expect(none.status).toBeGreaterThanOrEqual(400);
  expect(none.body.error!.type).toMatch(/^Loopwright/);

  suite.h.fake.enqueue(toolCalls([{ ...SAVE, id: 'call_two' }]), text('not saved'));
  await api(base, 'POST', `/api/sessions/${id}/messages`, { text: 'save again' });
  await until(id, (s) => s.status === 'waiting_for_approval', 'the second approval');
  expect((await api(base, 'POST', `/api/sessions/${id}/deny`, { reason: 'not now' })).body).toEqual({ denied: ['call_two'] });
  expect(await turnResult(id, 2)).toMatchObject({ response: 'not saved' });

  // Extend: no turn runs, refused.
  const extend = await api(base, 'POST', `/api/sessions/${id}/extend`, { iterations: 5 });
  expect(extend.status).toBeGreaterThanOrEqual(400);
  const budget = await api(base, 'POST', `/api/sessions/${id}/budget`, { sessionTokens: 1000 });
  expect(budget.status).toBe(200);
  expect(budget.body).toMatchObject({ sessionTokens: expect.objectContaining({ limit: 1_001_000 }) });

  suite.h.fake.enqueue(delay(30_000, text('never')));
  await api(base, 'POST', `/api/sessions/${id}/messages`, { text: 'take your time' });
  await until(id, (s) => s.status === 'thinking', 'thinking');
  expect((await api(base, 'POST', `/api/sessions/${id}/extend`, { iterations: 5 })).body).toEqual({ maxIterations: expect.any(Number) });
  expect((await api(base, 'POST', `/api/sessions/${id}/interrupt`, { reason: 'stop' })).body).toEqual({ ok: true });
  expect(await turnResult(id, 3)).toMatchObject({ status: 'interrupted' });
  await api(base, 'POST', `/api/sessions/${id}/end`, {});
});

test('api: rewind and branch; the list finds sessions; end completes one; batches and schedules read', async () => {
  const { base } = suite.serve;
  const id = await startSession();
  suite.h.fake.enqueue(text('one'), text('two'));
  await api(base, 'POST', `/api/sessions/${id}/messages`, { text: 'first' });
  await turnResult(id, 1);
  await api(base, 'POST', `/api/sessions/${id}/messages`, { text: 'second' });
  await turnResult(id, 2);
  const branch = await api(base, 'POST', `/api/sessions/${id}/branch`, { turns: 1 });
  expect(branch.status).toBe(201);
  const branched = String(branch.body.id);
  const copy = await until(branched, (s) => s.status === 'waiting_for_user', 'the branch ready');
  expect(copy.turn).toBe(1);
  const rewound = await api(base, 'POST', `/api/sessions/${id}/rewind`, { turn: 1 });
  expect(rewound.status).toBe(200);
  expect(rewound.body.runId).toEqual(expect.any(String));
  await until(id, (s) => s.turn === 1 && s.status === 'waiting_for_user', 'the rewound session');

  let listed: { workflowId: string }[] = [];
  for (let i = 0; i < 100 && !listed.some((s) => s.workflowId === id); i++) {
    listed = (await api(base, 'GET', '/api/sessions?agent=facilitator&limit=50')).body.sessions as { workflowId: string }[];
    await sleep(100);
  }
  expect(listed.map((s) => s.workflowId)).toContain(id);
  expect((await api(base, 'GET', '/api/sessions?limit=0')).status).toBe(400);

  expect((await api(base, 'POST', `/api/sessions/${branched}/end`, {})).body).toEqual({ ok: true });
  await until(branched, (s) => s.status === 'completed', 'completed');
  await api(base, 'POST', `/api/sessions/${id}/end`, {});

  expect((await api(base, 'GET', '/api/batches')).body).toEqual({ batches: expect.any(Array) });
  expect((await api(base, 'GET', '/api/schedules')).body).toEqual({ schedules: expect.any(Array) });
  expect((await api(base, 'GET', '/api/batches/no-such-batch')).status).toBe(404);
});

test('api: errors have one shape: an unknown session, an unknown route, a body that is not JSON', async () => {
  const { base } = suite.serve;
  const unknown = await api(base, 'GET', '/api/sessions/no-such-session');
  expect(unknown.status).toBe(404);
  expect(unknown.body).toEqual({ error: { type: 'NotFound', message: expect.stringContaining('no-such-session') } });
  expect((await api(base, 'POST', '/api/sessions/no-such-session/interrupt', {})).status).toBe(404);
  const route = await api(base, 'GET', '/api/nothing-here');
  expect(route.status).toBe(404);
  expect(route.body.error!.type).toBe('NotFound');
  const broken = await api(base, 'POST', '/api/sessions', '{"bundlePath": ');
  expect(broken.status).toBe(400);
  expect(broken.body.error!.type).toBe('BadRequest');
});
