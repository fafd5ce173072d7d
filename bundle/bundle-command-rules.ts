/**
 * The command rules a bundle adds to a session's (common/commands/command-rules.ts): the deny rules
 * of its `bundle.yaml` (`commands.deny`), and as requests, never grants, its `commands.allow` and
 * the commands an agent skill's `allowed-tools` asks for (`Bash(git:*)`). A bundle may come from
 * someone else (docs/concepts/security.md): it can refuse commands and say which it needs, and only the
 * user's own settings or the worker's operator let a command run without a person's yes.
 */
import { type CommandRules, commandRequestsOf, mergeCommandRules, rulesFrom, skillRequestSource } from '../common/commands/command-rules';
import type { BundleAgent, BundleInfo } from './bundle-loader';
import { skillRootVariable } from './skills/skill-agent';

/** The rules `bundle` adds for a session of `agent`; undefined when it adds none. */
export function bundleCommandRules(bundle: Pick<BundleInfo, 'manifest' | 'skills' | 'projectRoot'>, agent: Pick<BundleAgent, 'file' | 'skill'>): CommandRules | undefined {
  const commands = bundle.manifest?.commands;
  const skill = agent.skill ? bundle.skills?.find((s) => s.file === agent.file) : undefined;
  return mergeCommandRules(
    { deny: rulesFrom(commands?.deny, "the bundle's commands.deny in bundle.yaml"), requests: rulesFrom(commands?.allow, "the bundle's commands.allow in bundle.yaml") },
    skill ? { requests: rulesFrom(skillCommandRequests(skill, skillRootVariable(skill.dir, bundle.projectRoot)), skillRequestSource(skill.name)) } : undefined,
  );
}

/**
 * The command patterns a skill's `allowed-tools` asks for, with `{skill-name}` and `{skill-root}`
 * filled in as its instructions fill them (`root`: `{project-root}/.claude/skills/x`, or the folder).
 */
export function skillCommandRequests(skill: { name: string; allowedTools?: string[] }, root: string): string[] {
  return commandRequestsOf(skill.allowedTools ?? []).map((pattern) => pattern.replaceAll('{skill-root}', root).replaceAll('{skill-name}', skill.name));
}
