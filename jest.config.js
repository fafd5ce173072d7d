/** Jest runs TypeScript through ts-jest as CommonJS; type checking is `npm run typecheck`. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The real-model suite builds and starts llama-server: `npm run test:real-model` runs it.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/real-model/'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  testTimeout: 60_000,
};
