/**
 * Approvals across delegation. A child session's calls that wait for approval reach the user
 * through its parent, deterministically, by signals (workflows cannot query one another):
 *
 * - the child signals its parent (`childApprovals`) with its whole list of pending approvals each
 *   time it changes (its own calls, and those its own children passed up to it);
 * - the parent shows each in its `state.pendingApprovals` as `<delegate call>/<child's call id>`,
 *   with `delegate` naming the agent that asks and the child workflow;
 * - the parent's `approve` and `deny` updates pass a decision on such a call to the child
 *   (`decideApprovals`, through an external workflow handle), which decides it as its own update
 *   would, or passes it further down.
 *
 * A report from a child that is no longer running is ignored, and the child's entries go when it ends.
 */
import { getExternalWorkflowHandle, log, setHandler, workflowInfo } from '@temporalio/workflow';
import type { PendingApproval, SessionInput } from '../../common/session-types';
import type { ApprovalHost } from '../turn/approvals';
import { childApprovalsSignal, decideApprovalsSignal } from '../../common/contract/session-definitions';

export class DelegationApprovals {
  /** Running children: workflow id → the `delegate_task` call that started it. */
  private readonly running = new Map<string, string>();

  constructor(
    private readonly input: SessionInput,
    private readonly host: Pick<ApprovalHost, 'state' | 'refreshDetails'>,
  ) {
    setHandler(childApprovalsSignal, (report) => {
      const via = this.running.get(report.workflowId);
      if (via === undefined) return;
      const approvals = report.approvals.map((p): PendingApproval => ({
        ...p,
        callId: `${via}/${p.callId}`,
        delegate: { agent: p.delegate?.agent ?? report.agent, workflowId: report.workflowId, callId: p.callId },
      }));
      this.replace(report.workflowId, approvals);
    });
  }

  /** A child started for call `callId`. */
  started(workflowId: string, callId: string): void {
    this.running.set(workflowId, callId);
  }

  /** A child ended: its approvals are no longer pending. */
  finished(workflowId: string): void {
    this.running.delete(workflowId);
    if (this.host.state.pendingApprovals.some((p) => p.delegate?.workflowId === workflowId)) this.replace(workflowId, []);
  }

  /** Pass the user's decision on a child's call to that child. */
  forward(pending: PendingApproval, approved: boolean, reason?: string): void {
    const to = pending.delegate;
    if (!to || !this.running.has(to.workflowId)) return;
    getExternalWorkflowHandle(to.workflowId)
      .signal(decideApprovalsSignal, [to.callId], approved, ...(reason ? [reason] : []))
      .catch((err: unknown) => log.warn('Could not pass an approval on to a delegated session', { workflowId: to.workflowId, error: String(err) }));
  }

  /** In a child session: tell the parent what waits for approval here (called whenever it changes). */
  notifyParent(): void {
    const parent = this.input.delegatedBy;
    if (!parent) return;
    const report = { workflowId: workflowInfo().workflowId, agent: this.input.agentId, approvals: this.host.state.pendingApprovals };
    getExternalWorkflowHandle(parent.workflowId)
      .signal(childApprovalsSignal, report)
      .catch((err: unknown) => log.warn('Could not tell the parent session about pending approvals', { parent: parent.workflowId, error: String(err) }));
  }

  private replace(workflowId: string, approvals: PendingApproval[]): void {
    const { state } = this.host;
    state.pendingApprovals = [...state.pendingApprovals.filter((p) => p.delegate?.workflowId !== workflowId), ...approvals];
    if (state.pendingApprovals.length > 0 && state.status === 'executing_tool') state.status = 'waiting_for_approval';
    if (state.pendingApprovals.length === 0 && state.status === 'waiting_for_approval') state.status = 'executing_tool';
    this.host.refreshDetails();
    this.notifyParent();
  }
}
