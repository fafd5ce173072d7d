/**
 * The `loopwright` command line, on commander: one program with a subcommand per command, each with
 * its arguments, options, examples and the environment variables it reads in its help.
 *
 * The command modules, and with them the Temporal SDK, are loaded only when a command runs, so
 * `--help`, `--version` and usage mistakes answer at once. Every failure goes through one place:
 * on stderr as a line, or with `--json` as one object on stdout, `{"error": ..., "type": ...}`,
 * with the exit status of cli/exit-codes.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, CommanderError } from 'commander';
import { addSessionCommands } from './cli-session-commands';
import { argumentTerm, type Invocation, rootHelpDetails } from './cli-support';
import { addToolCommands } from './cli-tool-commands';
import { addBatchCommands } from './cli-batch-commands';
import { addEvalCommands } from './cli-eval-commands';
import { addNamespaceCommand } from './cli-namespace-command';
import { EXIT, reportFailure, USAGE_ERROR } from './exit-codes';
import { installExitOnSignal } from './exit-on-signal';
import { exitWhenFlushed } from './exit-flushed';
import { type CommandOutput, consoleOutput, UsageError } from './output';
import { projectRoot } from '../client/server/project-paths';

/** The package version, read at run time (not imported, so that the build does not copy package.json into dist/). */
export function version(): string {
  const manifest = JSON.parse(fs.readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as { version: string };
  return manifest.version;
}

/** Run the command line with `argv` (without node and script); resolves to the exit status. */
export async function main(argv: string[], out: CommandOutput = consoleOutput): Promise<number> {
  const invocation: Invocation = { out };
  try {
    await buildProgram(invocation).parseAsync(argv, { from: 'user' });
    return invocation.code ?? EXIT.OK;
  } catch (err) {
    return failed(err, invocation, argv);
  }
}

/** Report what ended the command line and return its exit status. */
function failed(err: unknown, invocation: Invocation, argv: readonly string[]): number {
  const json = invocation.json ?? wantsJson(argv);
  if (err instanceof CommanderError) {
    // Help and version were printed: done. Help because no command was given is a usage mistake.
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return EXIT.OK;
    if (err.code === 'commander.help') return err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    return usageFailure(err.message, invocation, json);
  }
  if (err instanceof UsageError) return usageFailure(err.message, invocation, json);
  return reportFailure(invocation.out, err, { json });
}

/**
 * A usage mistake, named as commander names it (the option or argument, and the closest command
 * or option when there is one); the command's usage line and where its help is follow.
 */
function usageFailure(message: string, { out, command }: Invocation, json: boolean): number {
  const name = command ? commandPath(command) : undefined;
  const text = message.replace(/^error: /, '');
  if (json) {
    out.log(JSON.stringify({ error: text.replace(/\s*\n\s*/g, ' '), type: USAGE_ERROR }));
    return EXIT.USAGE;
  }
  const lines = [`error: ${text}`];
  if (command) {
    lines.push(`Usage: loopwright ${name} ${command.usage()}`);
    lines.push(`Run "loopwright ${name} --help" for its options, examples and the environment variables it reads.`);
  } else {
    lines.push('Run "loopwright --help" for the list of commands.');
  }
  out.error(lines.join('\n'));
  return EXIT.USAGE;
}

/** A subcommand's name under the program, e.g. `server start`. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let current: Command | null = command; current?.parent; current = current.parent) names.unshift(current.name());
  return names.join(' ');
}

/** `--json` among the arguments (before any `--`), for failures met before the command parsed its options. */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json');
}

/** The program: every command, its help, and output routed to `invocation.out` (scripts/gen-settings-doc.ts reads its flags). */
export function buildProgram(invocation: Invocation): Command {
  const { out } = invocation;
  const program = new Command('loopwright')
    .description('Run BMAD-style agent bundles as durable Temporal workflows.')
    .usage('<command> [options]')
    .version(version(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .helpCommand('help [command]', 'show help of a command')
    // Commands listed with their arguments and required options, e.g. `rewind <id> --to-turn <k>`.
    .configureHelp({ subcommandTerm: (cmd) => [cmd.name(), ...cmd.registeredArguments.map(argumentTerm), ...cmd.options.filter((o) => o.mandatory).map((o) => o.flags)].join(' ') })
    .configureOutput({
      writeOut: (text) => out.log(text.replace(/\n$/, '')),
      writeErr: (text) => out.error(text.replace(/\n$/, '')),
      // Errors are printed by `main`, as a line or as JSON.
      outputError: () => undefined,
    })
    .exitOverride()
    .showSuggestionAfterError()
    .hook('preSubcommand', (_program, command) => {
      invocation.command = command;
    })
    .addHelpText('after', rootHelpDetails());

  addSessionCommands(program, invocation);
  addToolCommands(program, invocation);
  addBatchCommands(program, invocation);
  addEvalCommands(program, invocation);
  addNamespaceCommand(program, invocation);

  // `loopwright version`, as earlier versions had it.
  program.command('version', { hidden: true }).action(() => {
    out.log(version());
  });

  return program;
}

if (require.main === module) {
  installExitOnSignal();
  main(process.argv.slice(2)).then(
    (code) => exitWhenFlushed(code),
    (err) => {
      process.stderr.write(`${String(err)}\n`);
      exitWhenFlushed(1);
    },
  );
}
