/**
 * Finding the Agent Skills a session can use (agentskills.io client guide, step 1): skill folders
 * (a folder holding a file named exactly `SKILL.md`) in the project's skills folders, in folders
 * the user names, and in the user's own when asked. Every tool keeps its skills in a
 * `.<tool>/skills` folder, and BMAD installs into the one of the tool it targets, so all of them
 * are looked at; `.agents/skills` (the cross-client convention) and `.claude/skills` (where most
 * skills are installed) come first.
 *
 * Project skills come from the repository being worked on, which may not be trusted: a skill
 * folder or SKILL.md that is a symlink leading outside the project is refused, so a repository
 * cannot make the model read files elsewhere as instructions. The walk is bounded (folders looked
 * at, entries per folder, and `MAX_SKILL_FILE_BYTES` per SKILL.md) because it runs before every session on a tree it does not
 * control, and it never throws: what cannot be read becomes a diagnostic.
 */
import type { Dirent } from 'node:fs';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { errorCode } from '../file-errors';
import { isInside } from '../sandbox/path-inside';
import { readTextFile } from '../text-content';
import { MAX_SKILL_FILE_BYTES, parseSkillFile, type SkillDiagnostic, type SkillRecord } from './skill-file';

/** Most folders one discovery lists (skills folders, skill folders, grouping folders, the scope roots); the guide suggests 2,000. */
export const MAX_SKILL_SCAN_FOLDERS = 2000;

/** Most entries of one folder looked at (the first in name order); a folder with more gets a warning. */
export const MAX_SKILL_FOLDER_ENTRIES = 10_000;

/** Folders that never hold skills and may be huge. */
const SKIPPED_FOLDERS: ReadonlySet<string> = new Set(['.git', 'node_modules']);

/** The skills folders that come first in a scope, in this order; every other `.<tool>/skills` follows, alphabetically. */
const FIRST_TOOL_FOLDERS = ['.agents', '.claude'] as const;

/** SKILL.md files read at once: enough to overlap the reads, few enough to stay far from the open-file limit. */
const READ_PARALLELISM = 16;

const SKILL_FILE = 'SKILL.md';

/** Where a skill was found; precedence is project, then extra, then user. */
export type SkillScope = 'project' | 'extra' | 'user';

/** A skill as discovery found it. */
export interface DiscoveredSkill extends SkillRecord {
  scope: SkillScope;
  /** The skills folder it came from (`<project>/.claude/skills`), even for a skill in a grouping folder. */
  folder: string;
}

/** A skill that lost to another of the same name. */
export interface ShadowedSkill {
  name: string;
  /** The SKILL.md set aside. */
  file: string;
  /** The SKILL.md used instead. */
  by: string;
}

/** Everything one discovery found: the skills (sorted by name), what went wrong, and what was shadowed. */
export interface SkillDiscovery {
  skills: DiscoveredSkill[];
  diagnostics: SkillDiagnostic[];
  shadowed: ShadowedSkill[];
}

/** Where to look. */
export interface DiscoverSkillsOptions {
  /** The project folder: its `.agents/skills`, `.claude/skills` and other `.<tool>/skills` folders. */
  projectRoot: string;
  /** The user's home folder, for user skills (default `os.homedir()`). */
  userHome?: string;
  /** Look in the user's skills folders too (default false: a session sees its project's skills only). */
  userSkills?: boolean;
  /** More skills folders, each holding skill folders; relative ones resolve from `projectRoot`. */
  extraFolders?: string[];
  /**
   * The folder that symlinks in the extra folders must stay inside (default: each extra folder
   * itself). A caller looking again in skills folders that discovery found in a project passes
   * the project, so that a skill linked from elsewhere in the project is accepted as it was then.
   */
  extraScopeRoot?: string;
  /** Read SKILL.md files with several hard links (refused by default, as every read of the bundle runtime does). */
  allowHardLinks?: boolean;
}

/** A path as shown (under the real path of its scope root) and as it really is. */
interface Place {
  located: string;
  real: string;
}

/** A skills folder to scan, with the root its contents must stay inside. */
interface SkillsFolder extends Place {
  scope: SkillScope;
  rootReal: string;
}

/** A folder holding a SKILL.md, in scan order. */
interface Candidate extends Place {
  folder: SkillsFolder;
}

interface Entry {
  name: string;
  kind: 'folder' | 'file' | 'link' | 'other';
}

/** Diagnostics being collected. */
class Sink {
  readonly diagnostics: SkillDiagnostic[] = [];

  warn(file: string, message: string): void {
    this.diagnostics.push({ level: 'warning', file, message });
  }

  error(file: string, message: string): void {
    this.diagnostics.push({ level: 'error', file, message });
  }
}

/** State of one discovery: the folder budget, the diagnostics, and what was already seen. */
class Scan extends Sink {
  private foldersRead = 0;
  private exhausted = false;
  /** Real paths of skills folders already scanned, so a folder reached twice (a symlink, home = project) counts once. */
  readonly seenFolders = new Set<string>();

  /** The folder's entries sorted by name, or `undefined` when it cannot be listed (a diagnostic says why, unless it is simply gone). */
  async list(place: Place): Promise<Entry[] | undefined> {
    if (this.foldersRead >= MAX_SKILL_SCAN_FOLDERS) {
      if (!this.exhausted) {
        this.exhausted = true;
        this.warn(place.located, `stopped looking for skills after ${MAX_SKILL_SCAN_FOLDERS} folders (MAX_SKILL_SCAN_FOLDERS); skills beyond are not found`);
      }
      return undefined;
    }
    this.foldersRead++;
    let dirents: Dirent[];
    try {
      // One `readdir` rather than a streamed `opendir`: five times faster on skill folders of a few
      // entries, and the folder count above bounds how many are listed.
      dirents = await fs.readdir(place.real, { withFileTypes: true });
    } catch (error) {
      const code = errorCode(error);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') this.warn(place.located, `cannot list this folder (${code ?? String(error)}); its skills are not found`);
      return undefined;
    }
    if (dirents.length > MAX_SKILL_FOLDER_ENTRIES) {
      this.warn(place.located, `only ${MAX_SKILL_FOLDER_ENTRIES} of the ${dirents.length} entries of this folder were looked at (MAX_SKILL_FOLDER_ENTRIES)`);
    }
    const entries = dirents
      .map((dirent): Entry => ({ name: dirent.name, kind: kindOf(dirent) }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .slice(0, MAX_SKILL_FOLDER_ENTRIES);
    return entries;
  }
}

function kindOf(dirent: Dirent): Entry['kind'] {
  if (dirent.isDirectory()) return 'folder';
  if (dirent.isFile()) return 'file';
  if (dirent.isSymbolicLink()) return 'link';
  return 'other';
}

/**
 * Finds the skills of `options.projectRoot` (and of the extra folders, and of the user when
 * `userSkills`), reads their front matter leniently (`parseSkillFile`) and settles name
 * collisions: project over extra over user, and within a scope the first found in the order
 * `.agents/skills`, `.claude/skills`, the other `.<tool>/skills` alphabetically (extra folders in
 * the order given). Every collision is a warning and a `shadowed` entry. Paths are reported under
 * the real path of their scope root (for an extra folder, of the folder itself), as found below it
 * (a skill folder that is a symlink keeps its own name). Never throws for file-system problems: they are diagnostics.
 */
export async function discoverSkills(options: DiscoverSkillsOptions): Promise<SkillDiscovery> {
  const scan = new Scan();
  const folders: SkillsFolder[] = [];

  const projectGiven = path.resolve(options.projectRoot);
  const projectReal = await realRoot(projectGiven);
  if (projectReal === undefined) scan.error(projectGiven, 'the project folder cannot be read; its skills are not found');
  else folders.push(...(await scopeFolders(scan, projectReal, 'project')));

  const extraRootGiven = options.extraScopeRoot === undefined ? undefined : path.resolve(projectGiven, options.extraScopeRoot);
  const extraRoot = extraRootGiven === undefined ? undefined : await realRoot(extraRootGiven);
  if (extraRootGiven !== undefined && extraRoot === undefined) scan.warn(extraRootGiven, 'extraScopeRoot does not exist or is not a folder; each extra folder is its own scope');
  for (const extra of options.extraFolders ?? []) {
    const given = path.resolve(projectGiven, extra);
    const real = await realRoot(given);
    if (real === undefined) scan.warn(given, 'this skills folder does not exist or is not a folder');
    else if (extraRoot !== undefined && !isInside(real, extraRoot)) scan.warn(given, `this skills folder is outside ${extraRoot} (extraScopeRoot); skipped`);
    else folders.push({ located: real, real, scope: 'extra', rootReal: extraRoot ?? real });
  }

  if (options.userSkills) {
    const home = path.resolve(options.userHome ?? os.homedir());
    const homeReal = await realRoot(home);
    if (homeReal === undefined) scan.warn(home, 'the home folder cannot be read; user skills are not found');
    else folders.push(...(await scopeFolders(scan, homeReal, 'user')));
  }

  const candidates: Candidate[] = [];
  for (const folder of folders) {
    if (scan.seenFolders.has(folder.real)) continue;
    scan.seenFolders.add(folder.real);
    candidates.push(...(await scanSkillsFolder(scan, folder)));
  }

  // Read in batches, results (and their diagnostics) kept in scan order: the order decides which
  // of two same-named skills wins, and the same tree must give the same report.
  const records: ReadSkill[] = [];
  for (let i = 0; i < candidates.length; i += READ_PARALLELISM) {
    const batch = candidates.slice(i, i + READ_PARALLELISM);
    records.push(...(await Promise.all(batch.map((candidate) => readCandidate(candidate, options.allowHardLinks === true)))));
  }

  const winners = new Map<string, DiscoveredSkill>();
  // The same SKILL.md reached twice (`.agents/skills/x` a symlink to `.claude/skills/x`) is one
  // skill, not a collision.
  const seenFiles = new Set<string>();
  const shadowed: ShadowedSkill[] = [];
  for (const record of records) {
    scan.diagnostics.push(...record.diagnostics);
    if (record.skill === undefined || record.real === undefined || seenFiles.has(record.real)) continue;
    seenFiles.add(record.real);
    const { skill } = record;
    const winner = winners.get(skill.name);
    if (!winner) {
      winners.set(skill.name, skill);
      continue;
    }
    shadowed.push({ name: skill.name, file: skill.file, by: winner.file });
    scan.warn(skill.file, `skill "${skill.name}" is shadowed by ${winner.file} (${winner.scope} scope), which has the same name`);
  }
  const skills = [...winners.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { skills, diagnostics: scan.diagnostics, shadowed };
}

/** The skill named `name` (exact match), if any. */
export function findSkill<T extends SkillRecord>(skills: readonly T[], name: string): T | undefined {
  return skills.find((skill) => skill.name === name);
}

/** The real path of a folder, or `undefined` when it is missing or not a folder. */
async function realRoot(given: string): Promise<string | undefined> {
  try {
    const real = await fs.realpath(given);
    return (await fs.stat(real)).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}

/** The skills folders of one scope root, in precedence order: `.agents`, `.claude`, then the other dot-folders alphabetically. */
async function scopeFolders(scan: Scan, rootReal: string, scope: SkillScope): Promise<SkillsFolder[]> {
  const entries = (await scan.list({ located: rootReal, real: rootReal })) ?? [];
  const others = entries
    .filter((e) => e.name.startsWith('.') && (e.kind === 'folder' || e.kind === 'link'))
    .map((e) => e.name)
    .filter((name) => !SKIPPED_FOLDERS.has(name) && !(FIRST_TOOL_FOLDERS as readonly string[]).includes(name));
  const folders: SkillsFolder[] = [];
  for (const tool of [...FIRST_TOOL_FOLDERS, ...others]) {
    const located = path.join(rootReal, tool, 'skills');
    const real = await realInside(scan, located, rootReal, 'skills folder');
    if (real !== undefined && (await isFolder(real))) folders.push({ located, real, scope, rootReal });
  }
  return folders;
}

/**
 * The real path of `located`, when it exists and stays inside `rootReal`; a path leading outside is
 * refused with a warning (the trust rule), a missing one is silently `undefined`.
 */
async function realInside(scan: Sink, located: string, rootReal: string, what: string): Promise<string | undefined> {
  let real: string;
  try {
    real = await fs.realpath(located);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ELOOP') scan.warn(located, `this ${what} is a symlink loop; skipped`);
    else if (code !== 'ENOENT' && code !== 'ENOTDIR') scan.warn(located, `cannot resolve this ${what} (${code ?? String(error)}); skipped`);
    return undefined;
  }
  if (!isInside(real, rootReal)) {
    scan.warn(located, `this ${what} is a symlink leading outside ${rootReal}; skipped (a skill may only use files of its own scope)`);
    return undefined;
  }
  return real;
}

async function isFolder(real: string): Promise<boolean> {
  try {
    return (await fs.stat(real)).isDirectory();
  } catch {
    return false;
  }
}

/** A sub-folder of `parent` as a place, following a symlink only when it stays inside the scope; `undefined` when it is not a usable folder. */
async function childFolder(scan: Scan, parent: Place, entry: Entry, rootReal: string): Promise<Place | undefined> {
  if (SKIPPED_FOLDERS.has(entry.name)) return undefined;
  const located = path.join(parent.located, entry.name);
  if (entry.kind === 'folder') return { located, real: path.join(parent.real, entry.name) };
  if (entry.kind !== 'link') return undefined;
  const real = await realInside(scan, located, rootReal, 'skill folder');
  return real !== undefined && (await isFolder(real)) ? { located, real } : undefined;
}

/** The skill folders of one skills folder, in name order: its sub-folders holding a SKILL.md, and those of its grouping folders (one level deeper, no more). */
async function scanSkillsFolder(scan: Scan, folder: SkillsFolder): Promise<Candidate[]> {
  const candidates: Candidate[] = [];
  for (const entry of (await scan.list(folder)) ?? []) {
    const child = await childFolder(scan, folder, entry, folder.rootReal);
    if (!child) continue;
    const inside = await scan.list(child);
    if (!inside) continue;
    if (holdsSkillFile(inside)) {
      candidates.push({ ...child, folder });
      continue;
    }
    // A grouping folder (`skills/bmad/<skill>/SKILL.md`): its sub-folders may be skills.
    for (const sub of inside) {
      const grandchild = await childFolder(scan, child, sub, folder.rootReal);
      if (!grandchild) continue;
      const subEntries = await scan.list(grandchild);
      if (subEntries && holdsSkillFile(subEntries)) candidates.push({ ...grandchild, folder });
    }
  }
  return candidates;
}

/**
 * Whether a folder's entries hold a SKILL.md. Whatever it is (a FIFO, a folder): reading it then
 * says what is wrong with it, where ignoring it would leave the author wondering.
 */
function holdsSkillFile(entries: readonly Entry[]): boolean {
  return entries.some((e) => e.name === SKILL_FILE);
}

/** One candidate read: the skill when usable, the real path of its SKILL.md, and what was wrong. */
interface ReadSkill {
  skill?: DiscoveredSkill;
  real?: string;
  diagnostics: SkillDiagnostic[];
}

/** Reads and parses one candidate's SKILL.md. */
async function readCandidate(candidate: Candidate, allowHardLinks: boolean): Promise<ReadSkill> {
  const sink = new Sink();
  const file = path.join(candidate.located, SKILL_FILE);
  const real = await realInside(sink, file, candidate.folder.rootReal, 'SKILL.md');
  if (real === undefined) return { diagnostics: sink.diagnostics };
  let text: string;
  try {
    ({ content: text } = await readTextFile(real, MAX_SKILL_FILE_BYTES, undefined, { allowHardLinks }));
  } catch (error) {
    const why = error instanceof Error ? error.message.split('\n')[0] : String(error);
    sink.error(file, `skipped: SKILL.md cannot be read: ${why}`);
    return { diagnostics: sink.diagnostics };
  }
  const { skill, diagnostics } = parseSkillFile(text, file);
  sink.diagnostics.push(...diagnostics);
  return { ...(skill ? { skill: { ...skill, scope: candidate.folder.scope, folder: candidate.folder.located } } : {}), real, diagnostics: sink.diagnostics };
}
