/**
 * Runs once before the test files (Jest `globalSetup`; in band it is the process that runs them).
 *
 * A machine may name a bundle of extra TLS authorities in NODE_EXTRA_CA_CERTS (a proxy's, say).
 * Node parses that bundle as it starts, about 0.1 s of CPU per process for a system's whole bundle,
 * and the tests start a few hundred Node processes (commands, workers, MCP servers), none of which
 * makes a TLS connection: every server they talk to is on 127.0.0.1. The variable is taken out of
 * the environment the tests and their processes inherit, and kept in
 * LOOPWRIGHT_TEST_NODE_EXTRA_CA_CERTS for the one process that reaches a registry (`npm install` in
 * test/package/), which passes it back.
 */
module.exports = async function globalSetup() {
  const extra = process.env.NODE_EXTRA_CA_CERTS;
  if (extra === undefined) return;
  process.env.LOOPWRIGHT_TEST_NODE_EXTRA_CA_CERTS = extra;
  delete process.env.NODE_EXTRA_CA_CERTS;
};
