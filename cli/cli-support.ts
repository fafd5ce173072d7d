/**
 * What the command registrations of the `loopwright` command line share: the environment variables
 * commands read (for their help), how a command's help ends (examples, environment), the running
 * command line (`Invocation`), how a command is run (traced, its exit status kept) and the option
 * groups several commands take.
 *
 * Loaded with the command line itself (for `--help` too): it imports no command module and nothing
 * of the Temporal SDK.
 */
import type { Argument, Command } from 'commander';
import type { JsonOption } from './commands/command-support';
import { EXIT_STATUS_HELP } from './exit-codes';
import { onExitCleanup, setRejoinHint } from './exit-on-signal';
import type { CommandOutput } from './output';
import { collect, jsonObject, models, openFraction, positiveInt, positiveNumber, price, reasoningEffort, temperature, toolChoice, toolPatternList, toolPatterns, verifyAttempts, wholeNumber, agentPatternList } from './commands/option-values';
import { DEFAULT_VERIFY_ATTEMPTS } from '../common/verify-types';
import { DEFAULT_COMPACT_AT, DEFAULT_CONTEXT_WINDOW, DEFAULT_KEEP_RECENT, DEFAULT_MAX_CONTINUATIONS } from '../common/defaults';
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../common/model-call';
import type * as TracingModule from '../worker/tracing';

/** Environment variables a command reads: the names, and what they do. */
export type EnvironmentHelp = readonly (readonly [string, string])[];

/** Read by every command that talks to Temporal (through openTemporal). */
export const CONNECTION_ENV: EnvironmentHelp = [
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
export const MODEL_ENV: EnvironmentHelp = [
  ['OPENAI_API_KEY, OPENAI_BASE_URL', 'the model server, for a worker this command runs itself when none polls'],
  ['LOOPWRIGHT_MODEL', 'model unless the session names one (default: gpt-4o-mini)'],
  ['LOOPWRIGHT_LOG_LEVEL', 'Temporal runtime log level (default: WARN)'],
];

export const UI_ENV: EnvironmentHelp = [['TEMPORAL_UI_URL', 'base of Web UI links (default: the embedded server\'s)']];

export const SESSION_ENV: EnvironmentHelp = [...CONNECTION_ENV, ...MODEL_ENV];

/** Defaults of the model, context and budget flags of the commands that start sessions (an option given wins). */
export const SESSION_SETTINGS_ENV: EnvironmentHelp = [
  ['LOOPWRIGHT_MAX_OUTPUT_TOKENS', 'default of --max-output-tokens'],
  ['LOOPWRIGHT_TEMPERATURE', 'default of --temperature'],
  ['LOOPWRIGHT_REASONING_EFFORT', 'default of --reasoning-effort'],
  ['LOOPWRIGHT_CONTEXT_WINDOW', 'default of --context-window'],
  ['LOOPWRIGHT_FALLBACK_MODELS', 'default of --fallback-model: models, comma-separated'],
  ['LOOPWRIGHT_TURN_TOKEN_BUDGET', 'default of --turn-token-budget'],
  ['LOOPWRIGHT_SESSION_TOKEN_BUDGET', 'default of --session-token-budget'],
  ['LOOPWRIGHT_STREAM', 'default of --stream / --no-stream: 1 or 0 (unset: stream on a terminal)'],
  ['LOOPWRIGHT_VERIFY', 'default of --verify / --no-verify: 1 or 0 (unset: verify)'],
  ['LOOPWRIGHT_VERIFY_ATTEMPTS', 'default of --verify-attempts'],
];

/** Defaults of the tool flags of the commands that start sessions (an option given wins). */
export const TOOL_SETTINGS_ENV: EnvironmentHelp = [
  ['LOOPWRIGHT_TOOLS', 'default of --tools: tool names or patterns, comma-separated'],
  ['LOOPWRIGHT_ALLOW_TOOLS', 'default of --allow-tool: tool names or patterns, comma-separated'],
];

export const SESSION_ID = ['<id>', 'workflow id of the session (`loopwright list` shows them)'] as const;

/** Commands traced as one span each (`loopwright send`, ...); chat's turns are traces of their own. */
export const TRACED_COMMANDS = new Set(['run', 'send', 'interrupt', 'status', 'tools', 'list', 'transcript', 'approve', 'deny', 'extend', 'compact', 'budget', 'rewind', 'branch', 'end', 'demo']);

/** One run of the command line: where it prints, and what the running command set. */
export interface Invocation {
  out: CommandOutput;
  /** The subcommand being parsed or run. */
  command?: Command;
  /** `--json` as the command parsed it. */
  json?: boolean;
  /** The command's exit status. */
  code?: number;
}

/**
 * Run a command (its module already loaded): traced as one span for the session commands (when the
 * OTEL_* variables turn tracing on), its `--json` and exit status kept for `main`.
 */
export async function execute(invocation: Invocation, name: string, options: JsonOption, run: () => Promise<number>): Promise<void> {
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
export function rejoinHint(id: string | undefined): void {
  if (id && !id.startsWith('-')) setRejoinHint(`loopwright status ${id}`);
}

/** Examples and environment variables at the end of a command's help. */
export function helpDetails(examples: readonly string[], env: EnvironmentHelp): string {
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
export function wrap(text: string, width: number): string[] {
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
export function rootHelpDetails(): string {
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
export function argumentTerm(arg: Argument): string {
  const name = `${arg.name()}${arg.variadic ? '...' : ''}`;
  return arg.required ? `<${name}>` : `[${name}]`;
}

/** The sandbox flags of run and chat. */
export function addSandboxOptions(command: Command): Command {
  return command
    .option('--project-root <dir>', 'the {project-root} of a stand-alone bundle (default: this folder)')
    .option('--output <dir>', "a folder save_output may write to (repeatable; replaces the bundle's output_folder)", collect)
    .option('--strict', 'fail when a file a critical action names is missing (default: warn)')
    .option('--allow-broad-project-root', 'accept / or the home folder as the project root')
    .option('--user-skills', "also offer your own Agent Skills (~/.agents/skills, ~/.claude/skills, ...), after the project's")
    .option('--skills-folder <dir>', "a folder of Agent Skills to offer besides the project's (repeatable)", collect)
    .option('--allow-secret-files', 'let tools read and write secret files (.env*, .ssh/, .npmrc, .aws/, keys: see README, "Security")')
    .option('--secret-files <line>', "a secret-file rule for this session, in .gitignore syntax: '*.secret' adds one, '!.npmrc' lets a default through (repeatable; after the project's .loopwright/secret-files)", collect)
    .option('--allow-hard-links', 'let tools read files with more than one hard link')
    .option('--files-host <id>', "the host whose workers hold the bundle and project: file tools run only there (default: this machine, LOOPWRIGHT_HOST_ID or its host name; 'any': any worker)");
}

/** The model, context and budget flags of the commands that start sessions (run and chat). */
export function addModelSettingOptions(command: Command): Command {
  return command
    .option('--max-output-tokens <n>', `longest reply, in tokens (default: ${DEFAULT_MAX_OUTPUT_TOKENS})`, positiveInt)
    .option('--temperature <x>', "sampling temperature, 0 to 2 (default: the server's)", temperature)
    .option('--reasoning-effort <level>', 'minimal, low, medium or high, for reasoning models', reasoningEffort)
    .option('--tool-choice <choice>', 'auto, required or none (default: auto)', toolChoice)
    .option('--extra-body <json>', 'a JSON object merged into every model request, e.g. \'{"top_k": 40}\'', jsonObject)
    .option('--send-reasoning', "send earlier replies' reasoning_content back to the model server")
    .option('--stream', 'ask for streamed replies and show them as they are written (default on a terminal; LOOPWRIGHT_STREAM)')
    .option('--no-stream', 'ask for whole replies, even on a terminal')
    .option('--fallback-model <model>', "a model to try when the session's model cannot answer (repeatable, tried in order)", models)
    .option('--max-continuations <n>', `how often a reply cut off at the output limit is continued (default: ${DEFAULT_MAX_CONTINUATIONS}; 0: never)`, wholeNumber)
    .option('--context-window <n>', `the model's context window in tokens (default: what the server reports, else ${DEFAULT_CONTEXT_WINDOW})`, positiveInt)
    .option('--compact-at <fraction>', `compact the context once a prompt passes this share of the window (default: ${DEFAULT_COMPACT_AT})`, openFraction)
    .option('--keep-recent <n>', `latest exchanges compaction keeps whole (default: ${DEFAULT_KEEP_RECENT})`, positiveInt)
    .option('--no-summarize', 'compact by pruning old tool results only, never with a summarising model call')
    .option('--turn-token-budget <n>', 'tokens one turn may use (default: no limit)', positiveInt)
    .option('--session-token-budget <n>', 'tokens the session may use (default: no limit)', positiveInt)
    .option('--cost-budget <x>', 'cost the session may reach, priced by --price (default: no limit)', positiveNumber)
    .option('--price <model=input,output>', 'price of a model per million input and output tokens (* for any model; repeatable)', price)
    .option('--verify', "check a document a workflow saves against the workflow's checklist, and have the agent fix failed items (default; LOOPWRIGHT_VERIFY)")
    .option('--no-verify', 'do not check saved documents against their checklists')
    .option('--verify-attempts <n>', `how often a document is checked (and fixed) before the turn ends failed, 1 to 10 (default: ${DEFAULT_VERIFY_ATTEMPTS})`, verifyAttempts);
}

/** The tool flags of the commands that start sessions (run and chat). */
export function addToolOptions(command: Command): Command {
  return command
    .option('--tools <list>', "the tools the model is offered: names or * patterns, comma-separated, e.g. read_file,github__* (default: the agent's tools: in bundle.yaml, else every tool)", toolPatternList)
    .option('--mcp-config <file>', 'MCP servers from a JSON file in .mcp.json format, {"mcpServers": {...}}, added to the project\'s .mcp.json (repeatable; a later file wins per server)', collect)
    .option('--no-project-mcp', "leave out the MCP servers of the project's .mcp.json")
    .option('--allow-tool <pattern>', 'an MCP tool that runs without approval, by name or pattern, e.g. github__get_* (repeatable)', toolPatterns)
    .option('--no-delegation', 'do not offer delegate_task (handing a task to another agent of the bundle as a child session)')
    .option('--delegate-to <list>', "the agents delegate_task may call: ids or * patterns, comma-separated, e.g. pm,bmm/* (default: the agent's delegates: in bundle.yaml, else every other agent)", agentPatternList)
    .option('--delegation-depth <n>', 'deepest chain of delegations (default: 2; 0 refuses every call)', wholeNumber)
    .option('--delegations-per-turn <n>', 'most delegations in one turn (default: 8)', positiveInt);
}
