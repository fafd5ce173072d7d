/**
 * Approvals: which tool calls wait for a human yes, what the person approving sees, and the
 * controls a turn uses to ask and wait (durably, cancellably) for the answer. A call of the
 * command tool always waits unless the session's command rules decide it: an allow rule lets it
 * run at once, a deny rule refuses it without asking (command-approval.ts, behind
 * `COMMAND_RULES_PATCH`).
 */
import type { Duration } from '@temporalio/common';
import { ApplicationFailure, condition, log, patched, setHandler } from '@temporalio/workflow';
import { BAD_INPUT } from '../../common/failure-types';
import type { ToolCall, ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { refusalMessage, ruleText } from '../../common/commands/command-rules';
import { fillCommandVariables } from '../../common/commands/command-line';
import { commandApprovalView, commandOf, commandVerdict, COMMAND_RULES_PATCH } from './command-approval';
import type { ApprovalPolicy, PendingApproval, SessionInput, SessionState } from '../../common/session-types';
import type { APPROVAL_ON_TIMEOUT } from '../../common/settings/session-settings';
import type { SessionTool } from '../../common/offered-tools';
import { TOOL_SPECS, toolSpec } from '../../common/tools';
import { argsOf, contentOf, modesOf, replacedOf, targetOf } from '../../common/tools/tool-spec';
import { utf8Length } from '../../common/transcript';
import { editDiff } from './edit-diff';
import { approveUpdate, decideApprovalsSignal, denyUpdate } from '../../common/contract/session-definitions';
import type { ApprovalDecision, TurnApprovals } from './turn';

/** What an approval that times out decides. */
type ApprovalOnTimeout = (typeof APPROVAL_ON_TIMEOUT)[number];

/** What the approval controls need from their session. */
export interface ApprovalHost {
  input: SessionInput;
  state: SessionState;
  /** The session's variables, to show paths with them filled in. */
  variables(): Record<string, string>;
  /** The session's runtime context as it stands (command rules, active skills, write roots); absent before initialisation. */
  context?(): RuntimeContext | undefined;
  /** The tools the session offers (built-in definitions and offered tools). */
  tools(): readonly SessionTool[];
  refreshDetails(): void;
  /** Delegation: pass a decision on a child session's call on to that child. */
  forward?(pending: PendingApproval, approved: boolean, reason?: string): void;
  /** Delegation: the pending approvals changed (a child tells its parent). */
  onPendingChange?(): void;
}

/** The human-in-the-loop controls of a turn, with the approve and deny updates installed. */
export function approvalControls(host: ApprovalHost): TurnApprovals {
  const { input, state } = host;
  const approval = approvalSettings(input);
  const decisions = new Map<string, ApprovalDecision>();
  const decide = (approved: boolean, callId?: string, reason?: string): string[] => {
    const ids = callId === undefined ? state.pendingApprovals.map((p) => p.callId) : [callId];
    for (const id of ids) {
      const asked = state.pendingApprovals.find((p) => p.callId === id);
      if (asked?.delegate && host.forward) host.forward(asked, approved, reason);
      else decisions.set(id, { approved, ...(reason ? { reason } : {}) });
    }
    return ids;
  };
  const checkPending = (callId?: string): void => {
    if (state.pendingApprovals.length === 0) throw ApplicationFailure.nonRetryable('No tool call is waiting for approval', BAD_INPUT);
    if (callId !== undefined && !state.pendingApprovals.some((p) => p.callId === callId)) {
      throw ApplicationFailure.nonRetryable(`No tool call ${callId} is waiting for approval (waiting: ${state.pendingApprovals.map((p) => p.callId).join(', ')})`, BAD_INPUT);
    }
  };
  setHandler(approveUpdate, (callId: string | null) => decide(true, callId ?? undefined), {
    validator: (callId: string | null) => checkPending(callId ?? undefined),
    description: 'Let a tool call waiting for approval run (all waiting calls when no call id is given)',
  });
  setHandler(denyUpdate, (callId: string | null, reason?: string) => decide(false, callId ?? undefined, reason), {
    validator: (callId: string | null, _reason?: string) => checkPending(callId ?? undefined),
    description: 'Refuse a tool call waiting for approval, with a reason the model sees',
  });
  if (input.delegatedBy) {
    // A child session: its parent passes on what the user decided about its calls.
    setHandler(decideApprovalsSignal, (callIds: string[], approved: boolean, reason?: string) => {
      for (const id of callIds) if (state.pendingApprovals.some((p) => p.callId === id)) decide(approved, id, reason);
    });
  }
  return {
    needsApproval: (call) => {
      const verdict = commandVerdict(call, host.context?.());
      // Asked for only when a rule decides, so a history recorded before the rules replays as it ran.
      if (verdict?.verdict === 'allow' && patched(COMMAND_RULES_PATCH)) {
        log.info('Command allowed by rule', { callId: call.id, rules: verdict.rules.map(ruleText) });
        return false;
      }
      return policyCovers(approval.policy, call.function.name, host.tools());
    },
    refused: (call): ToolResult | undefined => {
      const context = host.context?.();
      const verdict = commandVerdict(call, context);
      if (verdict?.verdict !== 'deny' || !patched(COMMAND_RULES_PATCH)) return undefined;
      log.info('Command refused by rule', { callId: call.id, rule: ruleText(verdict.rule) });
      // As a command's own result: the line as it would have run, and why it did not.
      return { success: false, refused: true, command: fillCommandVariables(commandOf(call) ?? '', context?.variables ?? {}), error: refusalMessage(verdict) };
    },
    requestApproval: async (call) => {
      const context = host.context?.();
      const command = commandApprovalView(call, context, commandVerdict(call, context));
      const pending: PendingApproval = {
        callId: call.id,
        tool: call.function.name,
        ...previewOf(call, host.variables(), host.tools()),
        ...(command ? { command } : {}),
        since: Date.now(),
      };
      state.pendingApprovals = [...state.pendingApprovals, pending];
      state.status = 'waiting_for_approval';
      host.refreshDetails();
      host.onPendingChange?.();
      try {
        let answered = true;
        if (approval.timeout !== undefined) answered = await condition(() => decisions.has(call.id), approval.timeout as Duration);
        else await condition(() => decisions.has(call.id));
        if (!answered) return { approved: approval.onTimeout === 'approve', reason: `no answer within ${approval.timeout}` };
        return decisions.get(call.id)!;
      } finally {
        state.pendingApprovals = state.pendingApprovals.filter((p) => p.callId !== call.id);
        if (state.pendingApprovals.length === 0 && state.status === 'waiting_for_approval') state.status = 'executing_tool';
        host.onPendingChange?.();
      }
    },
  };
}

export function approvalSettings(input: SessionInput): { policy: ApprovalPolicy; timeout: string | undefined; onTimeout: ApprovalOnTimeout } {
  return { policy: input.approval?.policy ?? 'none', timeout: input.approval?.timeout, onTimeout: input.approval?.onTimeout ?? 'deny' };
}

/** Whether `policy` makes a call of `tool` wait for a human yes; `writes` covers the tools with `access: 'write'`. */
export function policyCovers(policy: ApprovalPolicy, tool: string, specs: readonly SessionTool[] = TOOL_SPECS): boolean {
  const spec = toolSpec(tool, specs);
  // A tool with `approval: 'required'` (the command tool; an MCP tool not marked read-only) always waits.
  if (spec?.approval === 'required') return true;
  if (policy === 'none') return false;
  if (policy === 'all') return true;
  if (policy === 'writes') return spec?.access === 'write';
  return policy.includes(tool);
}

/** Longest piece of a write's text an approval preview shows (each line of an edit's diff). */
const PREVIEW_CHARS = 200;

/**
 * The target (a path, with known variables filled in) and a short preview of a call, for the
 * person approving it: the start of what a write writes, after the modes the call gives
 * (`[append] 12 bytes: ...`); for an edit (`replaces`) a size line and the unified diff of the text
 * it replaces against what replaces it (`replace 18 bytes with 22 bytes:` then `@@ -1,1 +1,1 @@`,
 * `-old`, `+new`; see edit-diff.ts); else the arguments as they came.
 */
export function previewOf(call: ToolCall, variables: Record<string, string>, specs: readonly SessionTool[] = TOOL_SPECS): { path?: string; preview: string } {
  const spec = toolSpec(call.function.name, specs);
  const args = argsOf(call);
  const raw = targetOf(spec, args);
  // One pass over {name} placeholders; unknown ones stay as written (the tool resolves them fully).
  const path = raw?.replace(/\{([A-Za-z0-9_-]+)\}/g, (whole, name: string) => variables[name] ?? whole);
  const content = contentOf(spec, args);
  const replaced = replacedOf(spec, args);
  const modes = modesOf(spec, args);
  const lead = modes.length > 0 ? `[${modes.join(', ')}] ` : '';
  let preview: string;
  if (content === undefined) preview = call.function.arguments.slice(0, PREVIEW_CHARS);
  else if (replaced !== undefined) preview = `${lead}replace ${utf8Length(replaced)} bytes with ${utf8Length(content)} bytes:\n${editDiff(replaced, content, PREVIEW_CHARS)}`;
  else preview = `${lead}${sized(content)}`;
  return { ...(path !== undefined ? { path } : {}), preview };
}

/** `12 bytes: <the text's start>`. */
function sized(text: string): string {
  return `${utf8Length(text)} bytes: ${text.slice(0, PREVIEW_CHARS)}${text.length > PREVIEW_CHARS ? '…' : ''}`;
}
