/**
 * The session commands of the `loopwright` command line: `run` and `chat` start sessions; `send`,
 * `interrupt`, `status`, `tools`, `list`, `transcript`, `approve`, `deny`, `extend`, `compact`, `budget`,
 * `rewind`, `branch` and `end` talk to them. Each command's module is loaded only when it runs.
 */
import type { Command } from 'commander';
import type { ChatOptions } from './commands/chat-command';
import { positiveInt, positiveNumber, wholeNumber } from './commands/option-values';
import { settingOption } from './setting-flags';
import type { BudgetOptions, RunOptions } from './commands/session-commands';
import type { JsonOption } from './commands/command-support';
import type { ListOptions } from './commands/session-views';
import {
  addModelSettingOptions,
  addSandboxOptions,
  addToolOptions,
  CONNECTION_ENV,
  execute,
  helpDetails,
  type Invocation,
  rejoinHint,
  SESSION_ENV,
  SESSION_ID,
  SESSION_SETTINGS_ENV,
  TOOL_SETTINGS_ENV,
  UI_ENV,
} from './cli-support';

/** Register the session commands on `program`, in the order the root help lists them. */
export function addSessionCommands(program: Command, invocation: Invocation): void {
  const { out } = invocation;
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
    .addOption(settingOption('oneShot'))
    .option(
      '--headless',
      "a one-shot run without an interactive user: the agent (and a skill's headless mode) works without asking and ends with a JSON status; exit 0 complete, 4 partial, 1 blocked or no status",
    )
    .option('--detach', 'return once started; a worker (`loopwright worker`) runs the session')
    .addOption(settingOption('maxIterations'))
    .addOption(settingOption('model'))
    .option('--id <id>', 'workflow id (default: loopwright-<agent>-<random>)')
    .option('--no-check', 'skip loading the bundle here first (when it exists only where the worker runs)');
  addToolOptions(addModelSettingOptions(addSandboxOptions(run)))
    .addHelpText(
      'after',
      helpDetails(
        [
          'loopwright run bundles/requirements-facilitator facilitator "*intake"',
          'loopwright run bundles/requirements-facilitator facilitator "Summarise docs/notes.md" --once --json',
          'loopwright run bundles/requirements-facilitator facilitator "*intake" --tools \'read_file,save_output,github__*\' --mcp-config github.json',
        ],
        [...SESSION_ENV, ...SESSION_SETTINGS_ENV, ...TOOL_SETTINGS_ENV, ...UI_ENV],
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
        '(/stop /status /approve /deny /extend /compact /budget /end /help). Writes wait for /approve by default. Ctrl-C interrupts a turn, or at the ' +
        'prompt leaves (the session stays; --id rejoins). Piped input: one message per line, replies on stdout.',
    )
    .argument('[bundle]', 'the bundle folder (not when rejoining with --id)')
    .argument('[agent]', 'the agent id')
    .option('--id <id>', 'rejoin session <id> (or, with <bundle> <agent>, the id of the new session)')
    .addOption(settingOption('approval.policy', { default: 'writes' }))
    .addOption(settingOption('maxIterations'))
    .addOption(settingOption('model'));
  addToolOptions(addModelSettingOptions(addSandboxOptions(chat)))
    .addHelpText(
      'after',
      helpDetails(
        ['loopwright chat bundles/requirements-facilitator facilitator', 'loopwright chat --id loopwright-facilitator-1a2b3c4d'],
        [...SESSION_ENV, ...SESSION_SETTINGS_ENV, ...TOOL_SETTINGS_ENV],
      ),
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
      const { statusCommand } = await import('./commands/session-views');
      await execute(invocation, 'status', options, () => statusCommand(id, options, out));
    });

  program
    .command('tools')
    .summary('list the tools a session offers its model')
    .description(
      'List the tools a session offers its model, as it decided when it started: built-in, custom and MCP tools, each with whether it ' + 'reads or writes and whether every call needs approval.',
    )
    .argument(...SESSION_ID)
    .option('--json', 'print one JSON object {workflowId, tools} (tools null when the session has not listed them)')
    .addHelpText('after', helpDetails(['loopwright tools loopwright-facilitator-1a2b3c4d'], SESSION_ENV))
    .action(async (id: string, options: JsonOption) => {
      rejoinHint(id);
      const { toolsCommand } = await import('./commands/session-views');
      await execute(invocation, 'tools', options, () => toolsCommand(id, options, out));
    });

  program
    .command('list')
    .summary('list sessions')
    .description('Sessions on the namespace, newest first, found by their search attributes (agent, status); each with its status, turns and tokens.')
    .option('--agent <agent>', 'only sessions of this agent')
    .option('--status <status>', 'only sessions in this status (e.g. waiting_for_user, completed)')
    .option('--limit <n>', 'at most this many', positiveInt, 50)
    .option('--json', 'print one JSON object {sessions, count}')
    .addHelpText('after', helpDetails(['loopwright list --agent facilitator --status waiting_for_user'], CONNECTION_ENV))
    .action(async (options: ListOptions) => {
      const { listCommand } = await import('./commands/session-views');
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
      const { transcriptCommand } = await import('./commands/session-views');
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
    .command('compact')
    .summary("compact the model's view of a session's transcript")
    .description(
      "Compact the model's view of the transcript now: old tool results become stubs and, when that is not enough, the oldest part is " +
        'summarised. The transcript itself keeps every message. Refused (exit status 1) while a turn runs.',
    )
    .argument(...SESSION_ID)
    .option('--json', 'print one JSON object {workflowId, compaction} (compaction null when there was nothing to compact)')
    .addHelpText('after', helpDetails(['loopwright compact loopwright-facilitator-1a2b3c4d'], SESSION_ENV))
    .action(async (id: string, options: JsonOption) => {
      rejoinHint(id);
      const { compactCommand } = await import('./commands/session-commands');
      await execute(invocation, 'compact', options, () => compactCommand(id, options, out));
    });

  program
    .command('budget')
    .summary("show or raise a session's token and cost budgets")
    .description("Raise a session's budgets by the amounts given (the running turn's too) and show them; without an option, show the budgets " + 'and how much of each is used.')
    .argument(...SESSION_ID)
    .option('--turn-tokens <n>', 'raise the tokens one turn may use by n', positiveInt)
    .option('--session-tokens <n>', 'raise the tokens the session may use by n', positiveInt)
    .option('--cost <x>', 'raise the cost the session may reach by x', positiveNumber)
    .option('--json', 'print one JSON object {workflowId, budget}')
    .addHelpText('after', helpDetails(['loopwright budget loopwright-facilitator-1a2b3c4d', 'loopwright budget loopwright-facilitator-1a2b3c4d --session-tokens 200000'], SESSION_ENV))
    .action(async (id: string, options: BudgetOptions) => {
      rejoinHint(id);
      const { budgetCommand } = await import('./commands/session-commands');
      await execute(invocation, 'budget', options, () => budgetCommand(id, options, out));
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
}
