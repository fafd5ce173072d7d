/**
 * `loopwright setup-namespace`, registered on the program: the one-time step that makes a Temporal
 * cluster or Temporal Cloud namespace ready for sessions (the embedded server needs none). The
 * command's module is loaded only when it runs.
 */
import type { Command } from 'commander';
import type { SetupNamespaceOptions } from './commands/setup-namespace-command';
import { positiveInt } from './commands/option-values';
import { CONNECTION_ENV, execute, helpDetails, type Invocation } from './cli-support';

/** Register `setup-namespace` on `program`. */
export function addNamespaceCommand(program: Command, invocation: Invocation): void {
  const { out } = invocation;
  program
    .command('setup-namespace')
    .summary("prepare a cluster's namespace: create it, register the search attributes")
    .description(
      'Prepare the namespace of the configured Temporal server for sessions: create it when missing and register the Loopwright* search attributes ' +
        '(loopwright list and the Web UI filter on them). Idempotent; an attribute registered with another type is an error. On Temporal Cloud, ' +
        'create the namespace and attributes with tcld or Terraform instead (see docs/guides/deployment.md).',
    )
    .option('--retention <days>', 'days closed sessions are kept, for a namespace this creates (default: 3)', positiveInt)
    .option('--no-create', 'fail when the namespace does not exist instead of creating it')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      helpDetails(
        ['TEMPORAL_ADDRESS=temporal.internal:7233 TEMPORAL_NAMESPACE=agents loopwright setup-namespace', 'TEMPORAL_PROFILE=prod loopwright setup-namespace --no-create'],
        CONNECTION_ENV.filter(([name]) => name !== 'LOOPWRIGHT_TASK_QUEUE'),
      ),
    )
    .action(async (options: SetupNamespaceOptions) => {
      const { setupNamespaceCommand } = await import('./commands/setup-namespace-command');
      await execute(invocation, 'setup-namespace', options, () => setupNamespaceCommand(options, out));
    });
}
