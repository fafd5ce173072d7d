/**
 * The delegation settings as the session checks them when it starts (`SessionInput.delegation`,
 * `delegatedBy`), the child's budgets (what is left of the parent's), its workflow id, and which
 * agents a bundle's agent may call (`agentDelegates`: session patterns, manifest `delegates:`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sessionInputProblem } from '../../common/session-input-schema';
import { agentDelegates } from '../../bundle/agent-delegates';
import { childBudget, childWorkflowId } from '../../workflows/delegation/delegation';
import { writeDelegationBundle } from '../support/delegation-bundle';

const base = { bundlePath: '/b', agentId: 'lead' };

describe('SessionInput.delegation', () => {
  test('valid settings pass', () => {
    expect(sessionInputProblem({ ...base, delegation: {} })).toBeUndefined();
    expect(sessionInputProblem({ ...base, delegation: { enabled: false } })).toBeUndefined();
    expect(sessionInputProblem({ ...base, delegation: { agents: ['pm', 'bmm/*', 'core/bmad-master'], maxDepth: 0, maxChildren: 1 } })).toBeUndefined();
    expect(sessionInputProblem({ ...base, delegation: { maxDepth: 3 }, delegatedBy: { workflowId: 'p', callId: 'c1', agent: 'lead', depth: 3 } })).toBeUndefined();
  });

  test('bad settings are refused, naming the field', () => {
    expect(sessionInputProblem({ ...base, delegation: { enabled: 'yes' } })).toBe('delegation.enabled: expected true or false, got "yes"');
    expect(sessionInputProblem({ ...base, delegation: { agents: 'pm' } })).toBe('delegation.agents: expected a list of strings, got "pm"');
    expect(sessionInputProblem({ ...base, delegation: { agents: ['pm', 'a b'] } })).toContain('delegation.agents.1: an agent id or pattern takes letters');
    expect(sessionInputProblem({ ...base, delegation: { maxDepth: -1 } })).toBe('delegation.maxDepth: expected a whole number from 0 to 10, got -1');
    expect(sessionInputProblem({ ...base, delegation: { maxDepth: 11 } })).toBe('delegation.maxDepth: expected a whole number from 0 to 10, got 11');
    expect(sessionInputProblem({ ...base, delegation: { maxChildren: 0 } })).toBe('delegation.maxChildren: expected a whole number from 1 to 100, got 0');
    expect(sessionInputProblem({ ...base, delegation: { maxChildren: 1.5 } })).toBe('delegation.maxChildren: expected a whole number from 1 to 100, got 1.5');
    expect(sessionInputProblem({ ...base, delegation: { agent: ['pm'] } })).toContain('delegation.agent: unknown setting');
  });

  test('delegatedBy is checked, and a child deeper than maxDepth is refused at start', () => {
    expect(sessionInputProblem({ ...base, delegatedBy: { workflowId: 'p', callId: 'c1', agent: 'lead' } })).toBe('delegatedBy.depth: expected a whole number from 1 to 10, got undefined');
    expect(sessionInputProblem({ ...base, delegatedBy: { workflowId: '', callId: 'c1', agent: 'lead', depth: 1 } })).toBe('delegatedBy.workflowId: must not be empty');
    expect(sessionInputProblem({ ...base, delegatedBy: { workflowId: 'p', callId: 'c1', agent: 'lead', depth: 3 } })).toBe('delegatedBy.depth: 3 is deeper than delegation.maxDepth (2)');
    expect(sessionInputProblem({ ...base, delegation: { maxDepth: 1 }, delegatedBy: { workflowId: 'p', callId: 'c1', agent: 'lead', depth: 2 } })).toBe(
      'delegatedBy.depth: 2 is deeper than delegation.maxDepth (1)',
    );
  });
});

describe('child budgets and ids', () => {
  test('no budget: none for the child', () => {
    expect(childBudget(undefined, undefined)).toBeUndefined();
  });

  test('the child gets what is left of the turn and session budgets, and the prices', () => {
    const prices = { '*': { input: 1, output: 2 } };
    const state = { turnTokens: { used: 300, limit: 1000 }, sessionTokens: { used: 4500, limit: 5000 }, cost: { used: 0.25, limit: 1 } };
    expect(childBudget({ turnTokens: 1000, sessionTokens: 5000, sessionCost: 1, prices, warnAt: 0.9 }, state)).toEqual({ turnTokens: 500, sessionTokens: 500, sessionCost: 0.75, prices, warnAt: 0.9 });
    expect(childBudget({ turnTokens: 1000 }, { turnTokens: { used: 100, limit: 1000 }, sessionTokens: { used: 100 }, cost: { used: 0 } })).toEqual({ turnTokens: 900, sessionTokens: 900 });
  });

  test('a budget used up refuses the delegation', () => {
    expect(childBudget({ turnTokens: 1000 }, { turnTokens: { used: 1000, limit: 1000 }, sessionTokens: { used: 1000 }, cost: { used: 0 } })).toBe('the token budget is used up');
    expect(childBudget({ sessionCost: 1, prices: {} }, { turnTokens: { used: 0 }, sessionTokens: { used: 0 }, cost: { used: 1, limit: 1 } })).toBe('the cost budget is used up');
  });

  test('child workflow ids are derived from the parent, the turn, the iteration and the call', () => {
    expect(childWorkflowId('loopwright-lead-1', 3, 2, 'call_abc')).toBe('loopwright-lead-1-t3-i2-call_abc');
    expect(childWorkflowId('p', 1, 1, 'call/with spaces')).toBe('p-t1-i1-call_with_spaces');
  });
});

describe('agentDelegates', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-delegates-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  test('default: every other agent, never itself', async () => {
    const bundle = writeDelegationBundle(root);
    expect(await agentDelegates(bundle, 'lead', undefined)).toEqual([{ id: 'pm', name: 'Pat', title: 'Product Manager' }]);
    expect(await agentDelegates(bundle, 'pm', undefined)).toEqual([{ id: 'lead', name: 'Lena', title: 'Team Lead' }]);
    expect(await agentDelegates(bundle, 'lead', ['*'])).toEqual([{ id: 'pm', name: 'Pat', title: 'Product Manager' }]);
  });

  test("the manifest's delegates: narrow the list; the session's patterns replace it", async () => {
    const bundle = writeDelegationBundle(root, { lead: [], pm: ['lea*'] });
    expect(await agentDelegates(bundle, 'lead', undefined)).toEqual([]);
    expect(await agentDelegates(bundle, 'pm', undefined)).toEqual([{ id: 'lead', name: 'Lena', title: 'Team Lead' }]);
    expect(await agentDelegates(bundle, 'lead', ['pm'])).toEqual([{ id: 'pm', name: 'Pat', title: 'Product Manager' }]);
    expect(await agentDelegates(bundle, 'lead', ['nobody'])).toEqual([]);
  });
});
