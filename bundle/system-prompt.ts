/**
 * Builds the agent's system prompt, following the execution spec's structure (section 6): who the
 * agent is, how to use the tools (each tool's own rules from its definition in common/tools/; never
 * merely acknowledge a load; wait for results), the available commands with their paths, the
 * workflow execution pattern and the conversational style rules. Compiled agents add their
 * prompts, rules and menu handlers, which their steps refer to.
 *
 * The execution pattern and the menu handlers describe how a BMAD workflow runs, which is what the
 * loading, workflow and saving tools are for: they name those tools through their definitions.
 *
 * Paths stay as the agent file writes them (`{project-root}/...`): the tools resolve variables, so
 * the prompt is identical for every machine and the model passes paths through unchanged.
 */
import { LOOP_TOOL_SPECS, offeredBuiltIns } from '../common/tools';
import { ACTIVATE_SKILL } from '../common/tools/activate-skill';
import { EXECUTE_WORKFLOW } from '../common/tools/execute-workflow';
import { READ_FILE } from '../common/tools/read-file';
import { SAVE_OUTPUT } from '../common/tools/save-output';
import type { AgentCommand, AgentDefinition, CommandTarget } from './agent-schema';

const TARGET_LABELS: Record<CommandTarget['kind'], string> = {
  workflow: 'Workflow',
  'validate-workflow': 'Validate workflow',
  exec: 'Exec',
  action: 'Action',
  tmpl: 'Template',
  data: 'Data',
  skill: 'Skill',
};

/** How a command of a BMAD agent runs: the execution spec's workflow pattern. */
const WORKFLOW_PATTERN = [
  'WORKFLOW EXECUTION PATTERN:',
  'When the user invokes a command (e.g. *intake) or picks it by its number:',
  '1. Find the command above and the path of its workflow.',
  `2. Call ${EXECUTE_WORKFLOW.name} with that path.`,
  '3. Wait for the workflow configuration, instructions and template.',
  '4. Follow the instructions step by step, in order.',
  `5. Save what the workflow produces with ${SAVE_OUTPUT.name}, at the path the workflow names.`,
].join('\n');

/** How the agent converses: BMAD's style rules (guided steps, one question at a time). */
const CONVERSATION_STYLE = [
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
].join('\n');

/** Settings of `buildSystemPrompt`. */
export interface SystemPromptOptions {
  loopBreakers?: boolean;
  /**
   * The project's skill catalog (`skills/catalog.ts`), when it has skills: it closes the prompt,
   * and the rules of the skill tool are given. Without it neither is.
   */
  skillCatalog?: string;
  /** Commands are on (`commands.enabled`): the command tool's rules are in the prompt. */
  commands?: boolean;
  /**
   * A subagent's instructions (`run_subagent`): they take the place of the menu and the workflow
   * pattern, and the conversation rules (nobody converses with a subagent) are left out.
   */
  subagent?: string;
}

/** The system message that opens every session of `agent`. Deterministic: same agent, same text. */
export function buildSystemPrompt(agent: AgentDefinition, options: SystemPromptOptions = {}): string {
  const { persona } = agent;
  const sections: string[] = [];
  const hasSkills = options.skillCatalog !== undefined && options.skillCatalog !== '';

  const intro = [`You are ${agent.name}, ${agent.title}.`];
  if (persona.role) intro.push('', persona.role);
  sections.push(intro.join('\n'));
  if (persona.identity) sections.push(`IDENTITY:\n${persona.identity}`);
  if (persona.communication_style) sections.push(`COMMUNICATION STYLE:\n${persona.communication_style}`);
  if (persona.principles) sections.push(`PRINCIPLES:\n${persona.principles}`);

  sections.push(
    [
      'CRITICAL INSTRUCTIONS FOR TOOL USE:',
      ...offeredBuiltIns({ skills: hasSkills, commands: options.commands === true }).flatMap((spec) => spec.promptRules),
      '- Never just say that you loaded, read or saved something: call the tool. A load instruction that you only acknowledge in text has not happened.',
      '- After a tool call, wait for its result and work from what it returned. If it reports an error, correct the path or tell the user; do not invent the content.',
      '- Files shown in "[Critical Action] Loaded file" messages are already loaded; do not load them again.',
      ...(options.loopBreakers === false ? [] : LOOP_TOOL_SPECS.flatMap((spec) => spec.promptRules)),
    ].join('\n'),
  );

  if (options.subagent !== undefined) {
    sections.push(`YOUR INSTRUCTIONS (from the agent that started you):\n${options.subagent}`);
  } else if (agent.skill !== undefined) {
    sections.push(...skillAgentSections(agent, agent.skill));
  } else {
    sections.push(`AVAILABLE COMMANDS:\n${agent.commands.length > 0 ? agent.commands.map(formatCommand).join('\n') : '(none)'}`);
    const namesSkills = hasSkills && agent.commands.some((c) => c.targets.some((t) => t.kind === 'skill'));
    sections.push(namesSkills ? `${WORKFLOW_PATTERN}\nA command whose target is a Skill runs that skill: call ${ACTIVATE_SKILL.name} with its name and follow what it returns.` : WORKFLOW_PATTERN);
  }

  if (options.subagent === undefined) sections.push(CONVERSATION_STYLE);

  if (agent.prompts.length > 0) {
    const prompts = agent.prompts.map((p) => `<prompt id="${p.id}">\n${p.text}\n</prompt>`).join('\n');
    sections.push(`AGENT PROMPTS (a command whose action is "#id" runs the prompt with that id):\n${prompts}`);
  }
  if (agent.rules.length > 0) sections.push(`RULES:\n${agent.rules.map((r) => `- ${r}`).join('\n')}`);
  if (agent.menuHandlers.length > 0) {
    const handlers = agent.menuHandlers.map((h) => `[${h.type}]\n${h.text}`).join('\n\n');
    sections.push(
      `MENU HANDLERS (how this agent runs a menu item of each kind; load every file they name with ${READ_FILE.name}, and run workflow.yaml files with ${EXECUTE_WORKFLOW.name}):\n${handlers}`,
    );
  }

  if (hasSkills) sections.push(options.skillCatalog!);
  sections.push('Remember: you have tools. Use them to act; do not only describe them.');
  return sections.join('\n\n');
}

/**
 * What an agent that is an Agent Skill is told besides its persona: its own instructions (the
 * skill's activation steps), its customization as resolved, and its menu, numbered, with the skill
 * or prompt each item runs.
 */
function skillAgentSections(agent: AgentDefinition, skill: NonNullable<AgentDefinition['skill']>): string[] {
  const sections = [`AGENT SKILL ${skill.name} (your instructions; follow its activation steps):\n${skill.instructions}`];
  if (skill.customization !== undefined) {
    sections.push(
      [
        `RESOLVED CUSTOMIZATION (the {agent.*} values of your instructions: ${skill.name}'s customize.toml merged with the project's team and user overrides; the step that resolves it is already done, do not run a script or read those files for it):`,
        '```json',
        JSON.stringify({ agent: skill.customization }, null, 2),
        '```',
      ].join('\n'),
    );
  }
  const menu = agent.commands.map((command, i) => {
    const target = command.targets[0];
    const action = target === undefined ? '' : target.kind === 'skill' ? ` → skill ${target.value}` : ` → prompt: ${target.value}`;
    return `${i + 1}. [${command.cmd}] ${command.description}${action}`;
  });
  sections.push(
    [
      `MENU (numbered; the user picks an item by number, code or description):`,
      ...(menu.length > 0 ? menu : ['(none)']),
      `To run an item that names a skill, call ${ACTIVATE_SKILL.name} with that skill's name and follow what it returns; an item with a prompt: carry out its text.`,
    ].join('\n'),
  );
  return sections;
}

function formatCommand(command: AgentCommand): string {
  const lines = [`${command.cmd} - ${command.description}`];
  for (const target of command.targets) lines.push(`  ${TARGET_LABELS[target.kind]}: ${target.value}`);
  return lines.join('\n');
}
