/**
 * The `loopwright` command line: a thin dispatcher over the typed client and the bundle tools.
 */
import { installExitOnSignal, onSignalGracefully, setRejoinHint } from './exit-on-signal';
import { type CommandOutput, consoleOutput, describeError, UsageError } from './output';

type Command = (argv: string[], out: CommandOutput) => Promise<number>;

/** Commands are loaded lazily so `loopwright validate` does not load the Temporal SDK. */
const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  run: {
    summary: 'run <bundle> <agent> "<message>" [--json] [--once] [--detach] [--max-iterations N] [--model M] [--id ID]',
    load: async () => (await import('./commands/session-commands')).runCommand,
  },
  send: { summary: 'send <id> "<message>" [--json]', load: async () => (await import('./commands/session-commands')).sendCommand },
  interrupt: { summary: 'interrupt <id> [reason]', load: async () => (await import('./commands/session-commands')).interruptCommand },
  status: { summary: 'status <id> [--json]', load: async () => (await import('./commands/session-commands')).statusCommand },
  transcript: {
    summary: 'transcript <id> [--json] [--from N]  (the whole conversation, across the session\'s runs)',
    load: async () => (await import('./commands/session-commands')).transcriptCommand,
  },
  end: { summary: 'end <id>', load: async () => (await import('./commands/session-commands')).endCommand },
  worker: { summary: 'worker [--task-queue Q]', load: async () => (await import('./commands/worker-command')).workerCommand },
  server: {
    summary: 'server [start [--detach] | stop | status]',
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
  demo: { summary: 'demo  (one session of the example bundle; a scripted model unless OPENAI_API_KEY is set)', load: async () => (await import('./commands/demo-command')).demoCommand },
  inspect: { summary: 'inspect <bundle> [agent] [--json]', load: async () => (await import('./commands/inspect')).inspectCommand },
  validate: { summary: 'validate <bundle> [--json]', load: async () => (await import('./commands/validate')).validateCommand },
};

/** Usage text listing every command. */
export function usage(): string {
  return ['Usage: loopwright <command> ...', '', ...Object.values(COMMANDS).map((c) => `  loopwright ${c.summary}`)].join('\n');
}

/** Run the command line with `argv` (without node and script); resolves to the exit status. */
export async function main(argv: string[], out: CommandOutput = consoleOutput): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    out.log(usage());
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) {
    out.error(`Unknown command "${name}".\n${usage()}`);
    return 2;
  }
  // Said on Ctrl-C when the session is known from the command line; `run` names its session once started.
  const hint = rejoinHintFor(name, rest);
  if (hint) setRejoinHint(hint);
  try {
    return await (await command.load())(rest, out);
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      out.error(`${(err as Error).message}\n${usage()}`);
      return 2;
    }
    out.error(`Error: ${describeError(err)}`);
    return 1;
  }
}

/** Commands whose first positional argument is a session id. */
const SESSION_ID_COMMANDS = new Set(['send', 'interrupt', 'status', 'end', 'transcript']);

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
