/**
 * The scratch copy of a project an eval session runs in, so the user's files are never touched:
 * the project root (the session's `projectRoot`; else the installed BMAD project the bundle lies in,
 * the folder holding `_bmad/` or `bmad/`; else the bundle folder) copied to the case's folder, and
 * the bundle too when it lies outside the project. `.git` and `node_modules` are left
 * out; symbolic links are copied as links (the tools' path guard refuses those that lead out);
 * a project over the size bound is refused before anything is copied. The session's paths are
 * mapped into the copy; an output folder outside the project cannot be, and is refused.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Folders never copied into a scratch workspace. */
const SKIPPED = new Set(['.git', 'node_modules']);

/** What the session names (as recorded, or as the candidate changes it). */
export interface WorkspacePaths {
  bundlePath: string;
  projectRoot?: string;
  outputRoots?: string[];
}

/** The copy: the session's paths inside it, the folders it maps (copy → original), and its size. */
export interface ScratchWorkspace {
  workspace: string;
  paths: WorkspacePaths;
  /** Each copied folder and the folder it copies. */
  mapped: Record<string, string>;
  files: number;
  bytes: number;
}

/** A project the eval cannot copy: too large, missing, or with an output folder outside it. */
export class ScratchCopyError extends Error {
  override name = 'ScratchCopyError';
}

/** Copy the session's project (and its bundle when outside it) under `caseDir`; the paths returned point into the copy. */
export async function makeScratchWorkspace(source: WorkspacePaths, caseDir: string, maxBytes: number): Promise<ScratchWorkspace> {
  const root = projectFolderOf(source);
  const bundle = path.resolve(source.bundlePath);
  if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) throw new ScratchCopyError(`the project ${root} is not a folder here`);
  if (!fs.existsSync(bundle)) throw new ScratchCopyError(`the bundle ${bundle} does not exist here`);
  const bundleOutside = !inside(root, bundle);
  // A copy made inside what it copies would copy itself (fs.cp refuses with EINVAL, attempt after attempt).
  const scratch = path.resolve(caseDir);
  for (const folder of bundleOutside ? [root, bundle] : [root]) {
    if (inside(folder, scratch)) {
      throw new ScratchCopyError(`the eval's scratch folder ${scratch} lies inside ${folder}, which it copies: give the eval a scratch folder outside the project (--scratch)`);
    }
  }
  const size = await measure(root);
  if (bundleOutside) {
    const extra = await measure(bundle);
    size.files += extra.files;
    size.bytes += extra.bytes;
  }
  if (size.bytes > maxBytes) throw new ScratchCopyError(`the project ${root} holds ${size.bytes} bytes, over the eval's bound of ${maxBytes} (--max-copy-bytes)`);
  const workspace = path.join(caseDir, 'workspace', path.basename(root) || 'project');
  await copy(root, workspace);
  const mapped: Record<string, string> = { [workspace]: root };
  let bundleCopy = path.join(workspace, path.relative(root, bundle));
  if (bundleOutside) {
    bundleCopy = path.join(caseDir, 'bundle', path.basename(bundle));
    await copy(bundle, bundleCopy);
    mapped[bundleCopy] = bundle;
  }
  const mapPath = (p: string): string => {
    const resolved = path.resolve(p);
    for (const [copied, original] of Object.entries(mapped)) if (inside(original, resolved)) return path.join(copied, path.relative(original, resolved));
    throw new ScratchCopyError(`the output folder ${resolved} is outside the project ${root}: the eval cannot give the session a copy of it (use an output folder inside the project)`);
  };
  return {
    workspace,
    paths: {
      bundlePath: bundleCopy,
      ...(source.projectRoot !== undefined ? { projectRoot: workspace } : {}),
      ...(source.outputRoots ? { outputRoots: source.outputRoots.map(mapPath) } : {}),
    },
    mapped,
    files: size.files,
    bytes: size.bytes,
  };
}

/** Installed BMAD folders: a bundle inside one (or naming it) belongs to the project that holds it. */
const INSTALLED = ['_bmad', 'bmad'];

/** The folder a session's scratch copy copies: its project root, else the installed project its bundle lies in, else its bundle. */
export function projectFolderOf(source: Pick<WorkspacePaths, 'bundlePath' | 'projectRoot'>): string {
  return path.resolve(source.projectRoot ?? installedProjectOf(source.bundlePath) ?? source.bundlePath);
}

/** The project folder holding an installed BMAD tree the bundle lies in (up to four levels up), if any. */
function installedProjectOf(bundlePath: string): string | undefined {
  let dir = path.resolve(bundlePath);
  for (let up = 0; up <= 4; up++) {
    const parent = path.dirname(dir);
    if (INSTALLED.includes(path.basename(dir)) && parent !== dir) return parent;
    if (parent === dir) return undefined;
    dir = parent;
  }
  return undefined;
}

/** Whether `p` is `dir` or inside it. */
function inside(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Files and bytes a copy of `dir` takes (links counted, not followed); asynchronous, so the activity heartbeats meanwhile. */
async function measure(dir: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  const walk = async (d: string): Promise<void> => {
    for (const entry of await fs.promises.readdir(d, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!SKIPPED.has(entry.name)) await walk(path.join(d, entry.name));
      } else {
        files += 1;
        if (entry.isFile()) bytes += (await fs.promises.stat(path.join(d, entry.name))).size;
      }
    }
  };
  const stat = await fs.promises.lstat(dir);
  if (stat.isDirectory()) await walk(dir);
  else {
    files = 1;
    bytes = stat.size;
  }
  return { files, bytes };
}

async function copy(from: string, to: string): Promise<void> {
  await fs.promises.mkdir(path.dirname(to), { recursive: true });
  await fs.promises.cp(from, to, { recursive: true, verbatimSymlinks: true, filter: (src) => !SKIPPED.has(path.basename(src)) || src === from });
}
