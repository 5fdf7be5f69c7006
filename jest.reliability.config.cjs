/** `npm run test:reliability`: every test of tests/reliability, slow ones included, with a summary per category. */
const base = require('./jest.config.cjs');

module.exports = {
  ...base,
  testMatch: ['**/tests/reliability/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  globalSetup: '<rootDir>/tests/reliability/global-setup.cjs',
  globalTeardown: '<rootDir>/tests/reliability/global-teardown.cjs',
  testTimeout: 300000,
};
