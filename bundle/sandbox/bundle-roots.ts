/**
 * The roots a bundle gives a session (`{bundle-root}`, `{core-root}`, `{project-root}`), checked
 * before they are trusted: each must be a real folder, `bmad/` and `bmad/core` must really lie
 * inside the project (not be symlinks out of it), and no root may be `/`, the home folder or a
 * folder above it unless the user allows a broad project root (`UnsafeRootError`).
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { BMAD_FOLDER, bmadFolderOf, CORE_MODULE, isDirectory } from '../bundle-layout';
import { BundleLoadError } from '../errors';
import { isBroadRoot, isInside, UnsafeRootError } from './path-guard';

/** The roots `checkRoots` looks at. */
export interface BundleRoots {
  bundleRoot: string;
  coreRoot: string;
  projectRoot: string;
}

/**
 * The project root the user gave for a stand-alone bundle, as a real path. Refused when it is not
 * absolute (it would depend on the worker's working folder) or is not an existing folder.
 */
export async function realProjectRoot(given: string): Promise<string> {
  if (!path.isAbsolute(given)) {
    throw new BundleLoadError(`The project root must be an absolute path, got "${given}"`, { field: 'projectRoot' });
  }
  let real: string;
  try {
    real = await fs.realpath(given);
  } catch (error) {
    throw new BundleLoadError(`Project root not found: ${given}\n${(error as Error).message}`, { field: 'projectRoot', cause: error });
  }
  if (!(await isDirectory(real))) throw new BundleLoadError(`The project root is not a folder: ${given}`, { field: 'projectRoot' });
  return real;
}

/**
 * The real installed tree (`_bmad/` or `bmad/`, see `bmadFolderOf`) of the project `projectRoot`.
 * One that is a symlink out of the project is refused: it would become the bundle root.
 */
export async function realBmadFolder(projectRoot: string): Promise<string> {
  const link = (await bmadFolderOf(projectRoot)) ?? path.join(projectRoot, BMAD_FOLDER);
  const bmad = await fs.realpath(link);
  if (!isInside(bmad, projectRoot, true)) {
    throw new UnsafeRootError(`The bmad folder ${link} is a symlink that leads out of the project ${projectRoot} ` + `(to ${bmad}); point loopwright at the real tree instead`, link, { file: link });
  }
  return bmad;
}

/**
 * The real `core` folder of the tree whose (real) `bmad/` folder is `bmad`, or `undefined` when
 * there is none. A `core` that is a symlink out of the tree is refused: it would become a read root.
 */
export async function coreFolder(bmad: string, projectRoot: string): Promise<string | undefined> {
  const core = path.join(bmad, CORE_MODULE);
  if (!(await isDirectory(core))) return undefined;
  const real = await fs.realpath(core);
  if (!isInside(real, bmad, true)) {
    throw new UnsafeRootError(`The core folder ${core} is a symlink that leads out of the project ${projectRoot} (to ${real}); ` + `a root must lie inside the project`, core, { file: core });
  }
  return real;
}

/**
 * No root (bundle, core, project) may be `/`, the home folder or a folder above it without
 * `allowBroadProjectRoot`: the agent could read everything there.
 */
export async function checkRoots(bundle: BundleRoots, options: { allowBroadProjectRoot?: boolean }): Promise<void> {
  if (options.allowBroadProjectRoot) return;
  const roots: [string, string][] = [
    ['{project-root}', bundle.projectRoot],
    ['{bundle-root}', bundle.bundleRoot],
    ['{core-root}', bundle.coreRoot],
  ];
  for (const [name, root] of roots) {
    if (await isBroadRoot(root)) {
      throw new UnsafeRootError(
        `Refusing ${name} = ${root}: it is the file-system root, your home folder or a folder above it, ` +
          `so the agent could read every project and setting in it. Run loopwright from your project folder ` +
          `(or pass that folder as the project root), or allow it explicitly (the allowBroadProjectRoot setting)`,
        root,
        { field: name },
      );
    }
  }
}

/** The real folder a bundle path names; `BundleLoadError` when it does not exist or is not a folder. */
export async function realDirectory(bundlePath: string): Promise<string> {
  let real: string;
  try {
    real = await fs.realpath(path.resolve(bundlePath));
  } catch (error) {
    throw new BundleLoadError(`Bundle not found: ${bundlePath}\n${(error as Error).message}`, { file: bundlePath, cause: error });
  }
  if (!(await isDirectory(real))) throw new BundleLoadError(`Bundle path is not a folder: ${bundlePath}`, { file: bundlePath });
  return real;
}
