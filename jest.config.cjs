/** ESM-only runtime packages (octokit and its dependencies), transformed to CommonJS for Jest. */
const ESM_ONLY = ['@octokit', 'universal-user-agent', 'before-after-hook', 'universal-github-app-jwt', 'toad-cache', 'content-type', 'json-with-bigint'];

const { availableParallelism } = require('node:os');

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  // Slow reliability runs (load, kill -9) are named *.slow.test.ts and run with npm run test:reliability.
  testPathIgnorePatterns: ['/node_modules/', '/tests/bench/', '\\.slow\\.test\\.ts$'],
  transform: { '^.+\\.(ts|md|html|m?js)$': '<rootDir>/tests/support/esbuild-transform.cjs' },
  // The GitHub client's packages (octokit and what it imports) are ESM-only: turned into CommonJS like our sources.
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'cjs', 'mjs', 'json', 'md', 'html'],
  // The GitHub transport's third-party half, by the name the worker Lambda loads it with (tsconfig.json paths).
  moduleNameMapper: { '^hookagent-octokit$': '<rootDir>/functions/core/delivery/octokit-vendor.ts' },
  setupFiles: ['<rootDir>/tests/support/jest-env.cjs'],
  // One temporary directory per run, removed at its end (tests/support/temp-dir.cjs).
  globalSetup: '<rootDir>/tests/support/global-setup.cjs',
  globalTeardown: '<rootDir>/tests/support/global-teardown.cjs',
  testTimeout: 30000,
  // Most of the run's time is e2e files waiting on the processes they start (the CLI, serve,
  // osls, chromium), not on this process: jest's default (cores − 1, a single worker on a
  // 2-core machine) left one core idle. Two workers per core, at most 8 (memory: each worker
  // and the processes it starts take ~300 MB).
  maxWorkers: Math.min(8, Math.max(2, 2 * availableParallelism())),
};
