/**
 * The skill catalog of the system prompt (agentskills.io client guide, step 3): each visible
 * skill's name and description, behind a short instruction to load a skill through the activation
 * tool. Only this tier is paid up front; a skill's instructions are loaded when the model picks it.
 * Skills that opted out of model invocation are left out entirely, so the model never spends a turn
 * on one it cannot load; with no visible skill there is no section at all.
 *
 * Deterministic (skills sorted by name, white space normalised): the system prompt is part of
 * every session's history and of the prompt cache, so the same skills must give the same bytes.
 */
import { estimateTextTokens } from '../../common/token-estimate';
import type { SkillRecord } from './skill-file';

/** The activation tool's name when the caller names none (the guide's example name). */
export const DEFAULT_SKILL_TOOL = 'activate_skill';

/** How the catalog is written. */
export interface SkillCatalogOptions {
  /** The tool the model calls with a skill's name to load its instructions. */
  toolName: string;
}

/** The skills the model may see: those without `disable-model-invocation`, sorted by name (then file, for equal names). */
export function visibleSkills<T extends SkillRecord>(skills: readonly T[]): T[] {
  return skills.filter((skill) => !skill.disableModelInvocation).sort((a, b) => compare(a.name, b.name) || compare(a.file, b.file));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The system-prompt section that lists `skills` for the model: an instruction naming
 * `options.toolName`, then `<available_skills>` with one `<skill>` per line (XML-escaped). The
 * empty string when no skill is visible.
 */
export function skillCatalog(skills: readonly SkillRecord[], options: SkillCatalogOptions): string {
  const visible = visibleSkills(skills);
  if (visible.length === 0) return '';
  return [
    'SKILLS:',
    'The following skills provide specialized instructions for specific tasks. ' +
      `When a task matches a skill's description, call ${options.toolName} with the skill's name to load its full instructions; ` +
      'relative paths in a skill resolve from its directory.',
    '<available_skills>',
    ...visible.map((skill) => `<skill><name>${xmlText(skill.name)}</name><description>${xmlText(skill.description)}</description></skill>`),
    '</available_skills>',
  ].join('\n');
}

/** Estimated tokens the catalog of `skills` adds to the system prompt (0 when no skill is visible). */
export function catalogTokens(skills: readonly SkillRecord[], options: SkillCatalogOptions = { toolName: DEFAULT_SKILL_TOOL }): number {
  const text = skillCatalog(skills, options);
  return text === '' ? 0 : estimateTextTokens(text);
}

/**
 * Text as XML character data on one line: `&`, `<` and `>` escaped, runs of white space made one
 * space (a description folded over lines reads the same and costs fewer tokens), and control
 * characters, which XML does not allow, removed.
 */
export function xmlText(text: string): string {
  return (
    text
      .replace(/\s+/g, ' ')
      .trim()
      // eslint-disable-next-line no-control-regex -- removing control characters is the point.
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, '')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
  );
}
