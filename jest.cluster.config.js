/** The cluster suite alone (`npm run test:cluster`): a real Temporal cluster on PostgreSQL, see scripts/setup-cluster.sh and scripts/cluster/. */
const base = require('./jest.config');
module.exports = { ...base, testPathIgnorePatterns: ['/node_modules/'], testMatch: ['<rootDir>/test/cluster/**/*.test.ts'], testTimeout: 300_000 };
