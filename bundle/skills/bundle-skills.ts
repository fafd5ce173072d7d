/**
 * What the bundle loader adds for Agent Skills: the project's skills beside its agents (the skills
 * that are agents among them), and a folder that holds skills and no agent of its own, which runs
 * Loopwright's own agent (`BUILTIN_SKILLS_AGENT`).
 */
import { listedId } from '../agent-ids';
import { moduleNames } from '../bundle-layout';
import type { BundleInfo, LoadBundleOptions } from '../bundle-loader';
import { projectSkills, type ProjectSkills, type ProjectSkillsOptions } from './project-skills';

/** The id of the agent a folder of skills runs (see `BundleInfo.kind`). */
export const BUILTIN_SKILLS_AGENT = 'assistant';

/**
 * `bundle` with its project's skills: listed, and those that are agents added to its agents (an
 * agent of the tree wins over an agent skill of the same id).
 */
export async function withSkills(bundle: BundleInfo, options: LoadBundleOptions): Promise<BundleInfo> {
  // A folder of skills was listed when it was found.
  if (bundle.kind === 'skills') return bundle;
  const modules = bundle.bmadRoot !== undefined && bundle.kind === 'installed' ? await moduleNames(bundle.bmadRoot) : undefined;
  const found = await projectSkills(
    bundle.projectRoot,
    skillOptions(options, { ...(modules !== undefined ? { modules } : {}), ...(bundle.bmadRoot !== undefined ? { bmadRoot: bundle.bmadRoot } : {}) }),
  );
  if (found.skills.length === 0 && found.warnings.length === 0) return bundle;
  const taken = new Set(bundle.agents.map((agent) => listedId(bundle, agent)));
  const agents = [...bundle.agents, ...found.agents.filter((agent) => !taken.has(listedId(bundle, agent)))];
  return {
    ...bundle,
    agents,
    ...(found.skills.length > 0 ? { skills: found.skills, skillFolders: found.folders } : {}),
    ...(found.warnings.length > 0 ? { skillWarnings: found.warnings } : {}),
  };
}

/** A folder whose skills are all it offers: it is its own project, and runs Loopwright's own agent. */
export function skillsFolder(root: string, found: ProjectSkills): BundleInfo {
  return {
    kind: 'skills',
    bundleRoot: root,
    coreRoot: root,
    projectRoot: root,
    agents: [{ id: BUILTIN_SKILLS_AGENT, name: 'Assistant', title: 'Assistant with Agent Skills', file: root, builtin: true, entryPoint: true }],
    skills: found.skills,
    skillFolders: found.folders,
    ...(found.warnings.length > 0 ? { skillWarnings: found.warnings } : {}),
  };
}

/** The skill settings of `options` for `projectSkills`, with what the project adds. */
export function skillOptions(options: LoadBundleOptions, more: ProjectSkillsOptions): ProjectSkillsOptions {
  return {
    ...(options.userSkills ? { userSkills: true } : {}),
    ...(options.skillFolders !== undefined ? { extraFolders: options.skillFolders } : {}),
    ...more,
  };
}
