/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/tests/bench/', '/tests/reliability/'],
  transform: { '^.+\\.ts$': '<rootDir>/tests/support/esbuild-transform.cjs' },
  moduleFileExtensions: ['ts', 'js', 'cjs', 'mjs', 'json'],
  testTimeout: 30000,
};
