/** The real-model suite alone (`npm run test:real-model`): llama-server with SmolLM2, see scripts/setup-real-model.sh. */
const base = require('./jest.config');
module.exports = { ...base, testPathIgnorePatterns: ['/node_modules/'], testMatch: ['<rootDir>/test/real-model/**/*.test.ts'], testTimeout: 300_000 };
