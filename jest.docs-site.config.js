/**
 * The documentation site's tests (`npm run test:docs-site`): they read the site `npm run docs:build`
 * made, so they run after it, in the docs phase of .ci/run, and not in `npm test`.
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test/docs-site'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  testTimeout: 60_000,
};
