/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  // Slow reliability runs (load, kill -9) are named *.slow.test.ts and run with npm run test:reliability.
  testPathIgnorePatterns: ['/node_modules/', '/tests/bench/', '\\.slow\\.test\\.ts$'],
  transform: { '^.+\\.(ts|md|html)$': '<rootDir>/tests/support/esbuild-transform.cjs' },
  moduleFileExtensions: ['ts', 'js', 'cjs', 'mjs', 'json', 'md', 'html'],
  setupFiles: ['<rootDir>/tests/support/jest-env.cjs'],
  testTimeout: 30000,
};
