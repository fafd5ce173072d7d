/**
 * Agents that are Agent Skills, as BMAD has shipped them since 6.3, read into the same
 * `AgentDefinition` the loop runs for every other agent:
 * - **6.3**: `SKILL.md` holds the persona in sections and a `## Capabilities` table (code,
 *   description, skill), and a `bmad-skill-manifest.yaml` beside it says `type: agent` and gives
 *   the name, title, icon and persona fields;
 * - **6.4 onward**: `customize.toml` has an `[agent]` table (name, title, icon, role, identity,
 *   communication_style, principles, persistent_facts, activation steps, `[[agent.menu]]` items
 *   that invoke a `skill` or run a `prompt`), merged with the team and user overrides of
 *   `_bmad/custom/` by BMAD's rules (`customize.ts`).
 *
 * The skill's own instructions (`SKILL.md`'s body, its activation steps) stay the agent's
 * instructions: they go into the system prompt with `{skill-root}`, `{skill-name}` and the
 * customization's scalars (`{agent.icon}`, ...) filled in. The step that resolves the customization
 * with a script is done by Loopwright before the session starts; the prompt says so.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { AgentCommand, AgentDefinition } from '../agent-schema';
import { AgentDefinitionSchema } from '../agent-schema';
import { exists } from '../bundle-layout';
import { AgentParseError } from '../errors';
import { isInside } from '../sandbox/path-inside';
import { parseYamlSafe } from '../safe-yaml';
import { readTextFile } from '../text-content';
import { resolveCustomization } from './customize';
import { skillBody } from './skill-file';

/** The 6.3 manifest beside an agent skill's `SKILL.md`. */
export const SKILL_MANIFEST_FILE = 'bmad-skill-manifest.yaml';
/** The customization file of a skill (BMAD 6.4+). */
export const CUSTOMIZE_FILE = 'customize.toml';
/** Largest `SKILL.md`, manifest or customize file read for an agent. */
const MAX_AGENT_SKILL_BYTES = 256 * 1024;

/** A skill that may be an agent: what discovery found of it. */
export interface AgentSkillSource {
  name: string;
  description?: string;
  /** Its folder, absolute and real. */
  dir: string;
  /** Its `SKILL.md`, absolute. */
  file: string;
}

/** How a skill says it is an agent: a customize.toml `[agent]` table (6.4+) or a manifest `type: agent` (6.3). */
export type AgentSkillShape = 'customize' | 'manifest';

/**
 * Whether the skill in `dir` is an agent, and in which shape: cheap checks only (a line `[agent]`
 * in customize.toml, `type: agent` in the 6.3 manifest), so listing a project parses nothing.
 */
export async function agentSkillShape(dir: string): Promise<AgentSkillShape | undefined> {
  const customize = await readSmall(path.join(dir, CUSTOMIZE_FILE));
  if (customize !== undefined && /^\s*\[agent\]\s*(#.*)?$/m.test(customize)) return 'customize';
  const manifest = await readSmall(path.join(dir, SKILL_MANIFEST_FILE));
  if (manifest !== undefined && /^type:\s*["']?agent["']?\s*$/m.test(manifest)) return 'manifest';
  return undefined;
}

/** What `readSkillAgent` read: the agent and the files it came from. */
export interface SkillAgent {
  agent: AgentDefinition;
  files: string[];
}

/**
 * Reads the agent skill `skill` of the project `projectRoot` (see the module comment). `module` is
 * the module the project's config assigns it, if known. Throws `AgentParseError` naming the file
 * when the skill is not an agent or its files do not parse.
 */
export async function readSkillAgent(skill: AgentSkillSource, projectRoot: string, module?: string): Promise<SkillAgent> {
  const shape = await agentSkillShape(skill.dir);
  const text = (await readTextFile(skill.file, MAX_AGENT_SKILL_BYTES)).content;
  const body = skillBody(text);
  if (shape === 'customize') return fromCustomization(skill, body, projectRoot, module);
  if (shape === 'manifest') return fromManifest(skill, body, projectRoot, module);
  throw new AgentParseError(skill.file, `it is a skill, not an agent: neither ${CUSTOMIZE_FILE} has an [agent] table nor ${SKILL_MANIFEST_FILE} says type: agent`);
}

async function fromCustomization(skill: AgentSkillSource, body: string, projectRoot: string, module: string | undefined): Promise<SkillAgent> {
  const resolved = await resolveCustomization({ skillRoot: skill.dir, projectRoot, skillName: skill.name, key: 'agent' });
  const block = record(resolved.values);
  const where = path.join(skill.dir, CUSTOMIZE_FILE);
  const name = text(block.name) ?? headingName(body) ?? skill.name;
  const commands = menuCommands(block.menu, where);
  const agent = build(skill, {
    name,
    title: text(block.title) ?? skill.description ?? name,
    icon: text(block.icon),
    persona: {
      role: text(block.role) ?? '',
      identity: text(block.identity) ?? '',
      communication_style: text(block.communication_style) ?? '',
      principles: bulletList(block.principles),
    },
    commands,
    instructions: fillSkillText(body, skill, projectRoot, { agent: block }),
    customization: block,
    persistentFacts: strings(block.persistent_facts),
    module,
  });
  return { agent, files: [skill.file, ...resolved.files] };
}

async function fromManifest(skill: AgentSkillSource, body: string, projectRoot: string, module: string | undefined): Promise<SkillAgent> {
  const file = path.join(skill.dir, SKILL_MANIFEST_FILE);
  const manifest = record(parseYamlSafe((await readTextFile(file, MAX_AGENT_SKILL_BYTES)).content, file));
  const name = text(manifest.displayName) ?? headingName(body) ?? skill.name;
  const principles = text(manifest.principles);
  const agent = build(skill, {
    name,
    title: text(manifest.title) ?? skill.description ?? name,
    icon: text(manifest.icon),
    persona: {
      role: text(manifest.role) ?? '',
      identity: text(manifest.identity) ?? '',
      communication_style: text(manifest.communicationStyle) ?? text(manifest.communication_style) ?? '',
      principles: principles ?? '',
    },
    commands: capabilitiesTable(body),
    instructions: fillSkillText(body, skill, projectRoot, {}),
    persistentFacts: [],
    module: module ?? text(manifest.module),
  });
  return { agent, files: [skill.file, file] };
}

interface AgentParts {
  name: string;
  title: string;
  icon: string | undefined;
  persona: AgentDefinition['persona'];
  commands: AgentCommand[];
  instructions: string;
  customization?: Record<string, unknown>;
  persistentFacts: string[];
  module: string | undefined;
}

function build(skill: AgentSkillSource, parts: AgentParts): AgentDefinition {
  const candidate = {
    id: skill.name,
    name: parts.name,
    title: parts.title,
    ...(parts.icon !== undefined ? { icon: parts.icon } : {}),
    persona: parts.persona,
    criticalActions: [],
    commands: parts.commands,
    prompts: [],
    menuHandlers: [],
    rules: [],
    dialect: 'skill' as const,
    file: skill.file,
    skill: {
      name: skill.name,
      dir: skill.dir,
      instructions: parts.instructions,
      ...(parts.customization !== undefined ? { customization: parts.customization } : {}),
      persistentFacts: parts.persistentFacts,
      ...(parts.module !== undefined ? { module: parts.module } : {}),
    },
  };
  const parsed = AgentDefinitionSchema.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AgentParseError(skill.file, `agent skill ${skill.name}: ${issue?.path.join('.') ?? ''} ${issue?.message ?? 'is not a valid agent'}`, {
      ...(issue ? { field: issue.path.join('.') } : {}),
    });
  }
  return parsed.data;
}

/** `[[agent.menu]]` items as commands: `code` is the trigger, `skill` or `prompt` the target. */
function menuCommands(menu: unknown, file: string): AgentCommand[] {
  if (menu === undefined) return [];
  if (!Array.isArray(menu)) throw new AgentParseError(file, 'agent.menu must be an array of tables ([[agent.menu]])', { field: 'agent.menu' });
  const commands: AgentCommand[] = [];
  menu.forEach((item, index) => {
    const entry = record(item);
    const code = text(entry.code) ?? text(entry.id) ?? String(index + 1);
    const skill = text(entry.skill);
    const prompt = text(entry.prompt);
    const targets = skill !== undefined ? [{ kind: 'skill' as const, value: skill }] : prompt !== undefined ? [{ kind: 'action' as const, value: prompt }] : [];
    commands.push({ cmd: code, description: text(entry.description) ?? '', ...(targets[0] ? { target: targets[0] } : {}), targets });
  });
  return commands;
}

/** The 6.3 `## Capabilities` table (`| Code | Description | Skill |`) as commands. */
export function capabilitiesTable(body: string): AgentCommand[] {
  const section = /^##\s+Capabilities\s*$([\s\S]*?)(?=^##\s|(?![\s\S]))/m.exec(body)?.[1] ?? '';
  const rows = section
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.startsWith('|') && line.endsWith('|'))
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
  if (rows.length < 2) return [];
  const header = rows[0]!.map((cell) => cell.toLowerCase());
  const col = (name: string): number => header.indexOf(name);
  const [code, description, skill, prompt] = [col('code'), col('description'), col('skill'), col('prompt')];
  const commands: AgentCommand[] = [];
  for (const row of rows.slice(1)) {
    if (row.every((cell) => /^:?-+:?$/.test(cell))) continue;
    const cmd = (code >= 0 ? row[code] : undefined) || String(commands.length + 1);
    const skillName = skill >= 0 ? stripTicks(row[skill]) : undefined;
    const promptText = prompt >= 0 ? row[prompt] : undefined;
    const targets = skillName ? [{ kind: 'skill' as const, value: skillName }] : promptText ? [{ kind: 'action' as const, value: promptText }] : [];
    commands.push({ cmd, description: (description >= 0 ? row[description] : undefined) ?? '', ...(targets[0] ? { target: targets[0] } : {}), targets });
  }
  return commands;
}

/**
 * `text` of the skill `skill` with its own variables filled in: `{skill-name}`, `{skill-root}`
 * (written `{project-root}/<path>` when the skill lies inside the project, so the text is the same
 * on every machine and the tools resolve it), and `{<block>.<key>}` for every scalar (text, number,
 * boolean) of the given customization blocks (`{agent.icon}`, `{workflow.prd_template}`). Other
 * variables (`{user_name}`, `{project-root}`, structured values such as `{agent.menu}`) stay as
 * written: the config and the resolved block shown beside the text give them.
 */
export function fillSkillText(text_: string, skill: Pick<AgentSkillSource, 'name' | 'dir'>, projectRoot: string, blocks: Record<string, Record<string, unknown>>): string {
  const root = skillRootVariable(skill.dir, projectRoot);
  return text_.replace(/\{([A-Za-z_][\w-]*(?:\.[\w-]+)*)\}/g, (whole, name: string) => {
    if (name === 'skill-name') return skill.name;
    if (name === 'skill-root') return root;
    const dot = name.indexOf('.');
    if (dot < 0) return whole;
    const block = blocks[name.slice(0, dot)];
    if (block === undefined) return whole;
    let value: unknown = block;
    for (const key of name.slice(dot + 1).split('.')) value = record(value)[key];
    return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : whole;
  });
}

/** `{skill-root}` as the prompt writes it: `{project-root}/<relative>` inside the project, else the absolute folder. */
export function skillRootVariable(dir: string, projectRoot: string): string {
  if (!isInside(dir, projectRoot, true)) return dir;
  const relative = path.relative(projectRoot, dir).split(path.sep).join('/');
  return relative === '' ? '{project-root}' : `{project-root}/${relative}`;
}

/** The agent's name from the body's first heading (`# John — Product Manager` or `# John`). */
function headingName(body: string): string | undefined {
  const heading = /^#\s+(.+)$/m.exec(body)?.[1]?.trim();
  if (heading === undefined) return undefined;
  return heading.split(/\s+[—–-]\s+/)[0]?.trim() || undefined;
}

function bulletList(value: unknown): string {
  if (typeof value === 'string') return value;
  return strings(value)
    .map((line) => `- ${line}`)
    .join('\n');
}

function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function stripTicks(value: string | undefined): string | undefined {
  const stripped = value?.replace(/^`+|`+$/g, '').trim();
  return stripped ? stripped : undefined;
}

async function readSmall(file: string): Promise<string | undefined> {
  if (!(await exists(file))) return undefined;
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) return undefined;
    return (await readTextFile(file, MAX_AGENT_SKILL_BYTES)).content;
  } catch {
    return undefined;
  }
}
