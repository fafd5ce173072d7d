/**
 * Checks a `loopwright …` command line shown in the docs against the real command definitions
 * (cli/cli.ts's program): the command and subcommand exist, every option is one the command has
 * (a value-taking option takes the next word), and, for a whole command line, the number of
 * arguments fits. Values are not parsed: the docs write placeholders (`<id>`, `N`) where a value
 * goes. Notation the docs use in prose (`[call-id]`, `…`) is skipped.
 */
import type { Command, Option } from 'commander';
import { buildProgram } from '../../../cli/cli';

/** The program whose commands the docs are checked against. */
export function docsProgram(): Command {
  const silent = { log: () => undefined, error: () => undefined };
  return buildProgram({ out: silent });
}

/** Split a shell line into commands (at `|`, `;`, `&&`, `||`, `&`) of words, respecting quotes and `$( )`; a `#` comment ends it. */
export function shellCommands(line: string): string[][] {
  const commands: string[][] = [[]];
  let word = '';
  let quote: string | undefined;
  let depth = 0;
  const endWord = (): void => {
    if (word) commands[commands.length - 1]!.push(word);
    word = '';
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      continue;
    }
    if (c === '$' && line[i + 1] === '(') {
      depth++;
      word += '$(';
      i++;
      continue;
    }
    if (depth > 0) {
      if (c === ')') depth--;
      word += c;
      continue;
    }
    if (c === '#' && word === '') break;
    if (/\s/.test(c)) {
      endWord();
      continue;
    }
    if (c === '|' || c === ';' || c === '&') {
      endWord();
      if (line[i + 1] === c) i++;
      commands.push([]);
      continue;
    }
    word += c;
  }
  endWord();
  return commands.filter((words) => words.length > 0);
}

/** The words after `loopwright` when a command runs it (`./bin/loopwright.js`, `npx loopwright`, `VAR=x loopwright`), else undefined. */
export function loopwrightArgs(words: readonly string[]): string[] | undefined {
  let i = 0;
  while (i < words.length && /^[A-Z_][A-Z0-9_]*=/.test(words[i]!)) i++;
  if (words[i] === 'npx') i++;
  if (words[i] === 'npm' && words[i + 1] === 'run' && words[i + 2] === 'loopwright') return words.slice(words[i + 3] === '--' ? i + 4 : i + 3);
  if (words[i] === 'loopwright' || words[i] === './bin/loopwright.js' || words[i] === 'bin/loopwright.js') return words.slice(i + 1);
  return undefined;
}

/** Problems of one command line (empty when it parses). `whole`: the line gives every argument (a code block), not a mention in prose. */
export function checkArgs(program: Command, args: readonly string[], whole: boolean): string[] {
  const words = args.filter((word) => !isNotation(word));
  if (words[0] !== undefined && /^<.*>$/.test(words[0])) return []; // `loopwright <command> --help`: any command.
  // `loopwright help [command]`: commander's own help command, for a command that exists.
  if (words[0] === 'help') return words.length > 1 && !/^<.*>$/.test(words[1]!) ? checkArgs(program, [...words.slice(1), '--help'], whole) : [];
  let command = program;
  const positional: string[] = [];
  const problems: string[] = [];
  let i = 0;
  for (; i < words.length; i++) {
    const word = words[i]!;
    if (word === '--') {
      positional.push(...words.slice(i + 1));
      break;
    }
    if (word.startsWith('-') && word !== '-') {
      const [flag] = word.split('=');
      // An option of a default subcommand given to its parent (`server --detach` is `server start --detach`).
      const option = findOption(command, flag!) ?? (defaultSubcommand(command) && findOption(defaultSubcommand(command)!, flag!));
      if (!option) {
        problems.push(`unknown option ${flag} of "${commandName(command)}"`);
        continue;
      }
      if ((option.required || option.optional) && !word.includes('=') && !(option.optional && (words[i + 1] === undefined || words[i + 1]!.startsWith('-')))) i++;
      continue;
    }
    // A subcommand, while no argument has been taken yet.
    const sub = positional.length === 0 ? command.commands.find((c) => c.name() === word || c.aliases().includes(word)) : undefined;
    if (sub) {
      command = sub;
      continue;
    }
    if (positional.length === 0 && command.commands.length > 0) {
      const fallback = defaultSubcommand(command);
      if (!fallback) {
        problems.push(`unknown command "${commandName(command)} ${word}"`);
        return problems;
      }
      command = fallback;
    }
    positional.push(word);
  }
  if (whole && !words.some((w) => w === '--help' || w === '-h' || w === '--version' || w === '-V')) problems.push(...argumentProblems(command, positional));
  return problems;
}

/** `[call-id]`, `[--json]`, `…`: how prose writes optional or elided parts, not words of the command. */
function isNotation(word: string): boolean {
  return /^\[.*\]$/.test(word) || word === '…' || word === '...' || /^\(.*\)$/.test(word);
}

function argumentProblems(command: Command, positional: readonly string[]): string[] {
  // A command with subcommands and a default one (`server` → `server start`) takes the default's arguments.
  const args = command.registeredArguments;
  const required = args.filter((a) => a.required).length;
  const variadic = args.some((a) => a.variadic);
  if (command.commands.length > 0 && args.length === 0) return positional.length === 0 ? [] : [`"${commandName(command)}" takes a subcommand, not ${positional.join(' ')}`];
  if (positional.length < required) return [`"${commandName(command)}" needs ${required} argument(s), got ${positional.length}`];
  if (!variadic && positional.length > args.length) return [`"${commandName(command)}" takes at most ${args.length} argument(s), got ${positional.length}: ${positional.join(' ')}`];
  return [];
}

/** The option `flag` names on `command` (or, for help and version, on the program). */
function findOption(command: Command, flag: string): Option | undefined {
  for (let current: Command | null = command; current; current = current.parent) {
    const found = (current.options as readonly Option[]).find((o) => o.long === flag || o.short === flag);
    if (found) return found;
    if (flag === '--help' || flag === '-h') return { required: false, optional: false } as Option;
    // Options belong to their command; only help and version are inherited from the program.
    if (current !== command || !['--version', '-V'].includes(flag)) break;
  }
  return undefined;
}

/** The subcommand a command runs when none is named (commander's `isDefault`). */
function defaultSubcommand(command: Command): Command | undefined {
  const name = (command as unknown as { _defaultCommandName?: string | null })._defaultCommandName;
  return name ? command.commands.find((c) => c.name() === name) : undefined;
}

function commandName(command: Command): string {
  const names: string[] = [];
  for (let current: Command | null = command; current; current = current.parent) names.unshift(current.name());
  return names.join(' ');
}
