/**
 * What `save_output` never writes: every file the bundle loader would read the next time a session
 * starts, so the model cannot change the bundle it runs (an agent, a config, a template it wrote
 * would be what every later session runs), nor the project's secret-file rules.
 *
 * The rule follows the loader (`bundle-loader.ts`, with the names of `bundle-layout.ts`), for every
 * folder a later session may be pointed at, the start folders: the bundle root, the project root,
 * the `bmad/` folder of an installed tree, and every folder between the bundle root and the
 * project root. Pointed at a start folder `s`, the loader reads:
 * - `s/bmad/` when it holds a module, in preference to anything else: so all of `s/bmad` is
 *   protected, even where no tree is installed yet;
 * - when `s` is itself named `bmad`, its modules: `s/<any>/agents/`, `s/<any>/config.yaml`, and
 *   `s/_cfg`, `s/core` (`treeEntries`);
 * - a folder named `bmad` above `s` holding `_cfg/` or `core/` is the tree `s` sits in, which
 *   changes every root: `<that folder>/_cfg` and `<that folder>/core` are protected, for every
 *   such folder above a start folder;
 * - `s/bundle.yaml`, `s/config.yaml`, `s/agents/`, which make `s` a stand-alone bundle;
 * - `s/core/agents/` and `s/modules/<any>/agents/`, which make `s` a BMAD source tree
 *   (`source-tree.ts`; only those folders, so a project's own `core/` stays writable);
 * and `.loopwright/secret-files` in every start folder, the project's secret-file rules, and its
 * Agent Skills folders (`.<any>/skills/`: `.agents/skills/`, `.claude/skills/`, ...).
 * Besides, the bundle itself: an installed tree's whole `bmad/` (its core inside); a stand-alone
 * bundle's own entries (`BUNDLE_OWN_ENTRIES`: config, manifest, `agents/`, `workflows/`,
 * `templates/`, `data/`...); and the loaded config. That much is decided from the roots alone
 * (`layoutProtectedPaths`), so a context recorded before this rule existed gets it too
 * (`protectedPathsOf`). Initialisation adds what only reading the bundle tells (`loader-reads.ts`):
 * what the loader finds in each start folder, every agent file, and every file an agent's
 * critical actions or commands name (with the workflows' configs, instructions and templates).
 *
 * Protected paths are absolute; a segment `*` stands for any one name, `.*` for any one name
 * starting with a dot. Names are compared without
 * regard to case, so a case-insensitive file system cannot be used to write `BMAD/` for `bmad/`.
 * Ordinary documents stay writable: `docs/prd.md`, `docs/config.yaml` (when `docs/` is no start
 * folder), anything in an output folder that holds none of the above.
 */
import * as path from 'node:path';
import type { RuntimeContext } from '../../common/runtime-context';
import { AGENTS_FOLDER, BMAD_FOLDERS, BUNDLE_MARKERS, isBmadFolderName, CORE_MODULE, MODULE_MARKERS, SOURCE_MODULES_FOLDER, TREE_MARKERS } from '../bundle-layout';
import { BundleError } from '../errors';
import { foldersBetween, isInside } from './path-inside';
import { SECRET_FILES_OVERRIDE } from './secret-files';

/** A segment of a protected path that stands for any one name. */
export const ANY_NAME = '*';
/** A segment of a protected path that stands for any one name starting with a dot (`.claude`, `.agents`). */
export const ANY_DOT_NAME = '.*';
/** The folder of a tool's skills inside its dot-folder (`.claude/skills/`). */
export const SKILLS_FOLDER = 'skills';

/**
 * Entries of a stand-alone bundle folder that hold the bundle itself (a BMAD module's layout), so
 * `save_output` never writes there even when the output folder contains them.
 */
export const BUNDLE_OWN_ENTRIES = ['config.yaml', 'config.yml', 'bundle.yaml', 'bundle.yml', 'agents', 'workflows', 'tasks', 'templates', 'data', 'checklists', 'teams', '_cfg'];

/** The `BUNDLE_OWN_ENTRIES` of the stand-alone bundle folder `bundleRoot`, as absolute paths. */
export function bundleOwnEntries(bundleRoot: string): string[] {
  return BUNDLE_OWN_ENTRIES.map((entry) => path.join(bundleRoot, entry));
}

/** The roots a session records, which decide its start folders. */
export type SessionRoots = Pick<RuntimeContext, 'bundleRoot' | 'coreRoot' | 'projectRoot'>;

/**
 * The `bmad/` folder of the installed tree the bundle is or sits in, told from the roots as the
 * loader sets them: the bundle root when the core lies inside it (an installed tree); the folder
 * holding `{core-root}` when that is `bmad/core` (a bundle inside a tree); else a folder named
 * `bmad` above the bundle root whose parent is the project root (a tree without a core).
 */
export function bmadRootOf(roots: SessionRoots): string | undefined {
  const { bundleRoot, coreRoot, projectRoot } = roots;
  if (coreRoot !== bundleRoot && isInside(coreRoot, bundleRoot, true)) return bundleRoot;
  const coreParent = path.dirname(coreRoot);
  if (coreRoot !== bundleRoot && path.basename(coreRoot) === CORE_MODULE && isBmadFolderName(path.basename(coreParent))) return coreParent;
  for (const folder of foldersBetween(bundleRoot, projectRoot)) {
    if (folder !== bundleRoot && isBmadFolderName(path.basename(folder)) && path.dirname(folder) === projectRoot) return folder;
  }
  return undefined;
}

/** The folders a later session may be pointed at (see the module comment). */
export function startFolders(roots: SessionRoots): string[] {
  const bmadRoot = bmadRootOf(roots);
  return unique([...foldersBetween(roots.bundleRoot, roots.projectRoot), ...(bmadRoot !== undefined ? [bmadRoot] : [])]);
}

/** The protected paths decided from the roots alone (see the module comment). */
export function layoutProtectedPaths(roots: SessionRoots): string[] {
  const bmadRoot = bmadRootOf(roots);
  const paths = bmadRoot !== undefined ? [bmadRoot] : bundleOwnEntries(roots.bundleRoot);
  if (roots.coreRoot !== roots.bundleRoot) paths.push(roots.coreRoot);
  const folders = startFolders(roots);
  for (const s of folders) {
    paths.push(...BMAD_FOLDERS.map((name) => path.join(s, name)), path.join(s, SECRET_FILES_OVERRIDE));
    // Skill folders (`.agents/skills/`, `.claude/skills/`, any `.<tool>/skills/`): what a later session activates.
    paths.push(path.join(s, ANY_DOT_NAME, SKILLS_FOLDER));
    for (const marker of BUNDLE_MARKERS) paths.push(...yamlSpellings(path.join(s, marker)));
    paths.push(path.join(s, CORE_MODULE, AGENTS_FOLDER), path.join(s, SOURCE_MODULES_FOLDER, ANY_NAME, AGENTS_FOLDER));
    if (isBmadFolderName(path.basename(s))) paths.push(...treeEntries(s));
  }
  for (const tree of treeCandidates(folders)) {
    for (const marker of TREE_MARKERS) paths.push(path.join(tree, marker));
  }
  return unique(paths);
}

/**
 * What makes the folder `bmad` an installed tree, or adds to one: a module's `agents/` or
 * `config.yaml` in any sub-folder, the installer's `_cfg/`, the `core/` module.
 */
export function treeEntries(bmad: string): string[] {
  const paths = TREE_MARKERS.map((marker) => path.join(bmad, marker));
  for (const marker of MODULE_MARKERS) paths.push(...yamlSpellings(path.join(bmad, ANY_NAME, marker)));
  return paths;
}

/**
 * What `save_output` must never write to for the session `ctx`: the paths initialisation recorded
 * (`ctx.protectedPaths`), the rule rebuilt from the roots (all of it for a context recorded before
 * the rule existed), and the loaded config.
 */
export function protectedPathsOf(ctx: RuntimeContext): string[] {
  const paths = [...(ctx.protectedPaths ?? []), ...layoutProtectedPaths(ctx)];
  if (ctx.configPath !== undefined) paths.push(ctx.configPath);
  return minimalPaths(paths);
}

/** The entry of `protectedPaths` that `target` (an absolute path) is or lies inside, if any. */
export function protectingEntry(target: string, protectedPaths: readonly string[]): string | undefined {
  return protectedPaths.find((entry) => covers(entry, target));
}

/** Whether `target` is `entry` or lies inside it; a `*` segment of `entry` matches any one name; case ignored. */
export function covers(entry: string, target: string): boolean {
  return segmentsCover(segments(entry), segments(target));
}

function segmentsCover(e: readonly string[], t: readonly string[]): boolean {
  if (t.length < e.length) return false;
  return e.every((part, i) => part === ANY_NAME || (part === ANY_DOT_NAME ? t[i].startsWith('.') : part.toLowerCase() === t[i].toLowerCase()));
}

/** `paths` without repeats and without those another entry already covers (a context is recorded in history). */
export function minimalPaths(paths: readonly string[]): string[] {
  const byName = new Map<string, string>();
  for (const p of paths.map((q) => path.resolve(q))) if (!byName.has(p.toLowerCase())) byName.set(p.toLowerCase(), p);
  // Each path split once: the pairwise check below is quadratic, and a large tree has hundreds of entries.
  const all = [...byName.values()].map((p) => ({ p, parts: segments(p) }));
  return all.filter((a) => !all.some((b) => b !== a && segmentsCover(b.parts, a.parts))).map((a) => a.p);
}

function segments(p: string): string[] {
  return path.resolve(p).split(path.sep);
}

/** `file` and, for a `.yaml` file, its `.yml` spelling. */
function yamlSpellings(file: string): string[] {
  return file.endsWith('.yaml') ? [file, `${file.slice(0, -'.yaml'.length)}.yml`] : [file];
}

/** Every folder named `bmad` among `folders` and the folders above them. */
function treeCandidates(folders: readonly string[]): string[] {
  const found: string[] = [];
  for (const folder of folders) {
    let current = folder;
    for (;;) {
      if (isBmadFolderName(path.basename(current))) found.push(current);
      const parent = path.dirname(current);
      if (parent === current) break;
      current = parent;
    }
  }
  return unique(found);
}

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

/** A writing tool (`save_output`, `edit_file`) was asked to write a protected path (see the module comment). */
export class ProtectedFileError extends BundleError {
  /** The protected path the file is or lies inside. */
  readonly entry?: string;

  constructor(file: string, entry?: string) {
    super(
      `Refused: ${file} is one of the bundle's own files, or a file the bundle loader would read the next time a ` +
        `session starts (agents, config.yaml, bundle.yaml, bmad/, workflows, instructions, templates, ` +
        `${SECRET_FILES_OVERRIDE})${entry !== undefined && entry !== file ? `: it lies in ${entry}` : ''}; ` +
        `the writing tools (save_output, edit_file) never write over them. Save documents in the output folder, e.g. {output_folder}/<name>.md`,
      { file },
    );
    if (entry !== undefined) this.entry = entry;
  }
}
