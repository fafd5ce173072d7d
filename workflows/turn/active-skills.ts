/**
 * The skills a session has activated, from workflow code: a successful `activate_skill` result
 * (recorded in history) makes its skill the newest active one, so the next `read_file` resolves
 * a skill's bare paths (`references/guide.md`) from its folder. The list lives in the session's
 * runtime context, which every tool call carries and continue-as-new hands on. Deterministic:
 * it follows only from recorded results.
 */
import type { ToolCall, ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { ACTIVATE_SKILL } from '../../common/tools/activate-skill';

/** Most skills kept active at once (the oldest is dropped first). */
export const MAX_ACTIVE_SKILLS = 8;

/**
 * `context` with the skills that `calls` activated (their `results`, in call order) put first;
 * `context` itself when none did, so callers can tell a change by identity.
 */
export function withActivatedSkills(context: RuntimeContext, calls: readonly ToolCall[], results: readonly (ToolResult | undefined)[]): RuntimeContext {
  let active = context.activeSkills;
  calls.forEach((call, i) => {
    const skill = call.function.name === ACTIVATE_SKILL.name ? activatedSkill(results[i]) : undefined;
    if (skill === undefined) return;
    active = [skill, ...(active ?? []).filter((s) => s.name !== skill.name)].slice(0, MAX_ACTIVE_SKILLS);
  });
  return active === context.activeSkills ? context : { ...context, activeSkills: active };
}

/** The skill a successful `activate_skill` result names, if it is one. */
function activatedSkill(result: ToolResult | undefined): NonNullable<RuntimeContext['activeSkills']>[number] | undefined {
  if (result?.success !== true) return undefined;
  const skill = result.skill as { name?: unknown; dir?: unknown; hash?: unknown; commands?: unknown } | undefined;
  if (typeof skill?.name !== 'string' || typeof skill.dir !== 'string') return undefined;
  // The commands its allowed-tools asks for: requests a command's approval shows (workflows/turn/command-approval.ts).
  const commands = Array.isArray(skill.commands) ? skill.commands.filter((c): c is string => typeof c === 'string') : [];
  return { name: skill.name, dir: skill.dir, ...(typeof skill.hash === 'string' ? { hash: skill.hash } : {}), ...(commands.length > 0 ? { commands } : {}) };
}
