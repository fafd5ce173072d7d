/**
 * What a project's Agent Skills add to the bundle loader: the skills themselves (for the catalog
 * and `activate_skill`), the skill folders they came from (recorded with the session, so an
 * activation finds a skill the same way), and the skills that are agents (BMAD 6.3+), listed
 * beside the agents of `_bmad/<module>/agents/` and run like them.
 *
 * Which module an agent skill belongs to (whose `config.yaml` it loads) is what the project's
 * config says: the `[agents.<name>] module` of `_bmad/config.toml` (6.4+), the 6.3 manifest's
 * `module`, else the only module besides core, else core.
 */
import * as path from 'node:path';
import type { BundleAgent } from '../bundle-loader';
import { CORE_MODULE, exists } from '../bundle-layout';
import { isInside } from '../sandbox/path-inside';
import { parseYamlSafe } from '../safe-yaml';
import { readTextFile } from '../text-content';
import { resolveCentralConfig } from './bmad-config';
import { ACTIVATE_SKILL } from '../../common/tools/activate-skill';
import { catalogTokens, skillCatalog } from './catalog';
import { discoverSkills, type DiscoveredSkill } from './discover';
import { agentSkillShape, SKILL_MANIFEST_FILE } from './skill-agent';

/** A skill as the loader lists it: what discovery found (name, description, folder, scope...). */
export type ProjectSkill = DiscoveredSkill;

/** A skill as `inspect` shows it. */
export interface SkillSummary {
  name: string;
  description: string;
  dir: string;
  folder: string;
  scope: DiscoveredSkill['scope'];
  /** Left out of the catalog (`disable-model-invocation: true`). */
  hidden?: boolean;
}

/** `skill` as `inspect` shows it. */
export function skillSummary(skill: ProjectSkill): SkillSummary {
  return { name: skill.name, description: skill.description, dir: skill.dir, folder: skill.folder, scope: skill.scope, ...(skill.disableModelInvocation ? { hidden: true } : {}) };
}

/** The system prompt's catalog of the project's skills, naming the skill tool. */
export function projectCatalog(skills: readonly ProjectSkill[]): string {
  return skillCatalog(skills, { toolName: ACTIVATE_SKILL.name });
}

/** Estimated tokens of `projectCatalog(skills)`. */
export function projectCatalogTokens(skills: readonly ProjectSkill[]): number {
  return catalogTokens(skills, { toolName: ACTIVATE_SKILL.name });
}

/** What `projectSkills` found. */
export interface ProjectSkills {
  skills: ProjectSkill[];
  /** The skills folders looked in, in precedence order (recorded with the session). */
  folders: string[];
  /** The skills that are agents, as bundle agents (`skill` set). */
  agents: BundleAgent[];
  /** Discovery's problems, one line each (`validate` and `inspect` show them). */
  warnings: string[];
}

/** Settings of `projectSkills`: the user's own. */
export interface ProjectSkillsOptions {
  /** Also the user's skills (`~/.agents/skills`, `~/.claude/skills`, ...). Off by default: a session's skills are the project's. */
  userSkills?: boolean;
  /** More skills folders, after the project's. */
  extraFolders?: string[];
  /** The project's modules (`_bmad/<m>/`), to tell an agent skill's module. */
  modules?: string[];
  /** The project's installed tree (`_bmad/`), whose config assigns agents to modules. */
  bmadRoot?: string;
}

/** The skills of the project `projectRoot` (see the module comment). */
export async function projectSkills(projectRoot: string, options: ProjectSkillsOptions = {}): Promise<ProjectSkills> {
  const found = await discoverSkills({
    projectRoot,
    ...(options.userSkills ? { userSkills: true } : {}),
    ...(options.extraFolders !== undefined ? { extraFolders: options.extraFolders } : {}),
  });
  const warnings = found.diagnostics.map((d) => `${d.level === 'error' ? 'Skill skipped' : 'Skill'}: ${d.message}${d.message.includes(d.file) ? '' : ` (${d.file})`}`);
  const skills: ProjectSkill[] = found.skills;
  const folders = [...new Set(found.skills.map((skill) => skill.folder))];
  const agentModules = await configuredAgentModules(projectRoot, options.bmadRoot, warnings);
  const agents: BundleAgent[] = [];
  for (const skill of skills) {
    const shape = await agentSkillShape(skill.dir);
    if (shape === undefined) continue;
    const configured = agentModules[skill.name] ?? (shape === 'manifest' ? await manifestHead(skill.dir) : undefined);
    const module = configured?.module ?? fallbackModule(options.modules);
    agents.push({
      id: skill.name,
      file: skill.file,
      ...(module !== undefined ? { module } : {}),
      ...(configured?.name !== undefined ? { name: configured.name } : {}),
      ...(configured?.title !== undefined ? { title: configured.title } : {}),
      description: skill.description,
      skill: { name: skill.name, dir: skill.dir },
    });
  }
  return { skills, folders: folders.length > 0 ? folders : [], agents, warnings };
}

/** The agents table of the project's central config (`[agents.<name>]`: module, name, title), when it has one. */
async function configuredAgentModules(projectRoot: string, bmadRoot: string | undefined, warnings: string[]): Promise<Record<string, { module?: string; name?: string; title?: string }>> {
  if (bmadRoot === undefined || !(await exists(path.join(bmadRoot, 'config.toml')))) return {};
  let config: Record<string, unknown>;
  try {
    config = await resolveCentralConfig(projectRoot);
  } catch (error) {
    warnings.push(`Config: ${(error as Error).message.replace(/\s+/g, ' ')}`);
    return {};
  }
  const agents = config.agents;
  if (typeof agents !== 'object' || agents === null || Array.isArray(agents)) return {};
  const out: Record<string, { module?: string; name?: string; title?: string }> = {};
  for (const [name, value] of Object.entries(agents as Record<string, unknown>)) {
    if (typeof value !== 'object' || value === null) continue;
    const entry = value as Record<string, unknown>;
    const pick = (key: string) => (typeof entry[key] === 'string' && (entry[key] as string).trim() !== '' ? (entry[key] as string) : undefined);
    out[name] = { ...(pick('module') ? { module: pick('module') } : {}), ...(pick('name') ? { name: pick('name') } : {}), ...(pick('title') ? { title: pick('title') } : {}) };
  }
  return out;
}

/** Module, name and title from a 6.3 agent skill's manifest (`bmad-skill-manifest.yaml`); nothing when it does not read. */
async function manifestHead(dir: string): Promise<{ module?: string; name?: string; title?: string }> {
  const file = path.join(dir, SKILL_MANIFEST_FILE);
  try {
    const data = parseYamlSafe((await readTextFile(file, 64 * 1024)).content, file) as Record<string, unknown> | null;
    const pick = (key: string) => (typeof data?.[key] === 'string' && (data[key] as string).trim() !== '' ? (data[key] as string).trim() : undefined);
    const [module, name, title] = [pick('module'), pick('displayName'), pick('title')];
    return { ...(module ? { module } : {}), ...(name ? { name } : {}), ...(title ? { title } : {}) };
  } catch {
    return {};
  }
}

/** The module of an agent skill the config does not place: the only module besides core, else core. */
function fallbackModule(modules: string[] | undefined): string | undefined {
  if (modules === undefined || modules.length === 0) return undefined;
  const others = modules.filter((m) => m !== CORE_MODULE);
  return others.length === 1 ? others[0] : modules.includes(CORE_MODULE) ? CORE_MODULE : undefined;
}

/**
 * The skill a missing name most likely meant, for a "did you mean": the name with a `-part` added
 * or dropped at its end (BMAD 6.3's analyst names `bmad-product-brief-preview`, the skill it installs
 * is `bmad-product-brief`), the closest such; otherwise none. Edit distance is not used: skills of one
 * project differ by a word or two (`bmad-create-prd`, `bmad-edit-prd`), and the nearest of those is a
 * different skill, not a typo.
 */
export function similarSkillName(name: string, names: readonly string[]): string | undefined {
  const related = names.filter((other) => other !== name && (other.startsWith(`${name}-`) || name.startsWith(`${other}-`)));
  return related.sort((a, b) => Math.abs(a.length - name.length) - Math.abs(b.length - name.length) || a.localeCompare(b))[0];
}

/** `" (did you mean X?)"` when `similarSkillName` finds one, else nothing: the tail of a missing skill's message. */
export function didYouMean(name: string, names: readonly string[]): string {
  const similar = similarSkillName(name, names);
  return similar === undefined ? '' : ` (did you mean ${similar}?)`;
}

/** What `findSkillInFolders` found: the skill, and the names of every skill there (for a "did you mean"). */
export interface FoundSkill {
  skill?: { name: string; dir: string; file: string; allowedTools?: string[] };
  names: string[];
}

/**
 * The skill named `name` in the skills folders `folders` (recorded with a session, in precedence
 * order): the first folder that has it wins, as in discovery. Reads the folders as they are now.
 * `scopeRoot` (the project root) is where a skill folder's symlink may lead.
 */
export async function findSkillInFolders(folders: readonly string[], name: string, scopeRoot?: string): Promise<FoundSkill> {
  const names = new Set<string>();
  for (const folder of folders) {
    // A skill folder that is a symlink elsewhere in the project was found at discovery: for a folder
    // of the project, the project is the boundary (`scopeRoot`), not the skills folder itself.
    const inside = scopeRoot !== undefined && isInside(folder, scopeRoot, true);
    const found = await discoverSkills({ projectRoot: folder, extraFolders: [folder], ...(inside ? { extraScopeRoot: scopeRoot } : {}) });
    const extra = found.skills.filter((s) => s.scope === 'extra');
    const skill = extra.find((s) => s.name === name);
    if (skill !== undefined) return { skill: { name: skill.name, dir: skill.dir, file: skill.file, ...(skill.allowedTools ? { allowedTools: skill.allowedTools } : {}) }, names: [] };
    for (const s of extra) names.add(s.name);
  }
  return { names: [...names].sort() };
}
