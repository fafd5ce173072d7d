/**
 * How a run of a session builds the features that take part in its turns: the verify phase (from
 * its settings, its agent and what the run before carried) and delegation.
 *
 * Delegation in one run of a session, behind `patched('loopwright-delegation')`: the approvals that
 * travel between parent and child sessions (installed before the turn's controls), and the
 * delegator the turn calls for `delegate_task` (once initialisation has said whom the agent may
 * call). Nothing else is carried on continue-as-new: the agents to call are in `init`, the depth in
 * the input, and no child runs across a hand-over (a turn pauses only between iterations).
 */
import { patched } from '@temporalio/workflow';
import { DELEGATION_PATCH } from '../../common/delegation-types';
import { RUN_SUBAGENT } from '../../common/tools';
import type { ApprovalHost } from '../turn/approvals';
import { DelegationApprovals } from '../delegation/delegation-approvals';
import { Delegator } from '../delegation/delegation';
import type { SessionRuntime } from './session-runtime';
import type { VerifyCarry } from '../../common/verify-types';
import { SessionVerifier } from '../verify/verify';

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
  const delegates = rt.init?.delegates ?? [];
  const subagents = rt.init?.tools.some((t) => t.function.name === RUN_SUBAGENT.name) === true;
  if (!rt.delegationApprovals || (delegates.length === 0 && !subagents) || rt.input.delegation?.enabled === false) return undefined;
  return new Delegator({
    input: rt.input,
    delegates,
    subagents,
    budgets: () => rt.managed?.budgets.state(),
    contextWindow: () => rt.managed?.context.window,
    activeSkills: () => rt.init?.context.activeSkills,
    approvals: rt.delegationApprovals,
  });
}

/** The session's verifier: its status shows `verifying` while a document is checked. */
export function sessionVerifier(rt: SessionRuntime, carried: VerifyCarry | undefined): SessionVerifier {
  const init = rt.init!;
  const verifier: SessionVerifier = new SessionVerifier(
    {
      activities: rt.activities,
      settings: rt.input.verify,
      context: () => init.context,
      checks: init.checks ?? [],
      commands: init.agent.commands,
      ...(rt.input.model ? { model: rt.input.model } : {}),
      ...(rt.input.modelSettings ? { modelSettings: rt.input.modelSettings } : {}),
      onChange: () => {
        if (verifier.phase === 'verify') rt.state.status = 'verifying';
        rt.refreshDetails();
      },
    },
    carried,
  );
  return verifier;
}
