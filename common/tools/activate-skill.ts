/**
 * The `activate_skill` tool: load an Agent Skill's instructions by name (tier 2 of progressive
 * disclosure). The catalog in the system prompt names the skills; this returns one skill's
 * instructions with its variables and customization filled in, the folder its bare paths resolve
 * from, and the list of its files, which the model then reads with `read_file` as it needs them.
 * Offered only to sessions whose project has skills.
 */
import { defineTool } from './tool-spec';

export const ACTIVATE_SKILL = defineTool({
  name: 'activate_skill',
  description:
    "Load an Agent Skill's full instructions by its name (from the skills listed in the system prompt), with the list of its files. Call it when a task matches a skill's description, or when a menu item or instruction says to invoke a skill.",
  parameters: {
    name: { type: 'string', nonEmpty: true, description: 'The skill to activate, exactly as the skills list names it, for example bmad-create-prd.' },
  },
  access: 'read',
  target: 'name',
  retries: 'quick',
  offeredWhen: 'skills',
  promptRules: [
    "- To use an Agent Skill (when a task matches a skill's description, or a menu item or instruction says to invoke one), call the activate_skill tool with its name, then follow the instructions it returns. A bare path in those instructions (references/x.md, assets/y.md) is relative to the skill's folder: read it with read_file as written.",
  ],
});
