/**
 * How the commands word a call waiting for approval (chat's prompt, `status`): the tool and what it
 * names, a preview of what it would write, and for a command (`run_command`) the exact line, the
 * folder it runs in, its sandbox and who asked for it besides the model.
 */
import type { PendingApproval } from '../../common/session-types';

/** An approval as lines: its headline (`run_command git status -s`), then what else the person should see. */
export function approvalLines(approval: PendingApproval): { head: string; details: string[] } {
  const command = approval.command;
  if (command === undefined) return { head: `${approval.tool}${approval.path ? ` ${approval.path}` : ''} — ${approval.preview}`, details: [] };
  return {
    head: `${approval.tool} ${command.line}`,
    details: [
      `in ${command.cwd} · ${command.sandbox}`,
      ...(command.requestedBy ?? []).map((request) => `requested by ${request} (a request, not a grant)`),
      ...(command.unjudged ? [`not covered by the rules: ${command.unjudged}`] : []),
    ],
  };
}
