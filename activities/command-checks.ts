/** The menu items of an agent that name a checklist, as the session's verify phase uses them. */
import type { AgentDefinition } from '../bundle/agent-schema';
import type { CommandCheck } from '../common/verify-types';

/**
 * `validate-workflow` items (checked when chosen: the checklist is the item's `checklist`, else the
 * workflow's `validation`; the document the item's `document`, else the workflow's
 * `default_output_file`), and workflow items that carry a `checklist` (their document is checked
 * once saved). Paths stay as written; the verify activity resolves them.
 */
export function commandChecks(agent: AgentDefinition): CommandCheck[] {
  return agent.commands.flatMap((command): CommandCheck[] => {
    const { checklist, document } = command as { checklist?: string; document?: string };
    const validate = command.targets.find((t) => t.kind === 'validate-workflow')?.value;
    const workflow = validate ?? command.targets.find((t) => t.kind === 'workflow')?.value;
    if (validate === undefined && !checklist) return [];
    return [
      {
        cmd: command.cmd,
        kind: validate !== undefined || workflow === undefined ? 'validate' : 'workflow',
        ...(workflow ? { workflow } : {}),
        ...(checklist ? { checklist } : {}),
        ...(document ? { document } : {}),
      },
    ];
  });
}
