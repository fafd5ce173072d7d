/**
 * What the command registrations of the `loopwright` command line share: the environment variables
 * commands read (for their help), how a command's help ends (examples, environment), the running
 * command line (`Invocation`), how a command is run (traced, its exit status kept) and the option
 * groups several commands take (their flags are the settings table's, see setting-flags.ts).
 *
 * Loaded with the command line itself (for `--help` too): it imports no command module and nothing
 * of the Temporal SDK.
 */
import type { Argument, Command } from 'commander';
import type { JsonOption } from './commands/command-support';
import { EXIT_STATUS_HELP } from './exit-codes';
import { onExitCleanup, setRejoinHint } from './exit-on-signal';
import type { CommandOutput } from './output';
import { addSettingOptions, settingsEnvHelp } from './setting-flags';
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
  ['LOOPWRIGHT_CODEC_KEY(_FILE)', 'encrypt payloads (see docs/guides/deployment.md)'],
  ['OTEL_EXPORTER_OTLP_ENDPOINT', 'send traces, with the other OTEL_* variables (see docs/guides/observability.md)'],
];

/** Read by the worker a command runs in its own process when no worker polls. */
export const MODEL_ENV: EnvironmentHelp = [
  ['OPENAI_API_KEY, OPENAI_BASE_URL', 'the model server, for a worker this command runs itself when none polls'],
  ['LOOPWRIGHT_MODEL', 'model unless the session names one (default: gpt-4o-mini)'],
  ['LOOPWRIGHT_LOG_LEVEL', 'Temporal runtime log level (default: WARN)'],
];

export const UI_ENV: EnvironmentHelp = [['TEMPORAL_UI_URL', "base of Web UI links (default: the embedded server's)"]];

export const SESSION_ENV: EnvironmentHelp = [...CONNECTION_ENV, ...MODEL_ENV];

/** Defaults of the model, context and budget flags of the commands that start sessions (an option given wins); from the settings table. */
export const SESSION_SETTINGS_ENV: EnvironmentHelp = settingsEnvHelp('model');

/** Defaults of the tool flags of the commands that start sessions (an option given wins); from the settings table. */
export const TOOL_SETTINGS_ENV: EnvironmentHelp = settingsEnvHelp('tools');

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

/** The sandbox flags of run and chat (the settings table's `sandbox` flags). */
export function addSandboxOptions(command: Command): Command {
  return addSettingOptions(command, 'sandbox');
}

/** The model, context, budget and verify flags of the commands that start sessions (the settings table's `model` flags). */
export function addModelSettingOptions(command: Command): Command {
  return addSettingOptions(command, 'model');
}

/** The tool and delegation flags of the commands that start sessions (the settings table's `tools` flags). */
export function addToolOptions(command: Command): Command {
  return addSettingOptions(command, 'tools');
}
