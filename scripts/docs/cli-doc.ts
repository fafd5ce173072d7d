/**
 * Writes docs/reference/cli.md from the command definitions themselves (cli/cli.ts's `buildProgram`):
 * every command and subcommand with its arguments, options (flags, help, default), examples and the
 * environment variables its help names, and the exit statuses. Nothing here is written by hand, so
 * the page cannot drift from `loopwright <command> --help`.
 *
 * scripts/gen-docs.ts writes it; test/unit/docs/generated-docs.test.ts fails while it is out of date.
 */
import type { Argument, Command, Help, Option } from 'commander';
import { buildProgram } from '../../cli/cli';
import { EXIT_STATUS_HELP } from '../../cli/exit-codes';
import { code, escapeText, generatedNote, row } from './markdown';

/** The page, relative to docs/. */
export const CLI_DOC = 'reference/cli.md';

/** A command under the program, and its name as typed (`server start`). */
interface Entry {
  command: Command;
  name: string;
}

/** The whole of docs/reference/cli.md. */
export function renderCliDoc(): string {
  const { program, helpOf } = capturingProgram();
  const entries = [...visibleCommands(program, '')];
  const lines = [
    '# Command line reference',
    '',
    generatedNote('the command definitions in cli/'),
    '',
    'Every `loopwright` command with its arguments, options, examples and the environment variables it reads, as',
    '`loopwright <command> --help` (or `loopwright help <command>`) prints them. From a checkout run `./bin/loopwright.js …`',
    '(or `npm run loopwright -- …`); `npm link` or an installed package puts `loopwright` on your PATH. `loopwright --help`',
    'lists the commands and the exit statuses; `loopwright --version` prints the version.',
    '',
    "A mistake on the command line names the option or argument (`error: unknown option '--frm'` and",
    "`(Did you mean --from?)`, `error: option '--max-iterations <n>' argument 'lots' is invalid`), or the closest command",
    "for a mistyped one, prints the command's usage line and exits 2.",
    '',
    'With `--json` a command prints exactly one JSON object on stdout, a failure too, however large (the process exits',
    'only once stdout is flushed, so a slow reader of a pipe gets all of it). `list --json` prints `{sessions, count}`;',
    "`run --json` carries the session's `warnings` (e.g. a file a critical action names that is missing). An unreachable",
    'server is named with its address and where that came from (`TEMPORAL_ADDRESS`, or',
    '`profile "cloud" of ~/.config/temporalio/temporal.toml`):',
    '',
    '```json',
    '{"error": "cannot reach the Temporal server at 127.0.0.1:7999 (TEMPORAL_ADDRESS): Failed to connect before the deadline", "type": "ServerUnreachable"}',
    '```',
    '',
    '`type` names the failure: `UsageError` (exit 2); `ServerUnreachable`, `TemporalConfigError`, `DevServerStartError` or',
    "`TemporalToolNotFoundError` (exit 3); a session's refusal by its failure type (`LoopwrightBusy`, `LoopwrightBadInput`,",
    "…); `LoopwrightTurnFailed` or `LoopwrightMaxIterationsExceeded` for a failed turn, whose object keeps the turn's",
    "fields (`workflowId`, `success`, `status`, `response`, `iterations`); `BundleNotFound` or the bundle error's class",
    "(`AgentNotFoundError`, …) when `run` or `inspect` cannot load the agent; `BundleInvalid` for `validate`'s problems",
    '(with the report); `NoTurnRunning` when `interrupt` finds no turn; `NoSearchAttributes` when `list` cannot search;',
    "otherwise the error's class (`WorkflowNotFoundError`, …). Each is explained, with its fix, in",
    '[Troubleshooting](../troubleshooting.md).',
    '',
    '| Command | What it does |',
    '| --- | --- |',
    ...entries.map(({ command, name }) => row([`[${code(`${name}${argumentsText(command)}`)}](#${anchor(name)})`, summaryOf(command)])),
    '',
    '## Exit statuses {#exit-statuses}',
    '',
    '| Status | Meaning |',
    '| --- | --- |',
    ...EXIT_STATUS_HELP.map(([status, text]) => row([String(status), text])),
    '',
    'In detail: 1 covers a `failed`, `stuck`, `interrupted`, `max_iterations`, `truncated`, `content_filtered`, `refused` or',
    '`budget_exceeded` turn, validation problems, a request the session refused (`busy`, nothing waiting for approval, no',
    'turn to extend), nothing to interrupt, and a session that does not exist. 3 means nothing answered within the',
    "client's connect deadline (10 s, `LOOPWRIGHT_CONNECT_TIMEOUT`) or a call failed with gRPC `UNAVAILABLE`, the embedded",
    'server could not be started, or the connection settings are bad (`TemporalConfigError`). 130 and 143 come after one',
    'line saying how to rejoin the session, which stays on the server (a second signal exits at once).',
    '',
    '`loopwright server` keeps statuses of its own: 1 when the server could not start, or, for `status`, when it is not running.',
    '',
    ...entries.flatMap((entry) => commandSection(entry, helpOf)),
  ];
  return `${lines.join('\n').replace(/\n+$/, '')}\n`;
}

/** One command's section: description, usage, arguments, options, and its help's examples and environment. */
function commandSection({ command, name }: Entry, helpOf: (command: Command) => string): string[] {
  const help = command.createHelp();
  const args = help.visibleArguments(command);
  const options = help.visibleOptions(command).filter((option) => option.long !== '--help');
  const lines = [`## loopwright ${name} {#${anchor(name)}}`, '', escapeText(command.description() || summaryOf(command)), '', '```text', `loopwright ${name} ${command.usage()}`.trimEnd(), '```', ''];
  const subcommands = [...visibleCommands(command, `${name} `)];
  if (subcommands.length > 0) {
    lines.push(`Subcommands: ${subcommands.map((sub) => `[${code(sub.name)}](#${anchor(sub.name)})`).join(', ')}.`, '');
  }
  if (args.length > 0) {
    lines.push('| Argument | Meaning |', '| --- | --- |', ...args.map((arg) => row([code(argumentText(arg)), escapeText(arg.description)])), '');
  }
  if (options.length > 0) {
    lines.push('| Option | Meaning |', '| --- | --- |', ...options.map((option) => row([code(option.flags), escapeText(withDefault(option, help))])), '');
  }
  const details = afterHelp(command, helpOf);
  if (details) lines.push('```text', details, '```', '');
  return lines;
}

/** The program with its help captured: `helpOf(command)` is what `--help` prints for it. */
function capturingProgram(): { program: Command; helpOf: (command: Command) => string } {
  let captured = '';
  const sink = (text: string): void => {
    captured += `${text}\n`;
  };
  const program = buildProgram({ out: { log: sink, error: sink } });
  return {
    program,
    helpOf: (command) => {
      captured = '';
      command.outputHelp();
      return captured;
    },
  };
}

/** What a command's help prints after commander's own part: its examples and environment variables. */
function afterHelp(command: Command, helpOf: (command: Command) => string): string {
  const whole = helpOf(command);
  const own = command.helpInformation().replace(/\n$/, '');
  const at = whole.indexOf(own);
  const after = at < 0 ? '' : whole.slice(at + own.length);
  return after.replace(/^\n+/, '').replace(/\s+$/, '');
}

/** The visible subcommands of `command`, depth first, with the names they are typed with. */
function* visibleCommands(command: Command, prefix: string): Generator<Entry> {
  const help = command.createHelp();
  for (const sub of help.visibleCommands(command)) {
    if (sub.name() === 'help') continue;
    const name = `${prefix}${sub.name()}`;
    yield { command: sub, name };
    yield* visibleCommands(sub, `${name} `);
  }
}

function summaryOf(command: Command): string {
  return escapeText(command.summary() || command.description().split(/(?<=\.)\s/)[0] || '');
}

function argumentsText(command: Command): string {
  const args = command.registeredArguments.map(argumentText);
  return args.length > 0 ? ` ${args.join(' ')}` : '';
}

function argumentText(arg: Argument): string {
  const name = `${arg.name()}${arg.variadic ? '...' : ''}`;
  return arg.required ? `<${name}>` : `[${name}]`;
}

/** An option's help, with commander's default when the text does not already say it. */
function withDefault(option: Option, help: Help): string {
  if (/\(default/.test(option.description)) return option.description;
  const described = help.optionDescription(option).match(/\((default: .*)\)$/);
  return described ? `${option.description} (${described[1]})` : option.description;
}

/** The anchor of a command's section: `server start` → `server-start`. */
export function anchor(name: string): string {
  return name.replace(/\s+/g, '-');
}
