/**
 * Finds out what a bundle path points at and which agents it offers.
 *
 * Two layouts are accepted:
 * - `bundle`: a folder holding `config.yaml`, `agents/`, `workflows/` and optionally a `bundle.yaml`
 *   manifest. `{bundle-root}` is that folder. When it sits inside an installed BMAD tree
 *   (`<project>/bmad/custom/bundles/x`), `{project-root}` is `<project>` and `{core-root}` is
 *   `<project>/bmad/core` (when present); otherwise both are the bundle folder itself, so a
 *   stand-alone bundle is self-contained and never depends on the worker's working directory.
 * - `installed`: a project folder holding `bmad/`, whose modules (`bmad/bmm`, `bmad/core`, ...)
 *   each have `config.yaml` and `agents/`. Accepted also when pointed at `bmad/` itself or at a
 *   module folder (the project root is found by walking up). `{project-root}` is the folder
 *   holding `bmad/`, `{core-root}` is `bmad/core`, `{bundle-root}` is `bmad/`.
 *
 * Agents are listed without being parsed (name and title are read from the `<agent>` start tag
 * when cheap to find); parsing happens only for the agent a session asks for.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseManifest, type BundleManifest } from './bundle-manifest';
import { AgentNotFoundError, BundleLoadError } from './errors';
import { isInside } from './path-guard';

/** An agent a bundle offers. `file` is absolute. */
export interface BundleAgent {
  /** Manifest id, else the file name without extension. */
  id: string;
  name?: string;
  title?: string;
  file: string;
  /** Installed trees: the module folder name (`bmm`, `core`, ...). */
  module?: string;
  /** The `id` attribute of the `<agent>` element, when found (e.g. `bmad/bmm/agents/pm.md`). */
  xmlId?: string;
  /** From the manifest. */
  description?: string;
  entryPoint?: boolean;
}

/** What `loadBundle` found. All paths are absolute and symlink-resolved. */
export interface BundleInfo {
  kind: 'bundle' | 'installed';
  bundleRoot: string;
  coreRoot: string;
  projectRoot: string;
  /** The bundle's config.yaml; for an installed tree, that of the module pointed at, else core's. */
  configPath?: string;
  /** Installed trees: the module the bundle path pointed at, if any. */
  module?: string;
  manifest?: BundleManifest;
  agents: BundleAgent[];
}

/** The agent `findAgent` chose, with the config its critical actions are expected to load. */
export interface FoundAgent extends BundleAgent {
  /** Bundle: the bundle's config.yaml. Installed tree: the agent's own module's config.yaml. */
  configPath?: string;
}

/** Loads the bundle at `bundlePath` (see the module comment for the accepted layouts). */
export async function loadBundle(bundlePath: string): Promise<BundleInfo> {
  const start = await realDirectory(bundlePath);

  if (await isDirectory(path.join(start, 'bmad'))) return loadInstalled(start, undefined);
  if (path.basename(start) === 'bmad' && (await hasModules(start))) return loadInstalled(path.dirname(start), undefined);
  const bmadAncestor = findBmadAncestor(start);
  if (bmadAncestor && path.dirname(start) === bmadAncestor && !(await exists(path.join(start, 'bundle.yaml')))) {
    return loadInstalled(path.dirname(bmadAncestor), path.basename(start));
  }
  if (await looksLikeBundle(start)) return loadBundleFolder(start, bmadAncestor);
  throw new BundleLoadError(
    `Not a bundle: ${bundlePath}\nExpected a folder with config.yaml, agents/ or bundle.yaml, or a project folder holding bmad/`,
    { file: bundlePath },
  );
}

/**
 * Finds an agent by manifest id, file name without extension, path relative to the bundle root,
 * `<module>/<name>` (installed trees) or the `<agent id>` attribute. An empty id picks the
 * manifest's entry point, or the only agent. When several agents match, one in the module the
 * bundle path pointed at wins; otherwise the match is ambiguous. Not found: `AgentNotFoundError`
 * listing the available ids.
 */
export async function findAgent(bundle: BundleInfo, agentId: string): Promise<FoundAgent> {
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
    throw new BundleLoadError(
      `Agent id is ambiguous: ${agentId}\nMatching agents: ${matches.map((a) => `${a.module}/${a.id}`).join(', ')}`,
    );
  }
  const agent = matches[0];
  if (!(await exists(agent.file))) {
    throw new BundleLoadError(`Agent file not found: ${agent.file}`, { file: agent.file, field: 'file' });
  }
  const configPath = bundle.kind === 'installed' && agent.module ? await moduleConfig(bundle.bundleRoot, agent.module) : bundle.configPath;
  return { ...agent, ...(configPath ? { configPath } : {}) };
}

/** The ids `findAgent` accepts, shown when an agent is not found (module-qualified in trees). */
export function availableIds(bundle: BundleInfo): string[] {
  return bundle.agents.map((a) => (bundle.kind === 'installed' && a.module ? `${a.module}/${a.id}` : a.id));
}

function agentKeys(bundle: BundleInfo, agent: BundleAgent): string[] {
  const keys = [agent.id, path.basename(agent.file, path.extname(agent.file)), path.relative(bundle.bundleRoot, agent.file)];
  if (agent.module) keys.push(`${agent.module}/${agent.id}`);
  if (agent.xmlId) keys.push(agent.xmlId);
  return keys;
}

async function loadBundleFolder(root: string, bmadAncestor: string | undefined): Promise<BundleInfo> {
  let projectRoot = root;
  let coreRoot = root;
  if (bmadAncestor) {
    projectRoot = path.dirname(bmadAncestor);
    const core = path.join(bmadAncestor, 'core');
    if (await isDirectory(core)) coreRoot = core;
  }
  const configFile = path.join(root, 'config.yaml');
  const manifestFile = path.join(root, 'bundle.yaml');
  let manifest: BundleManifest | undefined;
  let agents: BundleAgent[];
  if (await exists(manifestFile)) {
    manifest = parseManifest(await fs.readFile(manifestFile, 'utf8'), manifestFile);
    agents = manifest.agents.map((entry, index) => {
      const file = path.resolve(root, entry.file);
      if (!isInside(file, root, true)) {
        throw new BundleLoadError(`Invalid bundle manifest ${manifestFile}: agents.${index}.file leaves the bundle folder`, {
          file: manifestFile,
          field: `agents.${index}.file`,
        });
      }
      return {
        id: entry.id,
        file,
        ...(entry.name !== undefined ? { name: entry.name } : {}),
        ...(entry.title !== undefined ? { title: entry.title } : {}),
        ...(entry.description !== undefined ? { description: entry.description } : {}),
        ...(entry.entry_point !== undefined ? { entryPoint: entry.entry_point } : {}),
      };
    });
    // Fill in the `<agent id>` for lookups; a missing file is reported by findAgent, not here.
    for (const agent of agents) {
      const head = await agentHead(agent.file).catch(ignoreMissing);
      if (head?.xmlId) agent.xmlId = head.xmlId;
    }
  } else {
    agents = await scanAgents(path.join(root, 'agents'), undefined);
  }
  return {
    kind: 'bundle',
    bundleRoot: root,
    coreRoot,
    projectRoot,
    ...((await exists(configFile)) ? { configPath: configFile } : {}),
    ...(manifest ? { manifest } : {}),
    agents,
  };
}

async function loadInstalled(projectRoot: string, module: string | undefined): Promise<BundleInfo> {
  const bmad = path.join(projectRoot, 'bmad');
  const agents: BundleAgent[] = [];
  for (const name of await moduleNames(bmad)) {
    agents.push(...(await scanAgents(path.join(bmad, name, 'agents'), name)));
  }
  const configPath = (module && (await moduleConfig(bmad, module))) || (await moduleConfig(bmad, 'core'));
  return {
    kind: 'installed',
    bundleRoot: bmad,
    coreRoot: path.join(bmad, 'core'),
    projectRoot,
    ...(configPath ? { configPath } : {}),
    ...(module ? { module } : {}),
    agents,
  };
}

/** Module folders of a `bmad/` folder: sub-folders with `agents/` or `config.yaml`, except `_cfg` and the like. */
async function moduleNames(bmad: string): Promise<string[]> {
  const names: string[] = [];
  for (const entry of await fs.readdir(bmad, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('_') || entry.name.startsWith('.')) continue;
    const dir = path.join(bmad, entry.name);
    if ((await isDirectory(path.join(dir, 'agents'))) || (await exists(path.join(dir, 'config.yaml')))) names.push(entry.name);
  }
  return names.sort();
}

async function hasModules(bmad: string): Promise<boolean> {
  return (await moduleNames(bmad)).length > 0;
}

async function moduleConfig(bmad: string, module: string): Promise<string | undefined> {
  const file = path.join(bmad, module, 'config.yaml');
  return (await exists(file)) ? file : undefined;
}

/** The agent files of an `agents/` folder: every `.md` file except a README. */
async function scanAgents(dir: string, module: string | undefined): Promise<BundleAgent[]> {
  if (!(await isDirectory(dir))) return [];
  const files = (await fs.readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isFile() && e.name.toLowerCase().endsWith('.md') && e.name.toLowerCase() !== 'readme.md')
    .map((e) => e.name)
    .sort();
  const agents: BundleAgent[] = [];
  for (const name of files) {
    const file = path.join(dir, name);
    const head = await agentHead(file);
    agents.push({ id: path.basename(name, '.md'), file, ...(module ? { module } : {}), ...head });
  }
  return agents;
}

/** Name, title and id from the `<agent ...>` start tag, found by a cheap scan (no full parse). */
async function agentHead(file: string): Promise<{ name?: string; title?: string; xmlId?: string }> {
  const text = await fs.readFile(file, 'utf8');
  const tag = /<agent(\s[^>]*)>/.exec(text)?.[1];
  if (!tag) return {};
  const attr = (name: string) => new RegExp(`\\s${name}\\s*=\\s*"([^"]*)"`).exec(tag)?.[1];
  const out: { name?: string; title?: string; xmlId?: string } = {};
  const name = attr('name');
  const title = attr('title');
  const id = attr('id');
  if (name) out.name = name;
  if (title) out.title = title;
  if (id) out.xmlId = id;
  return out;
}

function findBmadAncestor(dir: string): string | undefined {
  let current = dir;
  for (;;) {
    if (path.basename(current) === 'bmad') return current;
    const parent = path.dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

async function looksLikeBundle(dir: string): Promise<boolean> {
  return (
    (await exists(path.join(dir, 'bundle.yaml'))) ||
    (await exists(path.join(dir, 'config.yaml'))) ||
    (await isDirectory(path.join(dir, 'agents')))
  );
}

async function realDirectory(bundlePath: string): Promise<string> {
  let real: string;
  try {
    real = await fs.realpath(path.resolve(bundlePath));
  } catch (error) {
    throw new BundleLoadError(`Bundle not found: ${bundlePath}\n${(error as Error).message}`, { file: bundlePath, cause: error });
  }
  if (!(await isDirectory(real))) throw new BundleLoadError(`Bundle path is not a folder: ${bundlePath}`, { file: bundlePath });
  return real;
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.access(p);
    return true;
  } catch (error) {
    ignoreMissing(error);
    return false;
  }
}

async function isDirectory(p: string): Promise<boolean> {
  try {
    return (await fs.stat(p)).isDirectory();
  } catch (error) {
    ignoreMissing(error);
    return false;
  }
}

/** Swallows "does not exist" (the caller treats it as absent); rethrows anything else. */
function ignoreMissing(error: unknown): undefined {
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
  throw error;
}
