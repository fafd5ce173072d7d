/** Jest runs TypeScript through ts-jest as CommonJS; type checking is `npm run typecheck`. */
module.exports = {
  // Node's environment with the clean-ups that keep files run in band from slowing later ones.
  testEnvironment: '<rootDir>/test/support/jest-environment.js',
  // Takes NODE_EXTRA_CA_CERTS out of the tests' environment (no test process speaks TLS; see the file).
  globalSetup: '<rootDir>/test/support/jest-global-setup.js',
  setupFilesAfterEnv: ['<rootDir>/test/support/jest-after-env.ts'],
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The real-model suite builds and starts llama-server: `npm run test:real-model` runs it. The docs site's
  // tests read the built site: `npm run test:docs-site` runs them after `npm run docs:build`. The cluster suite
  // builds and starts a Temporal cluster on PostgreSQL: `npm run test:cluster` runs it.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/real-model/', '<rootDir>/test/docs-site/', '<rootDir>/test/cluster/'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  testTimeout: 60_000,
};
