/**
 * Delegation's decisions (workflows/delegation/*) with a faked `executeChild` and faked external
 * signals: a `delegate_task` call starts one child session with a workflow id made from the turn,
 * iteration and call, the task as its one-shot first message, the parent's settings (but its own
 * agent, depth, budget and the window the parent knows) and a Web UI summary; the child's reply and
 * usage are the call's result; calls are refused (with the exact texts the model reads) for a
 * missing argument, an agent it may not call, depth, fan-out and a used-up budget; a child that fails
 * gives its partial turn, and an interrupt of the turn is rethrown. Approvals travel by signals: a
 * child's pending calls show in the parent as `<delegate call>/<child's call>`, decisions go down to
 * the child, a finished child's entries go, and a child tells its own parent. Sessions recorded
 * before delegation (the patch marker) get none of it.
 */
jest.mock('@temporalio/workflow', () => jest.requireActual('../../support/workflow-fakes').fakeWorkflowModule());

import { RetryState } from '@temporalio/common';
import { ApplicationFailure, CancelledFailure, ChildWorkflowCancellationType, ChildWorkflowFailure, ParentClosePolicy } from '@temporalio/workflow';
import { SESSION_WORKFLOW } from '../../../common/contract/session-definitions';
import type { DelegateAgent } from '../../../common/delegation-types';
import type { TokenUsage } from '../../../common/messages';
import type { BudgetState, PendingApproval, SessionInput, SessionState } from '../../../common/session-types';
import type { HashedTranscript } from '../../../common/transcript';
import { DelegationApprovals } from '../../../workflows/delegation/delegation-approvals';
import { delegationApprovals } from '../../../workflows/session/session-features';
import { delegationExtension, Delegator } from '../../../workflows/delegation/delegation';
import type { SessionRuntime } from '../../../workflows/session/session-runtime';
import { assistant, system, toolCall, transcriptOf, usage, user, workflowFake } from '../../support/workflow-fakes';

beforeEach(() => {
  workflowFake.reset();
  workflowFake.info = { workflowId: 'parent' };
});

const DELEGATES: DelegateAgent[] = [
  { id: 'pm', name: 'Pat', title: 'Product Manager' },
  { id: 'bmm/architect', name: 'Winston', title: 'Architect' },
];
const BASE: SessionInput = { bundlePath: '/bundle', agentId: 'lead', model: 'main-model', projectRoot: '/p' };

const delegate = (id: string, agent: unknown, task: unknown) => toolCall(id, 'delegate_task', { agent, task });

/** A parent session's state as the approvals see it. */
const sessionState = (): SessionState => ({ status: 'executing_tool', pendingApprovals: [] }) as unknown as SessionState;

/** A delegator of session `input`; `used` collects the usage it records, `refreshed` counts detail refreshes. */
function parent(input: Partial<SessionInput> = {}, budgets?: BudgetState, window?: number) {
  const state = sessionState();
  const counters = { refreshed: 0 };
  const full = { ...BASE, ...input };
  const approvals = new DelegationApprovals(full, { state, refreshDetails: () => void (counters.refreshed += 1) });
  const delegator = new Delegator({ input: full, delegates: DELEGATES, budgets: () => budgets, contextWindow: () => window, approvals });
  const used: TokenUsage[] = [];
  return { delegator, approvals, state, counters, used };
}

/** Where a call is made: turn 1, iteration 1, the turn starting at message 1. */
function at(transcript: HashedTranscript, used: TokenUsage[], iteration = 1) {
  return { turn: 1, iteration, transcript, firstIndex: 1, recordUsage: (u: TokenUsage) => void used.push(u) };
}

/** A transcript whose latest reply makes `calls`. */
const replying = (...calls: ReturnType<typeof delegate>[]) => transcriptOf(system('sys'), user('Plan the login page'), assistant(null, calls));

describe('Delegator', () => {
  test("delegation: a call starts one child session with the task, the parent's settings and a derived id; its reply and usage are the result", async () => {
    const call = delegate('d1', 'pm', '  Write three requirements for a login page. ');
    const { delegator, used } = parent({ firstMessage: 'hello', idleTimeout: '1 hour', approval: { policy: 'writes' }, budget: undefined }, undefined, 8000);
    workflowFake.scriptChildren({ turns: 1, endedBy: 'one_shot', usage: usage(300, 50), lastTurn: { success: true, status: 'completed', response: '1. Email and password.' } });
    const result = await delegator.run(call, at(replying(call), used));
    expect(result).toEqual({ success: true, agent: 'pm', workflowId: 'parent-t1-i1-d1', response: '1. Email and password.', status: 'completed', usage: usage(300, 50) });
    expect(used).toEqual([usage(300, 50)]);

    expect(workflowFake.children).toHaveLength(1);
    const { workflowType, options } = workflowFake.children[0]!;
    expect(workflowType).toBe(SESSION_WORKFLOW);
    expect(options).toMatchObject({
      workflowId: 'parent-t1-i1-d1',
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      staticSummary: 'pm · delegated by lead · Write three requirements for a login page.',
    });
    expect(options.staticDetails).toBe('Agent **pm** (Pat) of bundle `/bundle` (one-shot), delegated by **lead** in session `parent`, turn 1, call d1; depth 1 of 2');
    // The parent's settings, but not its first message, idle timeout or agent; the window it knows.
    expect((options.args as SessionInput[])[0]).toEqual({
      bundlePath: '/bundle',
      agentId: 'pm',
      model: 'main-model',
      projectRoot: '/p',
      approval: { policy: 'writes' },
      firstMessage: 'Write three requirements for a login page.',
      oneShot: true,
      delegatedBy: { workflowId: 'parent', callId: 'd1', agent: 'lead', depth: 1 },
      context: { window: 8000 },
    });
    expect(workflowFake.metric('loopwright_delegations').map((m) => m.attributes)).toEqual([{ status: 'completed' }]);
    expect(workflowFake.logged('info')).toEqual(['Delegating']);
  });

  test('delegation: the agent is found by id, in any case, or by its id without the module', async () => {
    const asks = ['pm', 'PM', 'architect', 'BMM/Architect'];
    const { delegator, used } = parent({ context: { window: 4096 } }, undefined, 9000);
    for (const _ of asks) workflowFake.scriptChildren({ turns: 1, endedBy: 'one_shot', usage: usage(1, 1), lastTurn: { success: true, status: 'completed', response: 'ok' } });
    const calls = asks.map((agent, i) => delegate(`d${i}`, agent, 'task'));
    for (const call of calls) await delegator.run(call, at(replying(...calls), used));
    const children = workflowFake.children.map((c) => (c.options.args as SessionInput[])[0]!);
    expect(children.map((c) => c.agentId)).toEqual(['pm', 'pm', 'bmm/architect', 'bmm/architect']);
    // The session named a window: the child keeps the session's setting.
    expect(children[0]!.context).toEqual({ window: 4096 });
  });

  test('delegation: refusals say why, start no child, and count as refused', async () => {
    const { delegator, used } = parent();
    const refusal = async (call: ReturnType<typeof delegate>, transcript = replying(call), d = delegator) => {
      const result = await d.run(call, at(transcript, used));
      expect(result).toMatchObject({ success: false, response: null, status: 'refused' });
      return [result.agent, result.error];
    };
    expect(await refusal(delegate('d1', '', 'task'))).toEqual(['', 'delegate_task needs both agent (an agent id) and task (the task, complete)']);
    expect(await refusal(delegate('d2', 'pm', '   '))).toEqual(['pm', 'delegate_task needs both agent (an agent id) and task (the task, complete)']);
    expect(await refusal(delegate('d3', 42, 'task'))).toEqual(['', 'delegate_task needs both agent (an agent id) and task (the task, complete)']);
    expect(await refusal(delegate('d4', 'nobody', 'x'))).toEqual(['nobody', 'nobody is not an agent you may delegate to; you may call: pm, bmm/architect']);

    const deep = parent({ delegation: { maxDepth: 1 }, delegatedBy: { workflowId: 'top', callId: 'c0', agent: 'pm', depth: 1 } }).delegator;
    expect(await refusal(delegate('d5', 'pm', 'x'), undefined, deep)).toEqual([
      'pm',
      "Delegation refused: pm would run at depth 2, past the session's limit of 1 (delegation.maxDepth); do this task yourself",
    ]);

    const spent = parent({ budget: { turnTokens: 1000 } }, { turnTokens: { used: 1000, limit: 1000 }, sessionTokens: { used: 5000 }, cost: { used: 0 } }).delegator;
    expect(await refusal(delegate('d6', 'pm', 'x'), undefined, spent)).toEqual(['pm', 'Delegation refused: the token budget is used up']);

    expect(workflowFake.children).toEqual([]);
    expect(workflowFake.metric('loopwright_delegations').map((m) => m.attributes.status)).toEqual(Array(6).fill('refused'));
  });

  test("delegation: past maxChildren in one turn the next calls are refused; the turn's earlier ones count", async () => {
    const { delegator, used } = parent({ delegation: { maxChildren: 2 } });
    const calls = [delegate('d1', 'pm', 'one'), delegate('d2', 'pm', 'two')];
    const transcript = replying(...calls);
    transcript.push({ role: 'tool', tool_call_id: 'd1', content: '{}' }, { role: 'tool', tool_call_id: 'd2', content: '{}' }, assistant(null, [delegate('d3', 'pm', 'three')]));
    workflowFake.scriptChildren({ turns: 1, endedBy: 'one_shot', usage: usage(1, 1) });
    // The second of the turn is allowed; the third is past the limit.
    expect(await delegator.run(calls[1]!, at(transcript, used))).toMatchObject({ success: true, status: 'completed', response: null });
    const third = await delegator.run(delegate('d3', 'pm', 'three'), at(transcript, used, 2));
    expect(third.error).toBe('Delegation refused: this turn already made 2 delegations, its limit (delegation.maxChildren); do the rest yourself or finish the turn');
    expect(delegator.turnCount(transcript, 1, transcript.length)).toEqual({ delegations: 3 });
    expect(delegator.turnCount(transcript, 0, 2)).toEqual({});
  });

  test("delegation: the child gets what is left of the parent's budgets", async () => {
    const budget = { turnTokens: 10_000, sessionTokens: 50_000, sessionCost: 5, prices: { '*': { input: 1, output: 2 } }, warnAt: 0.9 };
    const now: BudgetState = { turnTokens: { used: 4000, limit: 10_000 }, sessionTokens: { used: 20_000, limit: 50_000 }, cost: { used: 1, limit: 5 } };
    const { delegator, used } = parent({ budget }, now);
    workflowFake.scriptChildren({ turns: 1, endedBy: 'one_shot', usage: usage(1, 1) });
    const call = delegate('d1', 'pm', 'x');
    await delegator.run(call, at(replying(call), used));
    expect((workflowFake.children[0]!.options.args as SessionInput[])[0]!.budget).toEqual({ prices: budget.prices, warnAt: 0.9, turnTokens: 6000, sessionTokens: 6000, sessionCost: 4 });
  });

  test('delegation: a child that fails gives its partial turn and usage; the turn goes on', async () => {
    const { delegator, used } = parent();
    const partial = { status: 'max_iterations', response: 'half of it', usage: usage(70, 7) };
    const cause = ApplicationFailure.create({ type: 'LoopwrightTurnFailed', message: 'Agent execution exceeded maximum iterations (5)', details: [partial] });
    workflowFake.scriptChildren(new ChildWorkflowFailure('default', { workflowId: 'parent-t1-i1-d1', runId: 'r' }, SESSION_WORKFLOW, RetryState.NON_RETRYABLE_FAILURE, cause));
    const call = delegate('d1', 'pm', 'x');
    expect(await delegator.run(call, at(replying(call), used))).toEqual({
      success: false,
      agent: 'pm',
      workflowId: 'parent-t1-i1-d1',
      response: 'half of it',
      status: 'max_iterations',
      usage: usage(70, 7),
      error: 'pm did not complete: Agent execution exceeded maximum iterations (5)',
    });
    expect(used).toEqual([usage(70, 7)]);
    expect(workflowFake.logged('warn')).toEqual(['Delegated session did not complete']);
  });

  test('delegation: an interrupt of the turn is rethrown; a child cancelled on its own is an interrupted result', async () => {
    const cancelled = () => new ChildWorkflowFailure('default', { workflowId: 'c', runId: 'r' }, SESSION_WORKFLOW, RetryState.CANCEL_REQUESTED, new CancelledFailure('cancelled'));
    const { delegator, used, state } = parent();
    const call = delegate('d1', 'pm', 'x');
    workflowFake.scriptChildren(cancelled(), cancelled());
    workflowFake.scopeCancelled = true;
    await expect(delegator.run(call, at(replying(call), used))).rejects.toBeInstanceOf(ChildWorkflowFailure);
    // The child is no longer running: its reports are ignored.
    workflowFake.deliver('childApprovals', { workflowId: 'parent-t1-i1-d1', agent: 'pm', approvals: [{ callId: 's1', tool: 'save_output', preview: 'x', since: 0 }] });
    expect(state.pendingApprovals).toEqual([]);
    expect(workflowFake.metric('loopwright_delegations')).toEqual([]);

    workflowFake.scopeCancelled = false;
    expect(await delegator.run(call, at(replying(call), used))).toMatchObject({ success: false, status: 'interrupted', error: 'pm did not complete: cancelled' });
  });

  test('delegation: as a turn extension it runs only delegate_task calls and reports their count', async () => {
    const { delegator, used } = parent();
    const extension = delegationExtension(delegator);
    const call = delegate('d1', 'pm', 'x');
    expect(extension.runsCall!(call)).toBe(true);
    expect(extension.runsCall!(toolCall('r1', 'read_file', { file_path: 'a' }))).toBe(false);
    workflowFake.scriptChildren({ turns: 1, endedBy: 'one_shot', usage: usage(1, 1), lastTurn: { success: true, status: 'completed', response: 'done' } });
    expect(await extension.runCall!(call, at(replying(call), used))).toMatchObject({ success: true, response: 'done' });
    expect(extension.report!(replying(call), 0, 3)).toEqual({ delegations: 1 });
  });
});

describe('Delegator: subagents (run_subagent)', () => {
  const subagentCall = (id: string, args: Record<string, unknown>) => toolCall(id, 'run_subagent', args);

  function withSubagents(input: Partial<SessionInput> = {}, activeSkills: { dir: string }[] = []) {
    const state = sessionState();
    const full = { ...BASE, ...input };
    const approvals = new DelegationApprovals(full, { state, refreshDetails: () => undefined });
    const delegator = new Delegator({ input: full, delegates: [], subagents: true, activeSkills: () => activeSkills, budgets: () => undefined, contextWindow: () => undefined, approvals });
    return { delegator, used: [] as TokenUsage[] };
  }

  test("a call starts a child of the same agent and project, made of the call's instructions, named after its file", async () => {
    const call = subagentCall('s1', { instructions_file: 'agents/web-researcher.md', instructions: ' Be brief. ', task: ' Find competitors. ' });
    const { delegator, used } = withSubagents({ subagent: undefined }, [{ dir: '/p/.claude/skills/prfaq' }]);
    expect(delegator.handles(call)).toBe(true);
    workflowFake.scriptChildren({ turns: 1, endedBy: 'one_shot', usage: usage(20, 5), lastTurn: { success: true, status: 'completed', response: 'Two competitors.' } });
    const result = await delegator.run(call, at(replying(call), used));
    expect(result).toEqual({ success: true, agent: 'web-researcher', workflowId: 'parent-t1-i1-s1', response: 'Two competitors.', status: 'completed', usage: usage(20, 5) });
    const { options } = workflowFake.children[0]!;
    expect(options.staticSummary).toBe('subagent web-researcher · started by lead · Find competitors.');
    expect((options.args as SessionInput[])[0]).toEqual({
      bundlePath: '/bundle',
      agentId: 'lead',
      model: 'main-model',
      projectRoot: '/p',
      subagent: { name: 'web-researcher', instructions: 'Be brief.', instructionsFile: 'agents/web-researcher.md', activeSkillDirs: ['/p/.claude/skills/prfaq'] },
      firstMessage: 'Find competitors.',
      oneShot: true,
      delegatedBy: { workflowId: 'parent', callId: 's1', agent: 'lead', depth: 1 },
    });
  });

  test('a name is made safe for a workflow id and the Web UI; a call without instructions or task is refused; delegate_task limits apply', async () => {
    const { delegator, used } = withSubagents({ delegation: { maxDepth: 1 }, delegatedBy: { workflowId: 'top', callId: 'c', agent: 'lead', depth: 1 } });
    const refused = await delegator.run(subagentCall('s2', { task: 'x' }), at(replying(subagentCall('s2', { task: 'x' })), used));
    expect(refused).toMatchObject({
      success: false,
      status: 'refused',
      agent: 'subagent',
      error: 'run_subagent needs task (the task, complete) and instructions or instructions_file (who the subagent is and how it works)',
    });
    const deep = subagentCall('s3', { instructions: 'Review.', name: 'security reviewer/2', task: 'Review the spine.' });
    const tooDeep = await delegator.run(deep, at(replying(deep), used));
    expect(tooDeep).toMatchObject({ success: false, status: 'refused', agent: 'security-reviewer-2' });
    expect(String(tooDeep.error)).toContain("past the session's limit of 1 (delegation.maxDepth)");
    expect(workflowFake.children).toHaveLength(0);
  });

  test('a session that does not offer run_subagent does not run its calls', () => {
    const { delegator } = parent();
    expect(delegator.handles(subagentCall('s4', { instructions: 'x', task: 'y' }))).toBe(false);
  });
});

describe('DelegationApprovals', () => {
  const CHILD = 'parent-t1-i1-d1';
  const pending = (callId: string, extra: Partial<PendingApproval> = {}): PendingApproval => ({ callId, tool: 'save_output', path: 'docs/req.md', preview: '# Requirements', since: 5, ...extra });

  test("delegation approvals: a running child's pending calls show in the parent under the delegate call, and the session waits", () => {
    const { approvals, state, counters } = parent();
    // Not a running child: ignored.
    workflowFake.deliver('childApprovals', { workflowId: 'stranger', agent: 'pm', approvals: [pending('s1')] });
    expect(state.pendingApprovals).toEqual([]);
    expect(counters.refreshed).toBe(0);

    approvals.started(CHILD, 'd1');
    workflowFake.deliver('childApprovals', { workflowId: CHILD, agent: 'pm', approvals: [pending('s1')] });
    expect(state.pendingApprovals).toEqual([{ ...pending('d1/s1'), delegate: { agent: 'pm', workflowId: CHILD, callId: 's1' } }]);
    expect(state.status).toBe('waiting_for_approval');
    expect(counters.refreshed).toBe(1);
    // A top session has no parent to tell.
    expect(workflowFake.signals).toEqual([]);

    // The child's list is replaced whole; an empty one clears it and the tools run again.
    workflowFake.deliver('childApprovals', { workflowId: CHILD, agent: 'pm', approvals: [] });
    expect(state.pendingApprovals).toEqual([]);
    expect(state.status).toBe('executing_tool');
  });

  test("delegation approvals: a grandchild's call keeps the agent that asks, under both delegate calls", () => {
    const { approvals, state } = parent();
    approvals.started(CHILD, 'd1');
    const fromGrandchild = pending('c1/s1', { delegate: { agent: 'lead', workflowId: `${CHILD}-t1-i1-c1`, callId: 's1' } });
    workflowFake.deliver('childApprovals', { workflowId: CHILD, agent: 'pm', approvals: [fromGrandchild] });
    expect(state.pendingApprovals).toEqual([{ ...fromGrandchild, callId: 'd1/c1/s1', delegate: { agent: 'lead', workflowId: CHILD, callId: 'c1/s1' } }]);
  });

  test('delegation approvals: a decision goes down to the running child by signal, with its own call id and the reason', async () => {
    const { approvals, state } = parent();
    approvals.started(CHILD, 'd1');
    workflowFake.deliver('childApprovals', { workflowId: CHILD, agent: 'pm', approvals: [pending('s1')] });
    approvals.forward(state.pendingApprovals[0]!, false, 'not now');
    approvals.forward(state.pendingApprovals[0]!, true);
    approvals.forward(pending('own-call'), true);
    expect(workflowFake.signals).toEqual([
      { workflowId: CHILD, signal: 'decideApprovals', args: [['s1'], false, 'not now'] },
      { workflowId: CHILD, signal: 'decideApprovals', args: [['s1'], true] },
    ]);
    // A child that is gone cannot be told: a warning, not a failure.
    workflowFake.signalFailure = new Error('workflow not found');
    approvals.forward(state.pendingApprovals[0]!, true);
    await new Promise((r) => setImmediate(r));
    expect(workflowFake.logs.filter((l) => l.level === 'warn')).toEqual([
      { level: 'warn', message: 'Could not pass an approval on to a delegated session', attrs: { workflowId: CHILD, error: 'Error: workflow not found' } },
    ]);
    // Once the child ends, its entries go and nothing more is forwarded.
    approvals.finished(CHILD);
    expect(state.pendingApprovals).toEqual([]);
    approvals.forward(pending('d1/s1', { delegate: { agent: 'pm', workflowId: CHILD, callId: 's1' } }), true);
    expect(workflowFake.signals).toHaveLength(3);
  });

  test('delegation approvals: a child session tells its parent its whole pending list whenever it changes', () => {
    workflowFake.info = { workflowId: CHILD };
    const state = sessionState();
    const child = new DelegationApprovals({ ...BASE, agentId: 'pm', delegatedBy: { workflowId: 'parent', callId: 'd1', agent: 'lead', depth: 1 } }, { state, refreshDetails: () => undefined });
    state.pendingApprovals = [pending('s1')];
    child.notifyParent();
    expect(workflowFake.signals).toEqual([{ workflowId: 'parent', signal: 'childApprovals', args: [{ workflowId: CHILD, agent: 'pm', approvals: [pending('s1')] }] }]);
    // A grandchild's report goes up the chain too.
    child.started(`${CHILD}-t1-i1-c1`, 'c1');
    workflowFake.deliver('childApprovals', { workflowId: `${CHILD}-t1-i1-c1`, agent: 'lead', approvals: [pending('s9')] });
    expect(workflowFake.signals).toHaveLength(2);
    expect((workflowFake.signals[1]!.args[0] as { approvals: PendingApproval[] }).approvals.map((p) => p.callId)).toEqual(['s1', 'c1/s9']);
  });

  test('delegation approvals: a session recorded before delegation gets none (the patch marker), nor one with delegation off', () => {
    const rt = (input: Partial<SessionInput>) => ({ input: { ...BASE, ...input }, state: sessionState(), refreshDetails: () => undefined }) as unknown as SessionRuntime;
    workflowFake.unpatched.add('loopwright-delegation');
    expect(delegationApprovals(rt({}))).toBeUndefined();
    expect(workflowFake.patchesAsked).toEqual(['loopwright-delegation']);
    expect(workflowFake.handlers.size).toBe(0);
    workflowFake.unpatched.clear();
    expect(delegationApprovals(rt({ delegation: { enabled: false } }))).toBeUndefined();
    // Off for its own calls, a delegated child still passes its approvals up.
    expect(delegationApprovals(rt({ delegation: { enabled: false }, delegatedBy: { workflowId: 'p', callId: 'd1', agent: 'lead', depth: 1 } }))).toBeInstanceOf(DelegationApprovals);
    expect(delegationApprovals(rt({}))).toBeInstanceOf(DelegationApprovals);
    expect([...workflowFake.handlers.keys()]).toEqual(['childApprovals']);
  });
});
