/**
 * The folder layouts the bundle loader recognises, as the names it looks for and the checks it
 * makes with them. `bundle-loader.ts` decides a bundle's layout with these; `protected-paths.ts`
 * derives from the same names what the model may never write, since a file written there would
 * change what the loader finds next time (an agent, a config, a whole installed tree).
 *
 * - A stand-alone bundle is a folder holding one of `BUNDLE_MARKERS`: `bundle.yaml` (a manifest
 *   listing agent files anywhere inside the folder), `config.yaml` or `agents/`.
 * - An installed tree is a folder named `_bmad` (every release since 6.0) or `bmad` (the 2025
 *   alphas), `BMAD_FOLDERS`, holding modules: sub-folders (not starting with `_` or `.`) with one of
 *   `MODULE_MARKERS` (`agents/`, `config.yaml`). The loader prefers it: a start folder holding such
 *   a folder with a module is an installed project, whatever else it holds; `_bmad` wins over
 *   `bmad` when a project has both (an upgrade left the old tree behind).
 * - A folder of those names above a bundle is the tree the bundle sits in when it holds one of
 *   `TREE_MARKERS`: the installer's `_config/` (`_cfg/` in the alphas), or a `core` module.
 * - A BMAD v6 source tree (`src/` of a checkout) holds `core/agents/` or
 *   `SOURCE_MODULES_FOLDER/<m>/agents/` with agent files; see `source-tree.ts`.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { isInside } from './sandbox/path-inside';

/** The folder of an installed tree as the 2025 alphas named it. */
export const BMAD_FOLDER = 'bmad';
/** The folder of an installed tree, newest naming first: `_bmad` since 6.0, `bmad` before. */
export const BMAD_FOLDERS: readonly string[] = ['_bmad', BMAD_FOLDER];
/** The installer's folder inside `bmad/` in the alphas. */
export const INSTALLER_FOLDER = '_cfg';
/** The installer's folder inside the tree, newest naming first: `_config` since 6.0, `_cfg` before. */
export const INSTALLER_FOLDERS: readonly string[] = ['_config', INSTALLER_FOLDER];
/** The core module inside `bmad/`. */
export const CORE_MODULE = 'core';
export const AGENTS_FOLDER = 'agents';
export const CONFIG_FILE = 'config.yaml';
export const MANIFEST_FILE = 'bundle.yaml';
/** The folder of a BMAD v6 source tree holding its modules other than core (`source-tree.ts`). */
export const SOURCE_MODULES_FOLDER = 'modules';

/** Entries that make a folder a stand-alone bundle (`looksLikeBundle`). */
export const BUNDLE_MARKERS: readonly string[] = [MANIFEST_FILE, CONFIG_FILE, AGENTS_FOLDER];
/** Entries that make a sub-folder of `bmad/` a module (`isModule`). */
export const MODULE_MARKERS: readonly string[] = [AGENTS_FOLDER, CONFIG_FILE];
/** Entries that make a folder named `bmad` above a bundle the tree it sits in (`findInstalledTree`). */
export const TREE_MARKERS: readonly string[] = [...INSTALLER_FOLDERS, CORE_MODULE];

/** Whether a folder named `name` may be an installed tree (`BMAD_FOLDERS`). */
export function isBmadFolderName(name: string): boolean {
  return BMAD_FOLDERS.includes(name);
}

/**
 * The installed tree of the project folder `projectRoot`: its first folder of `BMAD_FOLDERS` that
 * holds a module, or `undefined` when none does.
 */
export async function bmadFolderOf(projectRoot: string): Promise<string | undefined> {
  for (const name of BMAD_FOLDERS) {
    const candidate = path.join(projectRoot, name);
    if (await hasModules(candidate)) return candidate;
  }
  return undefined;
}

/** Module folders of a `bmad/` folder: sub-folders with `agents/` or `config.yaml`, except `_cfg` and the like. */
export async function moduleNames(bmad: string): Promise<string[]> {
  const names: string[] = [];
  for (const entry of await fs.readdir(bmad, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('_') || entry.name.startsWith('.')) continue;
    if (await isModule(path.join(bmad, entry.name))) names.push(entry.name);
  }
  return names.sort();
}

/** Whether `bmad` is a folder holding at least one module. */
export async function hasModules(bmad: string): Promise<boolean> {
  return (await isDirectory(bmad)) && (await moduleNames(bmad)).length > 0;
}

/** A module folder: a folder with `agents/` or `config.yaml`. */
export async function isModule(dir: string): Promise<boolean> {
  return (await isDirectory(path.join(dir, AGENTS_FOLDER))) || (await exists(path.join(dir, CONFIG_FILE)));
}

/**
 * The nearest folder above `start` that is the `bmad/` folder of an installed tree, recognised by
 * its structure: named `_bmad` or `bmad`, and holding the installer's `_config/` (`_cfg/`) folder or a `core` module
 * (`agents/` or `config.yaml`) that is not `start` itself nor holds it. A folder merely named
 * `bmad` (`~/bmad/mybundle`) is not a tree, so its parent never becomes the project root.
 */
export async function findInstalledTree(start: string): Promise<string | undefined> {
  let current = path.dirname(start);
  for (;;) {
    if (isBmadFolderName(path.basename(current))) {
      for (const installer of INSTALLER_FOLDERS) if (await isDirectory(path.join(current, installer))) return current;
      const core = path.join(current, CORE_MODULE);
      if (!isInside(start, core) && (await isModule(core))) return current;
    }
    const parent = path.dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

/** Whether `dir` holds one of `BUNDLE_MARKERS`. */
export async function looksLikeBundle(dir: string): Promise<boolean> {
  return (await exists(path.join(dir, MANIFEST_FILE))) || (await exists(path.join(dir, CONFIG_FILE))) || (await isDirectory(path.join(dir, AGENTS_FOLDER)));
}

export async function exists(p: string): Promise<boolean> {
  try {
    await fs.access(p);
    return true;
  } catch (error) {
    ignoreMissing(error);
    return false;
  }
}

export async function isDirectory(p: string): Promise<boolean> {
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
