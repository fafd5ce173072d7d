/**
 * The parsed form of an agent file, the same for both BMAD XML dialects (see `agent-parser.ts`) and
 * for `*.agent.yaml` sources (`agent-yaml.ts`). The parsers build a plain object and validate it
 * with `AgentDefinitionSchema`, so everything past them can trust these types.
 */
import { z } from 'zod';

/**
 * What a command runs. The attribute names of both dialects map onto these kinds:
 * `run-workflow` (source) and `workflow` (compiled) are `workflow`; `exec`, `action`,
 * `validate-workflow`, `data` and `tmpl` keep their names. An agent skill's menu item (BMAD 6.3+)
 * invokes a `skill` by name, or runs its `prompt` text, which is an `action`.
 */
export const CommandTargetKindSchema = z.enum(['workflow', 'exec', 'action', 'validate-workflow', 'data', 'tmpl', 'skill']);
export type CommandTargetKind = z.infer<typeof CommandTargetKindSchema>;

/**
 * One target of a command. `value` is the attribute as written (variables unresolved): a path for
 * every kind except `action`, whose value is an inline instruction or `#prompt-id`, and `skill`,
 * whose value is a skill's name.
 */
export const CommandTargetSchema = z.object({
  kind: CommandTargetKindSchema,
  value: z.string(),
});
export type CommandTarget = z.infer<typeof CommandTargetSchema>;

/** The prefix by which BMAD (6.2 onward) names a skill where a path would stand: `exec="skill:bmad-create-prd"`. */
export const SKILL_TARGET_PREFIX = 'skill:';

/**
 * The target an item attribute gives: a value `skill:<name>` (any attribute; BMAD's prefix
 * convention) names the skill `<name>`, whatever the attribute; anything else is `kind` as written.
 */
export function commandTarget(kind: CommandTargetKind, value: string): CommandTarget {
  const trimmed = value.trim();
  return trimmed.startsWith(SKILL_TARGET_PREFIX) && trimmed.length > SKILL_TARGET_PREFIX.length ? { kind: 'skill', value: trimmed.slice(SKILL_TARGET_PREFIX.length).trim() } : { kind, value };
}

/**
 * A menu command (`<c>` or `<item>`, or a `menu` item of a `*.agent.yaml`). `target` is the primary
 * target (the first of `targets` in the order workflow, validate-workflow, exec, action, tmpl,
 * data); `targets` holds all of them, since real items combine e.g. a workflow with a data file.
 * Both are empty for `*help` and `*exit`.
 */
export const AgentCommandSchema = z.object({
  cmd: z.string().min(1),
  description: z.string(),
  target: CommandTargetSchema.optional(),
  targets: z.array(CommandTargetSchema),
  /**
   * The checklist a validate-workflow item checks against, as written (variables unresolved): the
   * `checklist` of a YAML item or the `checklist="..."` attribute. Not shown to the model.
   */
  checklist: z.string().optional(),
  /** The document a validate-workflow item checks, as written: `document` / `document="..."`. Not shown to the model. */
  document: z.string().optional(),
});
export type AgentCommand = z.infer<typeof AgentCommandSchema>;

/** Who the agent is. Missing parts are empty strings; `<p>` principles are joined as `- ` lines. */
export const PersonaSchema = z.object({
  role: z.string(),
  identity: z.string(),
  communication_style: z.string(),
  principles: z.string(),
});
export type Persona = z.infer<typeof PersonaSchema>;

/** A `<prompt id>` of the agent, referenced by `action="#id"`. */
export const AgentPromptSchema = z.object({
  id: z.string().min(1),
  text: z.string(),
});
export type AgentPrompt = z.infer<typeof AgentPromptSchema>;

/** A compiled agent's `<menu-handlers>` entry: how to run a menu item of that target kind. */
export const MenuHandlerSchema = z.object({
  type: z.string(),
  text: z.string(),
});
export type MenuHandler = z.infer<typeof MenuHandlerSchema>;

/** A parsed, validated agent. */
export const AgentDefinitionSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  title: z.string().min(1),
  icon: z.string().optional(),
  persona: PersonaSchema,
  /** Instructions run at initialisation, in order (source `<i>` items, compiled `<step>`s). */
  criticalActions: z.array(z.string()),
  commands: z.array(AgentCommandSchema),
  prompts: z.array(AgentPromptSchema),
  /** Compiled dialect and `*.agent.yaml`: the `<menu-handlers>` entries (for YAML, those the installer would add). */
  menuHandlers: z.array(MenuHandlerSchema),
  /** Standing rules (`<activation><rules>` lines or `<r>` items), one per entry. */
  rules: z.array(z.string()),
  /**
   * `source`: the XML source dialect (v6 alpha.0); `compiled`: an installed markdown agent;
   * `yaml`: a v6 `*.agent.yaml` source, compiled in memory by `agent-yaml.ts` into what the
   * installer would write; `skill`: an agent installed as an Agent Skill (BMAD 6.3+, `skill-agent.ts`).
   */
  dialect: z.enum(['source', 'compiled', 'yaml', 'skill']),
  /**
   * An agent that is an Agent Skill (`dialect: 'skill'`): its instructions and what its
   * customization gives the session besides the persona and the menu.
   */
  skill: z
    .object({
      /** The skill's name (its `SKILL.md` front matter). */
      name: z.string(),
      /** The skill's folder (absolute, real). */
      dir: z.string(),
      /** `SKILL.md`'s body, with `{skill-root}`, `{skill-name}` and the customization's scalars filled in. */
      instructions: z.string(),
      /** The resolved customization block (`agent`), when the skill has one; shown to the model as it is. */
      customization: z.record(z.string(), z.unknown()).optional(),
      /** `persistent_facts`: literal facts, and `file:` entries (globs under `{project-root}`) loaded at start. */
      persistentFacts: z.array(z.string()),
      /** The module the agent belongs to (`bmm`), whose config it loads. */
      module: z.string().optional(),
    })
    .optional(),
  /** The agent file it was parsed from, as given to the parser. */
  file: z.string(),
});
export type AgentDefinition = z.infer<typeof AgentDefinitionSchema>;

/**
 * An agent Loopwright makes itself rather than reads from a file (the assistant of a folder of
 * skills, a subagent given instructions): a persona of a role and a style, no menu, no critical
 * actions, no rules; `file` is the project root it works in.
 */
export function madeAgent(agent: { id: string; name: string; title: string; role: string; communicationStyle: string; file: string }): AgentDefinition {
  return {
    id: agent.id,
    name: agent.name,
    title: agent.title,
    persona: { role: agent.role, identity: '', communication_style: agent.communicationStyle, principles: '' },
    criticalActions: [],
    commands: [],
    prompts: [],
    menuHandlers: [],
    rules: [],
    dialect: 'skill',
    file: agent.file,
  };
}
