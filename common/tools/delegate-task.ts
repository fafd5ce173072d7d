/**
 * The `delegate_task` tool: hand a task to another agent of the bundle. No activity runs it: the
 * workflow starts the other agent as a child session (`workflows/delegation/delegation.ts`) and its final
 * reply is the call's result. Offered only to an agent that has someone to delegate to; the
 * description the model is sent lists them (built by agent initialisation, `delegateDefinition`).
 */
import { defineTool } from './tool-spec';

export const DELEGATE_TASK = defineTool({
  name: 'delegate_task',
  description:
    "Hand a task to another agent of this bundle. The agent runs it on its own (its own conversation, tools and limits) and its final reply comes back as this call's result. Give the task complete and self-contained: the other agent does not see this conversation.",
  parameters: {
    agent: { type: 'string', nonEmpty: true, description: 'Id of the agent to hand the task to (one of those listed in this description)' },
    task: { type: 'string', nonEmpty: true, description: 'The task, with every fact, file path and expectation the other agent needs' },
  },
  // Delegating changes nothing by itself: what the other agent writes waits for its own approvals.
  access: 'read',
  target: 'agent',
  retries: 'persistent',
  promptRules: ['- When another agent is better placed for part of the work, call delegate_task with its id and a complete, self-contained task; use its reply, which comes back as the result.'],
});

/** The description the model is sent: the tool's, and the agents it may call. */
export function delegateDescription(agents: readonly { id: string; name: string; title: string }[]): string {
  const lines = agents.map((a) => `- ${a.id}: ${a.name}${a.title ? `, ${a.title}` : ''}`);
  return `${DELEGATE_TASK.description}\nAgents you may call:\n${lines.join('\n')}`;
}
