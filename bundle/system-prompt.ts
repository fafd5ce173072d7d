/**
 * Builds the agent's system prompt, following the execution spec's structure (section 6): who the
 * agent is, how to use the tools (load files with read_file, run workflows with execute_workflow,
 * save with save_output; never merely acknowledge a load; wait for results), the available
 * commands with their paths, the workflow execution pattern and the conversational style rules.
 * Compiled agents add their prompts, rules and menu handlers, which their steps refer to.
 *
 * Paths stay as the agent file writes them (`{project-root}/...`): the tools resolve variables, so
 * the prompt is identical for every machine and the model passes paths through unchanged.
 */
import type { AgentCommand, AgentDefinition, CommandTarget } from './agent-schema';

const TARGET_LABELS: Record<CommandTarget['kind'], string> = {
  workflow: 'Workflow',
  'validate-workflow': 'Validate workflow',
  exec: 'Exec',
  action: 'Action',
  tmpl: 'Template',
  data: 'Data',
};

/** The system message that opens every session of `agent`. Deterministic: same agent, same text. */
export function buildSystemPrompt(agent: AgentDefinition, options: { loopBreakers?: boolean } = {}): string {
  const { persona } = agent;
  const sections: string[] = [];

  const intro = [`You are ${agent.name}, ${agent.title}.`];
  if (persona.role) intro.push('', persona.role);
  sections.push(intro.join('\n'));
  if (persona.identity) sections.push(`IDENTITY:\n${persona.identity}`);
  if (persona.communication_style) sections.push(`COMMUNICATION STYLE:\n${persona.communication_style}`);
  if (persona.principles) sections.push(`PRINCIPLES:\n${persona.principles}`);

  sections.push(
    [
      'CRITICAL INSTRUCTIONS FOR TOOL USE:',
      '- You see a file only after loading it. Whenever an instruction, a command or a workflow tells you to load or read a file, call the read_file tool with its path. Paths may keep their variables ({project-root}, {bundle-root}, {core-root}, {config_source}:key); the tools resolve them.',
      '- To run a workflow, call the execute_workflow tool with the path of its workflow.yaml. It returns the workflow configuration, its instructions and its template.',
      '- To write a document, call the save_output tool with the target path and the complete content.',
      '- Never just say that you loaded, read or saved something: call the tool. A load instruction that you only acknowledge in text has not happened.',
      '- After a tool call, wait for its result and work from what it returned. If it reports an error, correct the path or tell the user; do not invent the content.',
      '- Files shown in "[Critical Action] Loaded file" messages are already loaded; do not load them again.',
      ...(options.loopBreakers === false
        ? []
        : [
            '- When you need an answer only the user can give (a step that asks the user, a choice, missing facts), call ask_question with the complete question and stop; the answer comes back as its result.',
            '- When the task the user asked for is done, call task_completion with a short summary of what was done.',
          ]),
    ].join('\n'),
  );

  sections.push(`AVAILABLE COMMANDS:\n${agent.commands.length > 0 ? agent.commands.map(formatCommand).join('\n') : '(none)'}`);

  sections.push(
    [
      'WORKFLOW EXECUTION PATTERN:',
      'When the user invokes a command (e.g. *intake) or picks it by its number:',
      '1. Find the command above and the path of its workflow.',
      '2. Call execute_workflow with that path.',
      '3. Wait for the workflow configuration, instructions and template.',
      '4. Follow the instructions step by step, in order.',
      '5. Save what the workflow produces with save_output, at the path the workflow names.',
    ].join('\n'),
  );

  sections.push(
    [
      'CONVERSATION STYLE:',
      'In guided workflows (instructions with <step n="..."> sections):',
      '- Open each step by showing its number and goal, e.g. "Step 2: Refine the problem statement", with enough context that the user knows where they are.',
      '- Where an <action> asks you to guide or suggest (questions to consider, options, prompts), you may offer several related suggestions at once: they are ideas for the user to weigh, not questions you need answered.',
      '- Where an <ask> asks the user for input, ask exactly one clear question, then wait for the answer.',
      'In every conversation:',
      '- Keep replies purposeful: 2 to 4 sentences unless the moment needs more.',
      '- When you need input, ask one direct question at a time.',
      '- Be warm and conversational, never a form to fill in.',
      "- Before moving on, paraphrase the user's answer to show you understood it.",
      '- If something is unclear, ask a follow-up question before going further.',
    ].join('\n'),
  );

  if (agent.prompts.length > 0) {
    const prompts = agent.prompts.map((p) => `<prompt id="${p.id}">\n${p.text}\n</prompt>`).join('\n');
    sections.push(`AGENT PROMPTS (a command whose action is "#id" runs the prompt with that id):\n${prompts}`);
  }
  if (agent.rules.length > 0) sections.push(`RULES:\n${agent.rules.map((r) => `- ${r}`).join('\n')}`);
  if (agent.menuHandlers.length > 0) {
    const handlers = agent.menuHandlers.map((h) => `[${h.type}]\n${h.text}`).join('\n\n');
    sections.push(
      `MENU HANDLERS (how this agent runs a menu item of each kind; load every file they name with read_file, and run workflow.yaml files with execute_workflow):\n${handlers}`,
    );
  }

  sections.push('Remember: you have tools. Use them to act; do not only describe them.');
  return sections.join('\n\n');
}

function formatCommand(command: AgentCommand): string {
  const lines = [`${command.cmd} - ${command.description}`];
  for (const target of command.targets) lines.push(`  ${TARGET_LABELS[target.kind]}: ${target.value}`);
  return lines.join('\n');
}
