/**
 * BMAD v6 source trees: the `src/` folder of a BMAD checkout, holding `core/` and `modules/<m>/`,
 * whose `agents/` folders hold `*.agent.yaml` sources (or source-dialect `.md` agents, as in
 * alpha.0), and the installer's templates under `utility/models/`. Loopwright lists their agents
 * as it lists an installed tree's, qualified by module (`bmm/pm`, `core/bmad-master`).
 *
 * Recognised by structure, never by a folder name alone: a folder is a source tree when it has a
 * `modules/` folder, the `agents/` folder of `core/` or of one of `modules/<m>/` holds an agent
 * file, and it is no stand-alone bundle itself (no `config.yaml`, `agents/` or `bundle.yaml`). Pointed at `core/` or `modules/<m>/` of such a tree, the loader loads the whole tree with
 * that module preferred (as an installed tree pointed at one of its modules).
 *
 * Roots: `{bundle-root}` is the tree; `{core-root}` its `core/` (refused when a symlink leads out
 * of the tree), else the tree; `{project-root}` the project root the user gave (absolute, as every
 * session gives), else the folder holding the tree when that folder holds an installed tree
 * (`bmad/` with modules, as in a BMAD checkout installed in place) and is no broad root, else the
 * tree itself, as for a stand-alone bundle: the folder above `src/` is never taken by its place
 * alone (it could be the home folder). The config is the module's `config.yaml` when it has one
 * (sources usually have none: the installer writes it), else core's.
 */
import * as path from 'node:path';
import { promises as fs } from 'node:fs';
import { isAgentFileName } from './agent-file';
import { scanAgents, type ShadowedAgent } from './agent-scan';
import type { BundleAgent, BundleInfo } from './bundle-loader';
import { AGENTS_FOLDER, bmadFolderOf, CONFIG_FILE, CORE_MODULE, exists, isDirectory, looksLikeBundle, SOURCE_MODULES_FOLDER } from './bundle-layout';
import { coreFolder, realProjectRoot } from './sandbox/bundle-roots';
import { isBroadRoot } from './sandbox/path-guard';

export { SOURCE_MODULES_FOLDER } from './bundle-layout';

/** The module folders of the source tree `tree`: `core/` and every `modules/<m>/` (not `_x` or `.x`), by name. */
export async function sourceModules(tree: string): Promise<{ name: string; dir: string }[]> {
  const found: { name: string; dir: string }[] = [];
  if (await isDirectory(path.join(tree, CORE_MODULE))) found.push({ name: CORE_MODULE, dir: path.join(tree, CORE_MODULE) });
  const modules = path.join(tree, SOURCE_MODULES_FOLDER);
  if (await isDirectory(modules)) {
    for (const entry of await fs.readdir(modules, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('_') || entry.name.startsWith('.')) continue;
      found.push({ name: entry.name, dir: path.join(modules, entry.name) });
    }
  }
  return found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Whether `dir` is a source tree (see the module comment). */
export async function isSourceTree(dir: string): Promise<boolean> {
  if (!(await isDirectory(path.join(dir, SOURCE_MODULES_FOLDER))) || (await looksLikeBundle(dir))) return false;
  for (const module of await sourceModules(dir)) {
    if (await holdsAgentFiles(path.join(module.dir, AGENTS_FOLDER))) return true;
  }
  return false;
}

/** The source tree `start` is a module of (`<tree>/core` or `<tree>/modules/<m>`), with that module's name. */
export async function sourceTreeAbove(start: string): Promise<{ tree: string; module: string } | undefined> {
  const parent = path.dirname(start);
  const name = path.basename(start);
  if (name === CORE_MODULE && (await isSourceTree(parent))) return { tree: parent, module: name };
  if (path.basename(parent) === SOURCE_MODULES_FOLDER && (await isSourceTree(path.dirname(parent)))) {
    return { tree: path.dirname(parent), module: name };
  }
  return undefined;
}

/** The folder of `module` in the source tree `tree`. */
export function sourceModuleDir(tree: string, module: string): string {
  return module === CORE_MODULE ? path.join(tree, CORE_MODULE) : path.join(tree, SOURCE_MODULES_FOLDER, module);
}

/** The `config.yaml` of `module` in the source tree `tree`, when it has one. */
export async function sourceModuleConfig(tree: string, module: string): Promise<string | undefined> {
  const file = path.join(sourceModuleDir(tree, module), CONFIG_FILE);
  return (await exists(file)) ? file : undefined;
}

/** Loads the source tree `tree` (a real path), `module` the one pointed at, if any. */
export async function loadSourceTree(tree: string, module: string | undefined, givenProjectRoot: string | undefined): Promise<BundleInfo> {
  const projectRoot = givenProjectRoot !== undefined ? await realProjectRoot(givenProjectRoot) : ((await installedProjectBeside(tree)) ?? tree);
  const agents: BundleAgent[] = [];
  const shadowed: ShadowedAgent[] = [];
  for (const m of await sourceModules(tree)) {
    const scanned = await scanAgents(path.join(m.dir, AGENTS_FOLDER), m.name, tree);
    agents.push(...scanned.agents);
    shadowed.push(...scanned.shadowed);
  }
  const configPath = (module && (await sourceModuleConfig(tree, module))) || (await sourceModuleConfig(tree, CORE_MODULE));
  return {
    kind: 'source',
    bundleRoot: tree,
    coreRoot: (await coreFolder(tree, projectRoot)) ?? tree,
    projectRoot,
    ...(configPath ? { configPath } : {}),
    ...(module ? { module } : {}),
    agents,
    ...(shadowed.length > 0 ? { shadowedAgents: shadowed } : {}),
  };
}

/** What a source tree gives the loader besides its agent files: its modules and the installer's templates. */
export function sourceTreeEntries(tree: string): string[] {
  return [path.join(tree, CORE_MODULE), path.join(tree, SOURCE_MODULES_FOLDER), path.join(tree, 'utility')];
}

/** The folder holding `tree` when it holds an installed tree and is no broad root (see the module comment). */
async function installedProjectBeside(tree: string): Promise<string | undefined> {
  const parent = path.dirname(tree);
  if (parent === tree || (await bmadFolderOf(parent)) === undefined || (await isBroadRoot(parent))) return undefined;
  return parent;
}

async function holdsAgentFiles(dir: string): Promise<boolean> {
  if (!(await isDirectory(dir))) return false;
  return (await fs.readdir(dir, { withFileTypes: true })).some((e) => e.isFile() && isAgentFileName(e.name));
}
