/**
 * Finds out what a bundle path points at and which agents it offers.
 *
 * Three layouts are accepted:
 * - `bundle`: a folder holding `config.yaml`, `agents/`, `workflows/` and optionally a `bundle.yaml`
 *   manifest. `{bundle-root}` is that folder. When it sits inside an installed BMAD tree
 *   (`<project>/bmad/custom/bundles/x`), `{project-root}` is `<project>` and `{core-root}` is
 *   `<project>/bmad/core` (when present). Otherwise it is stand-alone: `{core-root}` is the bundle
 *   folder, and `{project-root}` is the `projectRoot` the user gave (absolute), else the bundle
 *   folder itself, so nothing depends on the worker's working directory.
 * - `installed`: a project folder holding `bmad/`, whose modules (`bmad/bmm`, `bmad/core`, ...)
 *   each have `config.yaml` and `agents/`. Accepted also when pointed at `bmad/` itself or at a
 *   module folder (the project root is found by walking up). `{project-root}` is the folder
 *   holding `bmad/`, `{core-root}` is `bmad/core`, `{bundle-root}` is `bmad/`.
 *
 * - `source`: a BMAD v6 source tree (`src/` holding `core/` and `modules/<m>/`, agents written as
 *   `*.agent.yaml`), or one of its modules; see `source-tree.ts`. Listed like an installed tree
 *   (`bmm/pm`); roots like a stand-alone bundle's, the tree as `{bundle-root}`.
 *
 * Agent files are `.md` files (not a README) and `*.agent.yaml` / `*.agent.yml` sources, in every
 * layout; when two give the same id, the source wins (`agent-scan.ts`, `shadowedAgents`).
 *
 * An installed tree is recognised by its structure, never by a folder name alone: a folder named
 * `bmad` counts as one when it holds the installer's `_cfg/` folder or a `core` module (a folder
 * with `agents/` or `config.yaml`) other than the folder pointed at. A bundle kept in `~/bmad/x`
 * is therefore stand-alone, and its project root is never the home folder picked by a name.
 *
 * Roots are checked before they are trusted (`UnsafeRootError`): `bmad/` and `bmad/core` must
 * really lie inside the project (not be symlinks out of it), and no root may be `/`, the home
 * folder or a folder above it unless the user allows a broad project root. Agent files (scanned
 * or listed in the manifest) go through the same path guard as the tools' paths, so a manifest
 * entry or an agent symlinked out of the bundle is refused, and only regular files are read.
 *
 * The names each layout is recognised by, and the checks made with them, are in `bundle-layout.ts`
 * (shared with `protected-paths.ts`, which keeps the model from writing them); the root checks
 * are in `bundle-roots.ts`.
 *
 * Agents are listed without being parsed (name and title are read from the `<agent>` start tag or
 * a source's `agent.metadata`, when cheap to find); parsing happens only for the agent a session
 * asks for.
 */
import * as path from 'node:path';
import { agentIdOfFile } from './agent-file';
import { parseManifest, readManifestFile, type BundleManifest } from './bundle-manifest';
import { AgentNotFoundError, BundleError, BundleLoadError, SecurityViolationError } from './errors';
import { AGENTS_FOLDER, bmadFolderOf, CONFIG_FILE, CORE_MODULE, exists, findInstalledTree, hasModules, isBmadFolderName, looksLikeBundle, MANIFEST_FILE, moduleNames } from './bundle-layout';
import { checkRoots, coreFolder, realBmadFolder, realDirectory, realProjectRoot } from './sandbox/bundle-roots';
import { agentHead, scanAgents, type ShadowedAgent } from './agent-scan';
import { guardRead, isInside } from './sandbox/path-guard';
import { availableIds } from './agent-ids';
import { skillOptions, skillsFolder, withSkills } from './skills/bundle-skills';
import { projectSkills, type ProjectSkill } from './skills/project-skills';
import { isSourceTree, loadSourceTree, sourceModuleConfig, sourceTreeAbove } from './source-tree';

export { agentHead } from './agent-scan';

/** Settings of `loadBundle`, all the user's own (never a bundle's). */
export interface LoadBundleOptions {
  /**
   * `{project-root}` of a stand-alone bundle: an absolute folder (the user's working folder).
   * Ignored for an installed tree and for a bundle inside one: their project is the folder
   * holding `bmad/`.
   */
  projectRoot?: string;
  /** Accept `/`, the home folder or a folder above it as a root (refused otherwise). */
  allowBroadProjectRoot?: boolean;
  /** Also offer the user's own skills (`~/.agents/skills`, `~/.claude/skills`, ...). */
  userSkills?: boolean;
  /** More skills folders to look in, after the project's. */
  skillFolders?: string[];
}

/** An agent a bundle offers. `file` is absolute. */
export interface BundleAgent {
  /** Manifest id, else the file name without extension. */
  id: string;
  name?: string;
  title?: string;
  file: string;
  /** Installed and source trees: the module folder name (`bmm`, `core`, ...). */
  module?: string;
  /** The `id` attribute of the `<agent>` element, when found (e.g. `bmad/bmm/agents/pm.md`). */
  xmlId?: string;
  /** From the manifest. */
  description?: string;
  entryPoint?: boolean;
  /** From the manifest: the agent's own tool allow-list (names or `*` patterns). */
  tools?: string[];
  /** From the manifest: the agents it may delegate to (ids or `*` patterns). */
  delegates?: string[];
  /** An agent that is an Agent Skill (BMAD 6.3+): its skill's name and folder; `file` is its `SKILL.md`. */
  skill?: { name: string; dir: string };
  /** Loopwright's own agent for a folder of skills without one (`file` is the project folder, never read). */
  builtin?: true;
}

/** What `loadBundle` found. All paths are absolute and symlink-resolved. */
export interface BundleInfo {
  /** `skills`: a folder holding Agent Skills and no agent of its own; it runs `BUILTIN_SKILLS_AGENT`. */
  kind: 'bundle' | 'installed' | 'source' | 'skills';
  bundleRoot: string;
  coreRoot: string;
  projectRoot: string;
  /** The `bmad/` folder of the installed tree the bundle is, or sits in; absent for a stand-alone bundle. */
  bmadRoot?: string;
  /** The bundle's config.yaml; for an installed tree, that of the module pointed at, else core's. */
  configPath?: string;
  /** Installed and source trees: the module the bundle path pointed at, if any. */
  module?: string;
  manifest?: BundleManifest;
  agents: BundleAgent[];
  /** Agent files not listed because a file of the same id wins (see `agent-scan.ts`); `validate` warns. */
  shadowedAgents?: ShadowedAgent[];
  /** The project's Agent Skills (`skills/project-skills.ts`), when it has any. */
  skills?: ProjectSkill[];
  /** The skills folders they were found in, in precedence order. */
  skillFolders?: string[];
  /** Problems met while discovering skills, one line each. */
  skillWarnings?: string[];
}

/** The agent `findAgent` chose, with the config its critical actions are expected to load. */
export interface FoundAgent extends BundleAgent {
  /** Bundle: the bundle's config.yaml. Installed tree: the agent's own module's config.yaml. */
  configPath?: string;
}

/**
 * Loads the bundle at `bundlePath` (see the module comment for the accepted layouts). Throws
 * `BundleLoadError` (not a bundle, a bad manifest, an agent file leaving the bundle) or
 * `UnsafeRootError` (a root that leads out of the project, or is too broad).
 */
export async function loadBundle(bundlePath: string, options: LoadBundleOptions = {}): Promise<BundleInfo> {
  const bundle = await locateBundle(bundlePath, options);
  await checkRoots(bundle, options);
  return withSkills(bundle, options);
}

export { availableIds, listedId } from './agent-ids';
export { BUILTIN_SKILLS_AGENT } from './skills/bundle-skills';

async function locateBundle(bundlePath: string, options: LoadBundleOptions): Promise<BundleInfo> {
  const start = await realDirectory(bundlePath);

  const project = await installedProjectAt(start);
  if (project !== undefined) return loadInstalled(project, undefined);
  const tree = await findInstalledTree(start);
  if (tree && path.dirname(start) === tree && !(await exists(path.join(start, MANIFEST_FILE)))) {
    return loadInstalled(path.dirname(tree), path.basename(start));
  }
  const hasManifest = await exists(path.join(start, MANIFEST_FILE));
  if (!hasManifest && (await isSourceTree(start))) return loadSourceTree(start, undefined, options.projectRoot);
  const sourceTree = hasManifest ? undefined : await sourceTreeAbove(start);
  if (sourceTree) return loadSourceTree(sourceTree.tree, sourceTree.module, options.projectRoot);
  if (await looksLikeBundle(start)) return loadBundleFolder(start, tree, options.projectRoot);
  const skills = await projectSkills(start, skillOptions(options, {}));
  if (skills.skills.length > 0) return skillsFolder(start, skills);
  throw new BundleLoadError(
    `Not a bundle: ${bundlePath}\nExpected a folder with config.yaml, agents/ or bundle.yaml, a project folder holding _bmad/ (or bmad/), ` +
      `a folder of Agent Skills (.agents/skills/, .claude/skills/, ...), or a BMAD source tree (core/ and modules/<m>/ with agents/)`,
    { file: bundlePath },
  );
}

/**
 * The project folder when the (real) folder `start` is an installed tree's project or its `bmad/`
 * folder; `undefined` otherwise. Checked first: such a folder is never read as a bundle folder, so
 * its `bundle.yaml`, if any, is not the manifest.
 */
export async function installedProjectAt(start: string): Promise<string | undefined> {
  if ((await bmadFolderOf(start)) !== undefined) return start;
  if (isBmadFolderName(path.basename(start)) && (await hasModules(start))) return path.dirname(start);
  return undefined;
}

/**
 * Finds an agent by manifest id, file name without extension, path relative to the bundle root,
 * `<module>/<name>` (installed trees) or the `<agent id>` attribute. An empty id picks the
 * manifest's entry point, or the only agent. When several agents match, one in the module the
 * bundle path pointed at wins; otherwise the match is ambiguous. Not found: `AgentNotFoundError`
 * listing the available ids.
 */
export async function findAgent(bundle: BundleInfo, agentId: string): Promise<FoundAgent> {
  const agent = matchAgent(bundle, agentId);
  if (agent.builtin) return agent;
  // An agent skill's SKILL.md lies in a skills folder of the project (or one the user named), not in the tree.
  const file = await guardAgentFile(agent.file, agent.skill ? agent.skill.dir : bundle.bundleRoot, {});
  if (file === undefined) {
    throw new BundleLoadError(`Agent file not found: ${agent.file}`, { file: agent.file, field: 'file' });
  }
  const configPath =
    bundle.kind === 'installed' && agent.module
      ? await moduleConfig(bundle.bundleRoot, agent.module)
      : bundle.kind === 'source' && agent.module
        ? await sourceModuleConfig(bundle.bundleRoot, agent.module)
        : bundle.configPath;
  return { ...agent, file, ...(configPath ? { configPath } : {}) };
}

/** The agent `findAgent` picks, by the listed agents alone (no file is read); the same errors. */
export function matchAgent(bundle: Pick<BundleInfo, 'kind' | 'bundleRoot' | 'module' | 'agents'>, agentId: string): BundleAgent {
  const wanted = agentId.trim();
  let matches: BundleAgent[];
  if (wanted === '') {
    const entry = bundle.agents.filter((a) => a.entryPoint);
    matches = entry.length > 0 ? entry.slice(0, 1) : bundle.agents.length === 1 ? bundle.agents : [];
  } else {
    matches = bundle.agents.filter((a) => agentKeys(bundle, a).includes(wanted));
    if (matches.length === 0) {
      const lower = wanted.toLowerCase();
      matches = bundle.agents.filter((a) => agentKeys(bundle, a).some((k) => k.toLowerCase() === lower));
    }
  }
  if (matches.length > 1 && bundle.module) {
    const inModule = matches.filter((a) => a.module === bundle.module);
    if (inModule.length > 0) matches = inModule;
  }
  if (matches.length === 0) throw new AgentNotFoundError(agentId, availableIds(bundle));
  if (matches.length > 1) {
    throw new BundleLoadError(`Agent id is ambiguous: ${agentId}\nMatching agents: ${matches.map((a) => `${a.module}/${a.id}`).join(', ')}`);
  }
  return matches[0];
}

/**
 * Checks an agent file with the path guard the tools use (inside `root` after resolving symlinks,
 * not a secret file) and returns its real path, or `undefined` when it does not exist. A refusal
 * is a `BundleLoadError` naming `field` when given (a manifest entry), else the file.
 */
export async function guardAgentFile(file: string, root: string, where: { manifest?: string; field?: string }): Promise<string | undefined> {
  try {
    return await guardRead(file, [root]);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException)?.code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    if (!(error instanceof BundleError)) throw error;
    const reason = error instanceof SecurityViolationError ? 'leaves the bundle folder (through a symlink)' : `is refused: ${error.message}`;
    if (where.manifest !== undefined && where.field !== undefined) {
      throw new BundleLoadError(`Invalid bundle manifest ${where.manifest}: ${where.field} ${reason}`, {
        file: where.manifest,
        field: where.field,
        cause: error,
      });
    }
    throw new BundleLoadError(`Agent file ${file} ${reason}`, { file, field: 'file', cause: error });
  }
}

function agentKeys(bundle: Pick<BundleInfo, 'kind' | 'bundleRoot'>, agent: BundleAgent): string[] {
  const keys = agent.skill ? skillAgentKeys(agent.skill.name) : [agent.id, agentIdOfFile(agent.file), path.relative(bundle.bundleRoot, agent.file)];
  if (agent.module) keys.push(...keys.map((key) => `${agent.module}/${key}`));
  if (agent.xmlId) keys.push(agent.xmlId);
  return keys;
}

/**
 * The ids an agent skill is asked for by: its name, and its name without BMAD's `bmad-agent-`
 * prefix (`pm` for `bmad-agent-pm`), the id the same agent had before it became a skill.
 */
function skillAgentKeys(name: string): string[] {
  const short = /^bmad-agent-(.+)$/.exec(name)?.[1];
  return short !== undefined ? [name, short] : [name];
}

async function loadBundleFolder(root: string, tree: string | undefined, givenProjectRoot: string | undefined): Promise<BundleInfo> {
  let projectRoot = root;
  let coreRoot = root;
  if (tree) {
    projectRoot = path.dirname(tree);
    const core = await coreFolder(tree, projectRoot);
    if (core !== undefined) coreRoot = core;
  } else if (givenProjectRoot !== undefined) {
    projectRoot = await realProjectRoot(givenProjectRoot);
  }
  const configFile = path.join(root, CONFIG_FILE);
  const manifestFile = path.join(root, MANIFEST_FILE);
  let manifest: BundleManifest | undefined;
  let agents: BundleAgent[];
  let shadowed: ShadowedAgent[] = [];
  if (await exists(manifestFile)) {
    manifest = parseManifest(await readManifestFile(manifestFile, root), manifestFile);
    agents = [];
    for (const [index, entry] of manifest.agents.entries()) {
      const file = path.resolve(root, entry.file);
      const field = `agents.${index}.file`;
      if (!isInside(file, root, true)) {
        throw new BundleLoadError(`Invalid bundle manifest ${manifestFile}: ${field} leaves the bundle folder`, {
          file: manifestFile,
          field,
        });
      }
      // The same guard as a tool's path: a symlink out of the bundle is refused here, at load.
      await guardAgentFile(file, root, { manifest: manifestFile, field });
      agents.push({
        id: entry.id,
        file,
        ...(entry.name !== undefined ? { name: entry.name } : {}),
        ...(entry.title !== undefined ? { title: entry.title } : {}),
        ...(entry.description !== undefined ? { description: entry.description } : {}),
        ...(entry.entry_point !== undefined ? { entryPoint: entry.entry_point } : {}),
        ...(entry.tools !== undefined ? { tools: entry.tools } : {}),
        ...(entry.delegates !== undefined ? { delegates: entry.delegates } : {}),
      });
    }
    // Fill in the `<agent id>` for lookups; a missing file is reported by findAgent, not here.
    for (const [index, agent] of agents.entries()) {
      const head = await agentHead(agent.file).catch((error: unknown) => manifestEntryError(error, manifestFile, index));
      if (head?.xmlId) agent.xmlId = head.xmlId;
    }
  } else {
    const scanned = await scanAgents(path.join(root, AGENTS_FOLDER), undefined, root);
    agents = scanned.agents;
    shadowed = scanned.shadowed;
  }
  return {
    kind: 'bundle',
    bundleRoot: root,
    coreRoot,
    projectRoot,
    ...(tree ? { bmadRoot: tree } : {}),
    ...((await exists(configFile)) ? { configPath: configFile } : {}),
    ...(manifest ? { manifest } : {}),
    agents,
    ...(shadowed.length > 0 ? { shadowedAgents: shadowed } : {}),
  };
}

async function loadInstalled(projectRoot: string, module: string | undefined): Promise<BundleInfo> {
  const bmad = await realBmadFolder(projectRoot);
  const agents: BundleAgent[] = [];
  const shadowed: ShadowedAgent[] = [];
  for (const name of await moduleNames(bmad)) {
    const scanned = await scanAgents(path.join(bmad, name, AGENTS_FOLDER), name, bmad);
    agents.push(...scanned.agents);
    shadowed.push(...scanned.shadowed);
  }
  const configPath = (module && (await moduleConfig(bmad, module))) || (await moduleConfig(bmad, CORE_MODULE));
  return {
    kind: 'installed',
    bundleRoot: bmad,
    coreRoot: (await coreFolder(bmad, projectRoot)) ?? path.join(bmad, CORE_MODULE),
    projectRoot,
    bmadRoot: bmad,
    ...(configPath ? { configPath } : {}),
    ...(module ? { module } : {}),
    agents,
    ...(shadowed.length > 0 ? { shadowedAgents: shadowed } : {}),
  };
}

async function moduleConfig(bmad: string, module: string): Promise<string | undefined> {
  const file = path.join(bmad, module, CONFIG_FILE);
  return (await exists(file)) ? file : undefined;
}

/** A manifest entry whose file cannot be read as an agent: missing is left to findAgent, the rest is the entry's fault. */
function manifestEntryError(error: unknown, manifestFile: string, index: number): undefined {
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
  if (!(error instanceof BundleError)) throw error;
  const field = `agents.${index}.file`;
  throw new BundleLoadError(`Invalid bundle manifest ${manifestFile}: ${field} ${(error as Error).message}`, {
    file: manifestFile,
    field,
    cause: error,
  });
}
