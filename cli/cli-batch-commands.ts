/**
 * Registers `loopwright batch` and `loopwright schedule ...` on the command line. Loaded with the
 * command line itself (for `--help` too): the command modules, and the Temporal SDK, load only when
 * a command runs.
 */
import type { Command } from 'commander';
import { addModelSettingOptions, addSandboxOptions, addToolOptions, CONNECTION_ENV, execute, helpDetails, type Invocation, SESSION_ENV, SESSION_SETTINGS_ENV, TOOL_SETTINGS_ENV } from './cli-support';
import type { BatchOptions } from './commands/batch-command';
import type { JsonOption } from './commands/command-support';
import { positiveInt } from './commands/option-values';
import { settingOption } from './setting-flags';
import type { ScheduleCreateOptions } from './commands/schedule-commands';
import { DEFAULT_MAX_ITERATIONS, DEFAULT_MODEL } from '../common/defaults';

/** Register `batch` and `schedule` on `program`. */
export function addBatchCommands(program: Command, invocation: Invocation): void {
  const { out } = invocation;
  const batch = program
    .command('batch')
    .summary('run one one-shot session per line of a JSONL file')
    .description(
      'Run one one-shot session of <agent> per line of --input (a JSON string, or {"message": "...", "id": "..."}), at most --concurrency at once, ' +
        'as child workflows of a durable batch workflow; write one result line per item to --output. A bad line is reported before anything starts. ' +
        'Rerun with the same --id to reattach to a running batch. Exit status 1 when any item failed.',
    )
    .argument('<bundle>', 'the bundle folder (or an installed BMAD tree)')
    .argument('<agent>', 'the agent id')
    .requiredOption('--input <file>', 'the items, one a line (JSONL)')
    .option('--output <file>', 'the result file (default: <input>.results.jsonl)')
    .option('--concurrency <n>', 'sessions at once', positiveInt, 4)
    .option('--headless', 'run every item headless (as run --headless): its result line carries the JSON status; blocked or no status counts as failed')
    .option('--id <id>', 'workflow id of the batch (default: loopwright-batch-<agent>-<time>-<random>); its sessions are <id>-<index>')
    .addOption(settingOption('maxIterations', { help: `most model calls in each turn (default: ${DEFAULT_MAX_ITERATIONS})` }))
    .addOption(settingOption('model', { help: `model for the sessions (default: LOOPWRIGHT_MODEL, else ${DEFAULT_MODEL})` }))
    .option('--json', 'print one JSON object with the summary {batchId, total, ok, failed, cancelled, byStatus, usage, outputPath, ...}')
    .option('--no-check', 'skip loading the bundle here first')
    .addOption(settingOption('projectRoot'))
    // --output names the result file here: the folders save_output may write to are --output-root.
    .addOption(settingOption('outputRoots', { flags: '--output-root <dir>' }))
    .addOption(settingOption('strict'))
    .option('--continue-after <n>', 'continue the batch workflow as new after n items per run (default: 500)', positiveInt);
  batch.options.find((o) => o.long === '--continue-after')?.hideHelp();
  addToolOptions(addModelSettingOptions(batch))
    .addHelpText(
      'after',
      helpDetails(
        [
          'loopwright batch bundles/requirements-facilitator facilitator --input items.jsonl --output results.jsonl --concurrency 8',
          'loopwright batch bundles/requirements-facilitator facilitator --input items.jsonl --id nightly-1 --json',
        ],
        [...SESSION_ENV, ...SESSION_SETTINGS_ENV, ...TOOL_SETTINGS_ENV],
      ),
    )
    .action(async (bundle: string, agent: string, options: BatchOptions) => {
      const { batchCommand } = await import('./commands/batch-command');
      await execute(invocation, 'batch', options, () => batchCommand(bundle, agent, options, out));
    });

  const schedule = program
    .command('schedule')
    .summary('run one-shot sessions on a schedule')
    .description('One-shot sessions on Temporal Schedules: create, list, pause, unpause, trigger, delete. Scheduled sessions run on a long-lived worker.');
  const create = schedule
    .command('create')
    .summary('create a schedule of one-shot sessions')
    .argument('<name>', 'the schedule id')
    .argument('<bundle>', 'the bundle folder')
    .argument('<agent>', 'the agent id')
    .argument('<message>', "each session's message")
    .option('--every <duration>', 'an interval: 30m, 1h, 1d')
    .option('--cron <expr>', 'a cron expression: "0 9 * * MON-FRI"')
    .option('--paused', 'create it paused')
    .addOption(settingOption('maxIterations'))
    .addOption(settingOption('model', { help: 'model for the sessions' }))
    .option('--no-check', 'skip loading the bundle here first')
    .option('--json', 'print one JSON object {name, created, paused}');
  addToolOptions(addModelSettingOptions(addSandboxOptions(create)))
    .addHelpText('after', helpDetails(['loopwright schedule create nightly-summary bundles/requirements-facilitator facilitator "Summarise docs/notes.md" --every 1d'], SESSION_ENV))
    .action(async (name: string, bundle: string, agent: string, message: string, options: ScheduleCreateOptions) => {
      const { scheduleCreateCommand } = await import('./commands/schedule-commands');
      await execute(invocation, 'schedule', options, () => scheduleCreateCommand(name, bundle, agent, message, options, out));
    });
  schedule
    .command('list')
    .summary('list the schedules of sessions')
    .option('--json', 'print one JSON object {schedules, count}')
    .addHelpText('after', helpDetails(['loopwright schedule list'], CONNECTION_ENV))
    .action(async (options: JsonOption) => {
      const { scheduleListCommand } = await import('./commands/schedule-commands');
      await execute(invocation, 'schedule', options, () => scheduleListCommand(options, out));
    });
  const actions = [
    ['pause', 'pause a schedule (no session starts until unpause)'],
    ['unpause', 'unpause a schedule'],
    ['trigger', 'start a session of a schedule now'],
    ['delete', 'delete a schedule (its sessions stay)'],
  ] as const;
  for (const [action, summary] of actions) {
    schedule
      .command(action)
      .summary(summary)
      .argument('<name>', 'the schedule id')
      .option('--json', 'print one JSON object {name, action}')
      .addHelpText('after', helpDetails([`loopwright schedule ${action} nightly-summary`], CONNECTION_ENV))
      .action(async (name: string, options: JsonOption) => {
        const { scheduleActionCommand } = await import('./commands/schedule-commands');
        await execute(invocation, 'schedule', options, () => scheduleActionCommand(action, name, options, out));
      });
  }
}
