/**
 * Delegation between agents on the real dev server: an agent of a two-agent bundle hands a task to
 * the other (`delegate_task`), which runs as a child session workflow; its reply is the call's
 * result and its usage is the parent's. Depth and fan-out limits refuse with a clear result, an
 * interrupt cancels a running child, a child's approval is decided through the parent, and a real
 * BMAD orchestrator (the corpus's `core/bmad-master`) delegates to `bmm/pm`.
 */
import { promises as fsp } from 'node:fs';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChatMessage } from '../../common/messages';
import type { LoopwrightClient, SessionHandle } from '../../client/session-client';
import { inspectBundle } from '../../bundle/inspect';
import { formatInspection } from '../../cli/commands/inspect';
import { hang, text, toolCalls } from '../../fake-model/server';
import { CORPUS, corpusPresent } from '../support/corpus';
import { writeDelegationBundle } from '../support/delegation-bundle';
import { type SessionHarness } from '../support/session-harness';
import { type FakeLane, type FakeLanes, type LaneHarness, startLaneHarness } from '../support/fake-lanes';

jest.setTimeout(90_000);

let h: SessionHarness;
let suite: LaneHarness | undefined;
/** Each test's own script and requests on the shared fake model (the tests run side by side). */
let lanes: FakeLanes;
let loopwright: LoopwrightClient;
/** The folders the tests made (their lanes' projects), removed at the end. */
const roots: string[] = [];

beforeAll(async () => {
  suite = await startLaneHarness();
  ({ h, lanes, loopwright } = suite);
}, 120_000);

afterAll(async () => {
  await suite?.close();
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

/** A test's own project: the two-agent bundle in `root/team`, and a lane on `root` (its sessions' prompts name the bundle's files). */
interface Team {
  m: FakeLane;
  root: string;
  bundle: string;
}

function openTeam(): Team {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'lw-delegation-')));
  roots.push(root);
  const bundle = writeDelegationBundle(root);
  return { m: lanes.open(root), root, bundle };
}

function start(team: Team, extra: Partial<Parameters<LoopwrightClient['start']>[0]> = {}): Promise<SessionHandle> {
  return loopwright.start({ bundlePath: team.bundle, agentId: 'lead', projectRoot: team.root, outputRoots: [path.join(team.root, 'docs')], ...extra });
}

const delegate = (id: string, agent: string, task: string) => ({ id, name: 'delegate_task', arguments: { agent, task } });

/** The tool results of a turn's messages, by call id. */
function toolResults(messages: ChatMessage[]): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const m of messages) if (m.role === 'tool') out[m.tool_call_id] = JSON.parse(String(m.content)) as Record<string, unknown>;
  return out;
}

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read().catch(() => undefined as T);
    if (value !== undefined && ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms (last: ${JSON.stringify(value)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test.concurrent('an agent delegates to the other agent of its bundle and gets its reply as the tool result, usage included', async () => {
  const team = openTeam();
  const { m } = team;
  m.enqueue(
    toolCalls([delegate('d1', 'pm', 'Write three requirements for a login page.')]),
    text('1. Email and password. 2. Reset link. 3. Lockout after 5 tries.'),
    text('The PM wrote the requirements.'),
  );
  const session = await start(team);
  const state = await until(
    () => session.state(),
    (s) => s.tools !== undefined,
  );
  expect(state.tools!.map((t) => t.name)).toContain('delegate_task');
  const result = await session.send('Plan the login page');
  expect(result).toMatchObject({ success: true, status: 'completed', response: 'The PM wrote the requirements.', delegations: 1, toolCalls: 1 });

  const parentId = session.workflow.workflowId;
  const childId = `${parentId}-t1-i1-d1`;
  const delegated = toolResults(await session.turnMessages(result)).d1!;
  expect(delegated).toMatchObject({ success: true, agent: 'pm', status: 'completed', response: '1. Email and password. 2. Reset link. 3. Lockout after 5 tries.', workflowId: childId });
  // The child's usage is in the parent's turn: two calls of its own and one of the child's.
  const childUsage = delegated.usage as { totalTokens: number };
  expect(childUsage.totalTokens).toBeGreaterThan(0);
  expect(m.requests).toHaveLength(3);
  const child = loopwright.client.workflow.getHandle(childId);
  const childResult = (await child.result()) as { usage: { totalTokens: number } };
  expect(childResult.usage.totalTokens).toBe(childUsage.totalTokens);
  expect(result.usage.totalTokens).toBeGreaterThan(childUsage.totalTokens);
  expect((await session.state()).usage.totalTokens).toBe(result.usage.totalTokens);

  // The model was told whom it may call; the child got the task as its first message, with its own prompt.
  const tools = (m.requests[0]!.body!.tools ?? []) as { function: { name: string; description: string } }[];
  expect(tools.find((t) => t.function.name === 'delegate_task')?.function.description).toContain('- pm: Pat, Product Manager');
  const childMessages = m.requests[1]!.body!.messages as { role: string; content: string }[];
  expect(childMessages.at(-1)).toEqual({ role: 'user', content: 'Write three requirements for a login page.' });
  expect(String(childMessages[0]!.content)).toContain('Writes product requirements');

  // The Web UI: the child names its parent, and the parent's history links the child.
  const description = await child.describe();
  expect(await description.staticSummary()).toBe('pm · delegated by lead · Write three requirements for a login page.');
  expect(await description.staticDetails()).toContain(`delegated by **lead** in session \`${parentId}\``);
  expect(description.parentExecution?.workflowId).toBe(parentId);
  const events = (await session.workflow.fetchHistory()).events ?? [];
  expect(events.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes).map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes!.workflowId)).toEqual([childId]);
  await session.end();
});

test.concurrent('depth and fan-out limits refuse with a result that says so, and the turn goes on', async () => {
  const team = openTeam();
  const { m } = team;
  // maxChildren 1: the second call of the same reply is refused. maxDepth 1: the child may not delegate further.
  m.enqueue(
    toolCalls([delegate('d1', 'pm', 'Task one'), delegate('d2', 'pm', 'Task two')]),
    toolCalls([delegate('c1', 'lead', 'Help me')]),
    text('PM did task one alone.'),
    text('One was done, the other refused.'),
  );
  const session = await start(team, { delegation: { maxChildren: 1, maxDepth: 1 } });
  const result = await session.send('Two tasks');
  expect(result).toMatchObject({ success: true, status: 'completed', delegations: 2 });
  const results = toolResults(await session.turnMessages(result));
  expect(results.d1).toMatchObject({ success: true, agent: 'pm', response: 'PM did task one alone.' });
  expect(results.d2).toMatchObject({ success: false, status: 'refused' });
  expect(String(results.d2!.error)).toContain('already made 1 delegations, its limit (delegation.maxChildren)');
  // The child's own call was refused for depth, in the child's transcript.
  const childRequest = m.requests[2]!.body!.messages as { role: string; content: string }[];
  const refusal = JSON.parse(childRequest.at(-1)!.content) as Record<string, unknown>;
  expect(refusal).toMatchObject({ success: false, status: 'refused' });
  expect(String(refusal.error)).toContain("past the session's limit of 1 (delegation.maxDepth)");
  // An agent that is not callable is refused too, naming those that are.
  m.enqueue(toolCalls([delegate('d3', 'nobody', 'x')]), text('ok'));
  const second = await session.send('Try nobody');
  expect(String(toolResults(await session.turnMessages(second)).d3!.error)).toBe('nobody is not an agent you may delegate to; you may call: pm');
  await session.end();
});

test.concurrent('interrupting the parent cancels a running child and the turn ends interrupted', async () => {
  const team = openTeam();
  const { m } = team;
  m.enqueue(toolCalls([delegate('d1', 'pm', 'Think for a long time')]), hang());
  const session = await start(team);
  const sent = session.send('Go');
  const state = await until(
    () => session.state(),
    (s) => s.runningTools.some((t) => t.name === 'delegate_task'),
  );
  expect(state.runningTools).toEqual([{ id: 'd1', name: 'delegate_task', detail: 'pm' }]);
  await until(
    async () => m.requests.length,
    (n) => n >= 2,
  );
  await session.interrupt();
  const result = await sent;
  expect(result.status).toBe('interrupted');
  const child = loopwright.client.workflow.getHandle(`${session.workflow.workflowId}-t1-i1-d1`);
  // The turn waited for the child to stop (ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED).
  const description = await child.describe();
  expect(['COMPLETED', 'CANCELLED']).toContain(description.status.name);
  expect(toolResults(await session.turnMessages(result)).d1).toMatchObject({ success: false, agent: 'pm', status: 'interrupted' });
  // The session goes on.
  m.enqueue(text('Still here.'));
  expect(await session.send('Hello?')).toMatchObject({ status: 'completed', response: 'Still here.' });
  await session.end();
});

test.concurrent("a child's call waiting for approval shows in the parent's state and is approved through the parent", async () => {
  const team = openTeam();
  const { m } = team;
  m.enqueue(
    toolCalls([delegate('d1', 'pm', 'Save the requirements')]),
    toolCalls([{ id: 's1', name: 'save_output', arguments: { file_path: '{output_folder}/req.md', content: '# Requirements' } }]),
    text('Saved docs/req.md.'),
    text('The PM saved them.'),
  );
  const session = await start(team, { approval: { policy: 'writes' } });
  const sent = session.send('Get the requirements saved');
  const state = await until(
    () => session.state(),
    (s) => s.pendingApprovals.length > 0,
  );
  expect(state.status).toBe('waiting_for_approval');
  expect(state.pendingApprovals).toEqual([
    expect.objectContaining({ callId: 'd1/s1', tool: 'save_output', delegate: { agent: 'pm', workflowId: `${session.workflow.workflowId}-t1-i1-d1`, callId: 's1' } }),
  ]);
  expect(await session.approve('d1/s1')).toEqual(['d1/s1']);
  const result = await sent;
  expect(result).toMatchObject({ status: 'completed', response: 'The PM saved them.' });
  expect(fs.readFileSync(path.join(team.root, 'docs/req.md'), 'utf8')).toBe('# Requirements');
  expect((await session.state()).pendingApprovals).toEqual([]);
  await session.end();
});

test.concurrent("a grandchild's call is denied through the top session: the decision travels down two levels", async () => {
  const team = openTeam();
  const { m } = team;
  m.enqueue(
    toolCalls([delegate('d1', 'pm', 'Ask the lead to save a note')]),
    toolCalls([delegate('c1', 'lead', 'Save a note')]),
    toolCalls([{ id: 's1', name: 'save_output', arguments: { file_path: '{output_folder}/note.md', content: 'note' } }]),
    text('The user declined the save.'),
    text('Lead could not save.'),
    text('Nothing was saved.'),
  );
  const session = await start(team, { approval: { policy: 'writes' } });
  const sent = session.send('Save a note through the team');
  const state = await until(
    () => session.state(),
    (s) => s.pendingApprovals.length > 0,
  );
  expect(state.pendingApprovals).toEqual([
    expect.objectContaining({ callId: 'd1/c1/s1', tool: 'save_output', delegate: { agent: 'lead', workflowId: `${session.workflow.workflowId}-t1-i1-d1`, callId: 'c1/s1' } }),
  ]);
  expect(await session.deny('d1/c1/s1', 'not now')).toEqual(['d1/c1/s1']);
  expect(await sent).toMatchObject({ status: 'completed', response: 'Nothing was saved.' });
  // The grandchild's model saw the denial with the reason.
  const seen = m.requests[3]!.body!.messages as { role: string; content: string }[];
  expect(JSON.parse(seen.at(-1)!.content)).toMatchObject({ success: false, declined: true, error: 'The user declined this call: not now' });
  expect(fs.existsSync(path.join(team.root, 'docs/note.md'))).toBe(false);
  await session.end();
});

test.concurrent('a worker stopped while a child waits loses nothing: another worker replays both and the child is started once', async () => {
  const team = openTeam();
  const { m } = team;
  m.enqueue(
    toolCalls([delegate('d1', 'pm', 'Save the plan')]),
    toolCalls([{ id: 's1', name: 'save_output', arguments: { file_path: '{output_folder}/plan.md', content: '# Plan' } }]),
    text('Saved docs/plan.md.'),
    text('The plan is saved.'),
  );
  const first = await h.startWorker();
  const session = await first.loopwright.start({ bundlePath: team.bundle, agentId: 'lead', projectRoot: team.root, outputRoots: [path.join(team.root, 'docs')], approval: { policy: 'writes' } });
  const sent = session.send('Save the plan');
  await until(
    () => session.state(),
    (s) => s.pendingApprovals.some((p) => p.callId === 'd1/s1'),
  );
  // No worker: the parent waits on its child, the child on the user, both only in history.
  await first.stop();
  const second = await h.startWorker({ taskQueue: first.taskQueue });
  const resumed = second.loopwright.session(session.workflow.workflowId);
  expect((await resumed.state()).pendingApprovals.map((p) => p.callId)).toEqual(['d1/s1']);
  await resumed.approve();
  expect(await sent).toMatchObject({ status: 'completed', response: 'The plan is saved.', delegations: 1 });
  expect(fs.readFileSync(path.join(team.root, 'docs/plan.md'), 'utf8')).toBe('# Plan');
  const events = (await session.workflow.fetchHistory()).events ?? [];
  expect(events.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)).toHaveLength(1);
  expect(m.requests).toHaveLength(4);
  await resumed.end();
});

test.concurrent('manifest delegates: lists narrow whom an agent may call; an agent with no one to call is not offered the tool', async () => {
  const manifestRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-delegation-manifest-'));
  try {
    const team = writeDelegationBundle(manifestRoot, { lead: ['pm'], pm: [] });
    const lead = await inspectBundle(team, 'lead');
    expect(lead.delegates).toEqual([{ id: 'pm', name: 'Pat', title: 'Product Manager' }]);
    expect(formatInspection(lead)).toContain('May delegate to (1, with delegate_task):\n  pm  Pat, Product Manager');
    expect((await inspectBundle(team, 'pm')).delegates).toBeUndefined();
    const pm = await loopwright.start({ bundlePath: team, agentId: 'pm', projectRoot: manifestRoot });
    const tools = (
      await until(
        () => pm.state(),
        (s) => s.tools !== undefined,
      )
    ).tools!.map((t) => t.name);
    expect(tools).not.toContain('delegate_task');
    await pm.end();
  } finally {
    fs.rmSync(manifestRoot, { recursive: true, force: true });
  }
});

const ALPHA5 = path.join(CORPUS, 'v6.0.0-alpha.5');
const corpus = corpusPresent('delegation: bmad-master', ['v6.0.0-alpha.5/bmad/core/agents/bmad-master.md', 'v6.0.0-alpha.5/bmad/bmm/agents/pm.md']);
(corpus ? describe : describe.skip)('a real BMAD orchestrator', () => {
  test.concurrent('inspect shows whom core/bmad-master may call, and a session of it delegates to bmm/pm and gets its reply', async () => {
    // A copy (the corpus is read only) in a folder of the test's own, its lane's; made here, as a
    // side-by-side test starts before its describe block's beforeAll would run.
    const project = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'lw-delegation-bmad-')));
    roots.push(project);
    await fsp.cp(path.join(ALPHA5, 'bmad'), path.join(project, 'bmad'), { recursive: true });
    const m = lanes.open(project);
    const inspection = await inspectBundle(path.join(project, 'bmad'), 'core/bmad-master');
    const ids = inspection.delegates!.map((d) => d.id);
    expect(ids).toEqual(expect.arrayContaining(['bmm/pm', 'bmm/analyst', 'bmm/architect', 'bmm/dev']));
    expect(ids).not.toContain('core/bmad-master');
    expect(inspection.delegates!.find((d) => d.id === 'bmm/pm')).toEqual({ id: 'bmm/pm', name: 'John', title: 'Product Manager' });
    expect(formatInspection(inspection)).toMatch(/May delegate to \(\d+, with delegate_task\):\n(.|\n)*bmm\/pm +John, Product Manager/);

    m.enqueue(
      toolCalls([delegate('d1', 'bmm/pm', 'Give me the three main risks of a PRD for a todo app.')]),
      text('Scope creep, vague users, no metrics.'),
      text('John says: scope creep, vague users, no metrics.'),
    );
    const session = await loopwright.start({ bundlePath: path.join(project, 'bmad'), agentId: 'core/bmad-master' });
    const result = await session.send('Ask the PM about PRD risks');
    expect(result).toMatchObject({ status: 'completed', delegations: 1 });
    expect(toolResults(await session.turnMessages(result)).d1).toMatchObject({ success: true, agent: 'bmm/pm', status: 'completed', response: 'Scope creep, vague users, no metrics.' });
    const childPrompt = String((m.requests[1]!.body!.messages as { content: string }[])[0]!.content);
    expect(childPrompt).toContain('John');
    await session.end();
  });
});
