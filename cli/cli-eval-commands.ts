/**
 * Registers `loopwright eval` and `loopwright export`. Loaded with the command line itself (for
 * `--help` too): the command modules, and the Temporal SDK, load only when a command runs.
 */
import type { Command } from 'commander';
import { addModelSettingOptions, CONNECTION_ENV, execute, helpDetails, type Invocation, SESSION_ENV, SESSION_SETTINGS_ENV } from './cli-support';
import type { EvalOptions } from './commands/eval-command';
import type { ExportOptions } from './commands/export-command';
import { positiveInt, positiveNumber } from './commands/option-values';
import { settingOption } from './setting-flags';
import { FLAG_RULES, METRICS } from '../common/eval/thresholds';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Register `eval` and `export` on `program`. */
export function addEvalCommands(program: Command, invocation: Invocation): void {
  const { out } = invocation;
  const evaluate = program
    .command('eval')
    .summary('replay recorded sessions against another model, settings or bundle, and score the difference')
    .description(
      'Replay each recorded session (a workflow id, a history file written by export, or a folder of them) as a new session of a candidate: ' +
        'the recorded user messages in order, read-only tool calls that match the recording answered from it, everything else run in a scratch ' +
        'copy of the project (never your files). Scores each turn and session beside the recording: status, iterations, tokens, cost, latency, ' +
        'document checks and the tool-call trajectory; with --rubric, a model grades every answer on both sides. Runs as a durable workflow ' +
        '(rerun with the same --id to reattach). Exit status 1 when a --fail-on rule is broken, a recording could not be replayed, or the ' +
        'suite budget was reached and recordings were skipped.',
    )
    .argument('<recordings...>', 'session workflow ids, history files (loopwright export) or folders of them')
    .addOption(settingOption('model', { help: "the candidate's model (default: each recording's)" }))
    .option('--bundle <path>', "the candidate's bundle or project folder (default: each recording's), e.g. a new version of the skills")
    .option('--project-root <dir>', "the candidate's project root (default: each recording's); copied, never written")
    .option('--agent <id>', "the candidate's agent (default: each recording's)")
    .addOption(settingOption('maxIterations', { help: "most model calls in each of the candidate's turns (default: each recording's)" }))
    .option('--concurrency <n>', 'sessions replayed at once', positiveInt, 4)
    .option('--json [file]', 'write the report (JSON) to <file>; without a file, print it instead of the table')
    .option('--junit <file>', 'write the report as JUnit XML (one testcase per recording, a failure per broken rule)')
    .option('--fail-on <rule>', `exit 1 when a recording breaks it (repeatable or comma-separated): ${FLAG_RULES.join(', ')}, or <metric>>+<n>[%] with metric ${METRICS.join(', ')}`, collect)
    .option('--on-divergence <rule>', 'a call that matches no recorded call of its turn: run it (in the scratch copy), answer it with a stub, or fail it (default: run)')
    .option('--approve-unrecorded <rule>', 'a call waiting for approval with no recorded decision: approve or deny (default: approve, in the scratch copy)')
    .option('--scorer-module <module>', 'a module exporting scorers made by defineScorer (repeatable); a long-lived worker needs it too', collect)
    .option('--scorer <name>', 'run only these scorers of the modules (repeatable)', collect)
    .option('--rubric <file>', "grade every answer (the recording's and the candidate's) against the rubric in <file>, with a model")
    .option('--rubric-text <text>', 'as --rubric, the rubric given as text')
    .option('--grader-model <model>', "the grading model (default: the candidate's); the worker's base URL and key serve it")
    .option('--suite-token-budget <n>', 'most tokens the candidate may spend across the suite; once reached, recordings not yet started are skipped', positiveInt)
    .option('--suite-cost-budget <x>', 'most the candidate may cost across the suite, priced by --price; once reached, recordings not yet started are skipped', positiveNumber)
    .option('--id <id>', 'workflow id of the eval (default: loopwright-eval-<time>); its sessions are <id>-<index>')
    .option('--scratch <dir>', 'where the scratch copies go (default: a folder in the system temp folder)')
    .option('--keep-scratch', 'keep each scratch copy after scoring (to look at what the candidate wrote)')
    .option('--max-copy-bytes <n>', 'largest project copied per recording (default: 512 MiB)', positiveInt)
    .addOption(settingOption('filesHost'))
    .option('--continue-after <n>', 'continue the eval workflow as new after n recordings per run (default: 200)', positiveInt);
  evaluate.options.find((o) => o.long === '--continue-after')?.hideHelp();
  addModelSettingOptions(evaluate)
    .addHelpText(
      'after',
      helpDetails(
        [
          'loopwright eval evals/ --model gpt-4.1-mini --fail-on status-changed --fail-on "tokens>+20%" --junit eval.xml',
          'loopwright eval loopwright-facilitator-5c1e2a90 --bundle ../skills-v2 --json report.json',
          'loopwright export loopwright-facilitator-5c1e2a90 --out evals/intake.json',
        ],
        [...SESSION_ENV, ...SESSION_SETTINGS_ENV, ['LOOPWRIGHT_SCORER_MODULES', 'modules of scorers for the worker this command starts (as --scorer-module)']],
      ),
    )
    .action(async (recordings: string[], options: EvalOptions) => {
      const { evalCommand } = await import('./commands/eval-command');
      await execute(invocation, 'eval', { json: options.json === true }, () => evalCommand(recordings, options, out));
    });

  program
    .command('export')
    .summary("write a session's history to a file, to replay it with eval")
    .description(
      "Write every run of a session's history (Temporal's JSON history form, in a wrapper) to a file that loopwright eval replays. Payloads " +
        'stay as the server holds them (encrypted when LOOPWRIGHT_CODEC_KEY is set) unless --decoded; the values of secret-looking environment ' +
        'variables and credentials are redacted from every text the file holds in the clear.',
    )
    .argument('<id>', 'workflow id of the session')
    .option('--out <file>', 'the file (default: print it)')
    .option('--decoded', "decode the payloads with this machine's codec key (a readable file)")
    .addHelpText('after', helpDetails(['loopwright export loopwright-facilitator-5c1e2a90 --out evals/intake.json'], CONNECTION_ENV))
    .action(async (id: string, options: ExportOptions) => {
      const { exportCommand } = await import('./commands/export-command');
      await execute(invocation, 'export', {}, () => exportCommand(id, options, out));
    });
}
