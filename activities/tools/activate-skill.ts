/**
 * The `activate_skill` tool (tier 2 of progressive disclosure): find the skill by name in the
 * skills folders the session recorded at its start, read its `SKILL.md` as it is now, resolve its
 * customization (`customize.toml` with the project's team and user overrides) and return its
 * instructions with `{skill-root}`, `{skill-name}` and the customization's scalars filled in, the
 * resolved customization beside them, and the list of its files (not their content: the model reads
 * those with `read_file`, whose bare paths resolve from the skill's folder once it is active).
 *
 * The result carries `skill`: its name, folder and content hash (of its SKILL.md and customization
 * layers, `pins.ts`), which the workflow records as the session's active skill: the hash says which
 * version the session saw (bundle pinning, common/pins.ts).
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { ACTIVATE_SKILL } from '../../common/tools/activate-skill';
import { guardRead, secretOptionsOf } from '../../bundle/sandbox/path-guard';
import { readTextFile } from '../../bundle/text-content';
import { isTable, resolveCustomization } from '../../bundle/skills/customize';
import { didYouMean, findSkillInFolders } from '../../bundle/skills/project-skills';
import { fillSkillText, skillRootVariable } from '../../bundle/skills/skill-agent';
import { skillBody } from '../../bundle/skills/skill-file';
import { skillHash } from '../../bundle/skills/pins';
import type { ToolImplementation, ToolRunOptions } from './activity-wrapper';
import { parseArgsOf } from './parse-args';
import { toToolFailure } from './tool-failure';
import { skillCommandRequests } from '../../bundle/bundle-command-rules';

/** Most files of a skill listed in its activation (the rest are counted, not named). */
export const MAX_LISTED_SKILL_FILES = 100;
/** Deepest folder level of a skill listed. */
const MAX_LISTED_DEPTH = 4;

/** Runs `activate_skill` for the session `ctx` (see the module comment). */
export async function activateSkillTool(ctx: RuntimeContext, args: unknown, options: ToolRunOptions = {}): Promise<ToolResult> {
  const parsed = parseArgsOf(ACTIVATE_SKILL, args);
  if (!parsed.ok) return { success: false, error: parsed.error };
  const name = parsed.value.name.trim();
  const folders = ctx.skillFolders ?? [];
  if (folders.length === 0) return { success: false, error: 'This session has no Agent Skills: its project has no skills folder (.agents/skills/, .claude/skills/, ...)' };
  try {
    const found = await findSkillInFolders(folders, name, ctx.projectRoot);
    if (found.skill === undefined) {
      const known = found.names.length > 0 ? `; the skills are: ${found.names.slice(0, 60).join(', ')}${found.names.length > 60 ? ', ...' : ''}` : '';
      return { success: false, error: `No skill named ${name}${didYouMean(name, found.names)}${known}` };
    }
    const skill = found.skill;
    // The same guard as read_file: a SKILL.md that is a secret file or leads out of the roots is refused.
    const file = await guardRead(skill.file, [...ctx.readRoots, ...folders], secretOptionsOf(ctx));
    options.signal?.throwIfAborted();
    const text = (await readTextFile(file, ctx.maxReadBytes, options.signal, { allowHardLinks: ctx.allowHardLinks === true })).content;
    const customization = await customizationOf(skill, ctx.projectRoot);
    const blocks: Record<string, Record<string, unknown>> = {};
    for (const [key, value] of Object.entries(customization.values)) if (isTable(value)) blocks[key] = value;
    const instructions = fillSkillText(skillBody(text), skill, ctx.projectRoot, blocks);
    const files = await listSkillFiles(skill.dir);
    const root = skillRootVariable(skill.dir, ctx.projectRoot);
    const hash = await skillHash(skill, ctx.projectRoot);
    const content = [
      `<skill_content name="${skill.name}">`,
      instructions,
      '',
      `Skill directory: ${root}`,
      'Relative paths in this skill (references/..., assets/..., scripts/...) resolve from the skill directory: read them with read_file as written.',
      ...(Object.keys(blocks).length > 0
        ? [
            '',
            `Resolved customization (customize.toml merged with the project's team and user overrides; the {${Object.keys(blocks).join('.*}, {')}.*} values above; already resolved, do not resolve it again):`,
            '```json',
            JSON.stringify(customization.values, null, 2),
            '```',
          ]
        : []),
      '',
      '<skill_resources>',
      ...files.listed.map((f) => `  <file>${f}</file>`),
      ...(files.more > 0 ? [`  <!-- ${files.more} more files not listed -->`] : []),
      '</skill_resources>',
      '</skill_content>',
    ].join('\n');
    // The commands its allowed-tools asks for (`Bash(git:*)`): requests the approval of a command shows, never grants.
    const commands = skillCommandRequests(skill, root);
    return { success: true, path: skill.dir, content, skill: { name: skill.name, dir: skill.dir, hash, ...(commands.length > 0 ? { commands } : {}) } };
  } catch (error) {
    return toToolFailure(error);
  }
}

/** The skill's customization, when it has a customize.toml. */
async function customizationOf(skill: { name: string; dir: string }, projectRoot: string): Promise<{ values: Record<string, unknown> }> {
  try {
    await fs.access(path.join(skill.dir, 'customize.toml'));
  } catch {
    return { values: {} };
  }
  return { values: (await resolveCustomization({ skillRoot: skill.dir, projectRoot, skillName: skill.name })).values };
}

/**
 * The files of a skill's folder, relative and sorted (`SKILL.md` left out): at most
 * `MAX_LISTED_SKILL_FILES`, `MAX_LISTED_DEPTH` levels deep; symlinks and dot-files are not followed.
 */
async function listSkillFiles(dir: string): Promise<{ listed: string[]; more: number }> {
  const all: string[] = [];
  const walk = async (folder: string, depth: number): Promise<void> => {
    if (depth > MAX_LISTED_DEPTH || all.length > MAX_LISTED_SKILL_FILES * 4) return;
    const entries = (await fs.readdir(folder, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) await walk(full, depth + 1);
      else if (entry.isFile()) all.push(path.relative(dir, full).split(path.sep).join('/'));
    }
  };
  await walk(dir, 1);
  const files = all.filter((f) => f !== 'SKILL.md');
  return { listed: files.slice(0, MAX_LISTED_SKILL_FILES), more: Math.max(0, files.length - MAX_LISTED_SKILL_FILES) };
}

/** `activate_skill`: its definition and what runs it. */
export const activateSkill: ToolImplementation = { spec: ACTIVATE_SKILL, run: activateSkillTool };
