/**
 * Delegation in one run of a session, behind `patched('loopwright-delegation')`: the approvals that
 * travel between parent and child sessions (installed before the turn's controls), and the
 * delegator the turn calls for `delegate_task` (once initialisation has said whom the agent may
 * call). Nothing else is carried on continue-as-new: the agents to call are in `init`, the depth in
 * the input, and no child runs across a hand-over (a turn pauses only between iterations).
 */
import { patched } from '@temporalio/workflow';
import { DELEGATION_PATCH } from '../../common/delegation-types';
import type { ApprovalHost } from '../turn/approvals';
import { DelegationApprovals } from './delegation-approvals';
import { Delegator } from './delegation';
import type { SessionRuntime } from '../session/session-runtime';

/** The approvals across delegation of a session that may delegate or was delegated to; undefined for recorded sessions and when it is off. */
export function delegationApprovals(rt: SessionRuntime): DelegationApprovals | undefined {
  if (!patched(DELEGATION_PATCH)) return undefined;
  if (rt.input.delegation?.enabled === false && !rt.input.delegatedBy) return undefined;
  return new DelegationApprovals(rt.input, { state: rt.state, refreshDetails: () => rt.refreshDetails() });
}

/** The hooks the approval controls call: decisions on a child's calls go to the child; a child tells its parent. */
export function delegationHooks(rt: SessionRuntime): Pick<ApprovalHost, 'forward' | 'onPendingChange'> {
  return {
    forward: (pending, approved, reason) => rt.delegationApprovals?.forward(pending, approved, reason),
    onPendingChange: () => rt.delegationApprovals?.notifyParent(),
  };
}

/** The delegator of an initialised session whose agent has someone to call. */
export function sessionDelegator(rt: SessionRuntime): Delegator | undefined {
  const delegates = rt.init?.delegates;
  if (!rt.delegationApprovals || !delegates || delegates.length === 0 || rt.input.delegation?.enabled === false) return undefined;
  return new Delegator({ input: rt.input, delegates, budgets: () => rt.managed?.budgets.state(), contextWindow: () => rt.managed?.context.window, approvals: rt.delegationApprovals });
}
