/**
 * Command rules in the workflow (common/commands/command-rules.ts): what the rules say of a
 * `run_command` call, and what the person approving one sees: the exact line, its folder and its
 * sandbox, and who asked for it besides the model. Deterministic: the rules, variables and
 * settings come from the session's recorded runtime context (initialisation, activated skills).
 */
import type { ToolCall } from '../../common/messages';
import type { CommandApprovalView } from '../../common/session-types';
import type { RuntimeContext } from '../../common/runtime-context';
import { type CommandRule, type CommandRules, type CommandVerdict, hasCommandRules, judgeCommand, mergeCommandRules, ruleText, skillRequestSource } from '../../common/commands/command-rules';
import { fillCommandVariables, fillPathVariables } from '../../common/commands/command-line';
import { RUN_COMMAND } from '../../common/tools/run-command';
import { argsOf } from '../../common/tools/tool-spec';

/**
 * Sessions whose command rules decide without a person: a command an allow rule covers runs
 * without waiting, one a deny rule covers is refused without asking. Asked for only when the rules
 * decide a call, so a history recorded before the rules (which has none) replays as it ran.
 */
export const COMMAND_RULES_PATCH = 'loopwright-command-rules';

/** Every rule of the session now: its own, its bundle's and worker's (recorded at initialisation), and its active skills' requests. */
export function sessionCommandRules(context: RuntimeContext | undefined): CommandRules | undefined {
  const requests: CommandRule[] = (context?.activeSkills ?? []).flatMap((skill) => (skill.commands ?? []).map((pattern) => ({ pattern, source: skillRequestSource(skill.name) })));
  return mergeCommandRules(context?.commands?.rules, { requests });
}

/** The command line a `run_command` call gives, as the model wrote it; undefined for another tool or a call without one. */
export function commandOf(call: ToolCall): string | undefined {
  if (call.function.name !== RUN_COMMAND.name) return undefined;
  const command = argsOf(call).command;
  return typeof command === 'string' && command.trim() !== '' ? command : undefined;
}

/** What the session's rules say of `call`; undefined when it is not a command or the session has no rules. */
export function commandVerdict(call: ToolCall, context: RuntimeContext | undefined): CommandVerdict | undefined {
  const command = commandOf(call);
  if (command === undefined) return undefined;
  const rules = sessionCommandRules(context);
  return rules && hasCommandRules(rules) ? judgeCommand(command, rules, context?.variables ?? {}) : undefined;
}

/**
 * What the person approving a `run_command` call sees: the line with its path variables filled in
 * as the tool fills them, the folder it runs in, the sandbox as the session's settings make it, and
 * the requests (a skill's `allowed-tools`, the bundle's `commands.allow`) that cover it.
 */
export function commandApprovalView(call: ToolCall, context: RuntimeContext | undefined, verdict: CommandVerdict | undefined): CommandApprovalView | undefined {
  const command = commandOf(call);
  if (command === undefined || context === undefined) return undefined;
  const variables = context.variables ?? {};
  const given = argsOf(call).cwd;
  const cwd = typeof given === 'string' && given.trim() !== '' ? fillPathVariables(given.trim(), variables) : '.';
  const requestedBy = verdict?.verdict === 'ask' ? verdict.requestedBy.map(ruleText) : [];
  return {
    line: fillCommandVariables(command, variables),
    cwd: normalizePath(cwd.startsWith('/') ? cwd : `${context.projectRoot}/${cwd}`),
    sandbox: sandboxText(context),
    ...(requestedBy.length > 0 ? { requestedBy } : {}),
    ...(verdict?.verdict === 'ask' && verdict.opaque !== undefined ? { unjudged: `the line has ${verdict.opaque}, which no allow rule covers` } : {}),
  };
}

/** `bubblewrap: project read-only, writable /p/docs; network off; ends after 120 s`, from the session's recorded settings. */
function sandboxText(context: RuntimeContext): string {
  const settings = context.commands;
  const writable = context.writeRoots.length > 0 ? `writable ${context.writeRoots.join(', ')}` : 'nothing writable';
  return [
    `bubblewrap: project read-only, ${writable}${settings?.allowUnsandboxed ? ' (where bubblewrap is missing: no sandbox, allowUnsandboxed)' : ''}`,
    settings?.network ? 'network on' : 'network off',
    ...(settings ? [`ends after ${settings.timeoutMs / 1000} s`] : []),
  ].join('; ');
}

/** `/a/b/../c/.` as `/a/c`: a folder as the sandbox resolves it (symlinks aside). */
function normalizePath(absolute: string): string {
  const parts: string[] = [];
  for (const segment of absolute.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') parts.pop();
    else parts.push(segment);
  }
  return `/${parts.join('/')}`;
}
