/**
 * Command rules: which `run_command` lines run without a person's yes, which are refused without
 * asking, and which wait, as coding agents decide it.
 *
 * A rule is a command pattern: its words are compared with the start of a simple command
 * (`git status` covers `git status -s`, not `git statusx`), `*` stands for any run of characters
 * (`uv run {project-root}/_bmad/scripts/*`), and a trailing `:*` is the same as no trailing part
 * (`git:*` is `git`, as coding agents write it). White space outside quotes counts as one space.
 * Path variables in a rule and in the command are filled in with the session's, as `run_command`
 * fills them, and a command is judged both as written and filled in.
 *
 * A line is read by command-line.ts. Deny beats allow: a deny rule that covers any simple command
 * of the line (one inside `$( )` or parentheses too, also without the variable assignments and
 * wrappers before it, or with `/bin/rm` cut to `rm`) refuses the line. An allow rule lets a line
 * run only when every simple command of it is covered by one, and the line holds nothing the
 * rules cannot judge (a substitution, a subshell, a redirection to a file): `git status; rm -rf x`
 * is not covered by `git status`. Requests (a skill's `allowed-tools`) never let a line run; the
 * approval shows them. Pure functions: workflow code uses them.
 */
import { matchesToolPattern } from '../tool-patterns';
import { fillCommandVariables, readCommandLine, runForms } from './command-line';

/** One rule: a command pattern, and where it was given (for messages: `the session's commands.deny`). */
export interface CommandRule {
  pattern: string;
  source: string;
}

/** The rules a session's commands are judged by. */
export interface CommandRules {
  /** Lines every part of which one of these covers run without asking. */
  allow?: CommandRule[];
  /** A line any part of which one of these covers is refused without asking. */
  deny?: CommandRule[];
  /** Asked for (a skill's `allowed-tools`, a bundle's `commands.allow`): shown with the approval, never a grant. */
  requests?: CommandRule[];
  /** Lines every part of which one of these covers are safe to run again: made again when their worker is lost (they grant nothing). */
  repeatable?: CommandRule[];
}

/** What the rules say of a command line. */
export type CommandVerdict =
  /** Refused without asking: the rule, and the simple command it covered. */
  | { verdict: 'deny'; rule: CommandRule; command: string }
  /** Runs without asking: the rules that covered its parts. */
  | { verdict: 'allow'; rules: CommandRule[] }
  /** Waits for a person: the requests that cover it, and why no rule could, when the line is beyond them. */
  | { verdict: 'ask'; requestedBy: CommandRule[]; opaque?: string };

/** Where the session's own rules come from, as messages name it. */
export const SESSION_ALLOW_SOURCE = "the session's commands.allow";
export const SESSION_DENY_SOURCE = "the session's commands.deny";

/** Where a skill's requests come from, as messages name it. */
export function skillRequestSource(skill: string): string {
  return `skill ${skill}'s allowed-tools`;
}

/** Longest rule, in characters. */
export const MAX_COMMAND_RULE_CHARS = 1000;

/** What a rule may be, in words (for messages). */
export const COMMAND_RULE_RULE = 'a command rule is one simple command (no ;, &&, ||, |, &, line breaks, $( ), backticks, parentheses or redirections to files), * for any run of characters';

/** Why `pattern` is not a rule, or undefined when it is one. */
export function commandRuleProblem(pattern: string): string | undefined {
  if (pattern.trim() === '') return 'a command rule must not be empty';
  if (pattern.length > MAX_COMMAND_RULE_CHARS) return `a command rule has at most ${MAX_COMMAND_RULE_CHARS} characters`;
  const reading = readCommandLine(pattern);
  if (reading.parts.length !== 1 || reading.opaque !== undefined) return `${COMMAND_RULE_RULE}, got ${JSON.stringify(pattern.length > 60 ? `${pattern.slice(0, 60)}…` : pattern)}`;
  return undefined;
}

/** A rule as it is compared: white space outside quotes collapsed, a trailing `:*` dropped. */
export function normalizedRule(pattern: string): string {
  const part = readCommandLine(pattern).parts[0] ?? pattern.trim();
  return part.endsWith(':*') && part.length > 2 ? part.slice(0, -2).trimEnd() : part;
}

/** Whether the rule (normalised) covers the simple command `command`: its words start it, `*` standing for any run of characters. */
export function ruleCovers(rule: string, command: string): boolean {
  return matchesToolPattern(rule, command) || matchesToolPattern(`${rule} *`, command);
}

/** True when there is any rule or request. */
export function hasCommandRules(rules: CommandRules | undefined): boolean {
  return rules !== undefined && [rules.allow, rules.deny, rules.requests, rules.repeatable].some((list) => list !== undefined && list.length > 0);
}

/** What the model is told of a command a deny rule refused: the rule, where it was given, and that nothing ran. */
export function refusalMessage(verdict: Extract<CommandVerdict, { verdict: 'deny' }>): string {
  return `Refused without asking: ${JSON.stringify(verdict.command)} is covered by the deny rule ${ruleText(verdict.rule)}. The command did not run.`;
}

/** The rules of every set together, in order; undefined when there are none. */
export function mergeCommandRules(...sets: readonly (CommandRules | undefined)[]): CommandRules | undefined {
  const merged: CommandRules = {};
  for (const key of ['allow', 'deny', 'requests', 'repeatable'] as const) {
    const rules = sets.flatMap((set) => set?.[key] ?? []);
    if (rules.length > 0) merged[key] = rules;
  }
  return hasCommandRules(merged) ? merged : undefined;
}

/**
 * Whether the line `command` may be run again when its worker is lost: every simple command of it
 * covered by a `repeatable` rule, with nothing in it the rules cannot judge (as an allow rule decides).
 */
export function isRepeatable(command: string, rules: CommandRules | undefined, variables: Readonly<Record<string, string>> = {}): boolean {
  if (!rules?.repeatable || rules.repeatable.length === 0) return false;
  return judgeCommand(command, { allow: rules.repeatable }, variables).verdict === 'allow';
}

/** Where the session's repeatable rules come from, as messages name it. */
export const SESSION_REPEATABLE_SOURCE = "the session's commands.repeatable";

/** `patterns` as rules given by `source`. */
export function rulesFrom(patterns: readonly string[] | undefined, source: string): CommandRule[] {
  return (patterns ?? []).map((pattern) => ({ pattern, source }));
}

/** `"git status" (the session's commands.allow)`. */
export function ruleText(rule: CommandRule): string {
  return `${JSON.stringify(rule.pattern)} (${rule.source})`;
}

/**
 * What `rules` say of `command` (see the module comment), with path variables filled in from
 * `variables`. Deny first, then allow, else ask (with the requests that cover every part).
 */
export function judgeCommand(command: string, rules: CommandRules, variables: Readonly<Record<string, string>> = {}): CommandVerdict {
  // Filled in first: a refusal names the command as it would have run.
  const forms = unique([fillCommandVariables(command, variables), command]).map(readCommandLine);
  const patterns = (rule: CommandRule): string[] => unique([rule.pattern, fillCommandVariables(rule.pattern, variables)].map(normalizedRule));
  for (const rule of rules.deny ?? []) {
    const written = patterns(rule);
    const bare = unique(written.map(unquoted));
    for (const reading of forms) {
      const part = reading.parts.find((p) => written.some((pattern) => ruleCovers(pattern, p)));
      if (part !== undefined) return { verdict: 'deny', rule, command: part };
      for (const run of reading.runs) {
        if (runForms(run).some((form) => bare.some((pattern) => ruleCovers(pattern, form)))) return { verdict: 'deny', rule, command: run };
      }
    }
  }
  const opaque = forms.find((reading) => reading.opaque !== undefined)?.opaque;
  if (opaque === undefined) {
    for (const reading of forms) {
      const used = coveringRules(reading.parts, rules.allow ?? [], patterns);
      if (used) return { verdict: 'allow', rules: used };
    }
  }
  let requestedBy: CommandRule[] = [];
  for (const reading of forms) requestedBy = unique([...requestedBy, ...(coveringRules(reading.parts, rules.requests ?? [], patterns) ?? [])]);
  return { verdict: 'ask', requestedBy, ...(opaque !== undefined ? { opaque } : {}) };
}

/** The rules that cover `parts`, one for each part, or undefined when a part is not covered (or there are none). */
function coveringRules(parts: readonly string[], rules: readonly CommandRule[], patterns: (rule: CommandRule) => string[]): CommandRule[] | undefined {
  if (parts.length === 0 || rules.length === 0) return undefined;
  const used: CommandRule[] = [];
  for (const part of parts) {
    const rule = rules.find((r) => patterns(r).some((pattern) => ruleCovers(pattern, part)));
    if (rule === undefined) return undefined;
    used.push(rule);
  }
  return unique(used);
}

/**
 * The command patterns an Agent Skill's `allowed-tools` asks for: `Bash(git:*)` is `git`,
 * `Bash(npm run test)` is `npm run test`, `Bash` or `Bash(*)` is every command. Other tools
 * (`Read`, `Write`) are not commands. The field is split on white space when it is read, so the
 * words of one entry are joined again here; an entry that is not a rule is left out.
 */
export function commandRequestsOf(allowedTools: readonly string[]): string[] {
  const text = allowedTools.join(' ');
  const found: string[] = [];
  for (const match of text.matchAll(/(?:^|\s)Bash(?:\(([^()]*)\))?(?=\s|$)/g)) {
    const inner = match[1]?.trim();
    const pattern = inner === undefined || inner === '' ? '*' : inner;
    if (commandRuleProblem(pattern) === undefined) found.push(normalizedRule(pattern));
  }
  return unique(found);
}

/** `pattern` without quotes and backslashes, as a deny rule meets a command whose quotes the shell removes. */
function unquoted(pattern: string): string {
  return pattern.replace(/\\(.)/g, '$1').replace(/['"]/g, '');
}

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}
