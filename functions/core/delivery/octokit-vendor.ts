/**
 * The third-party half of the GitHub transport (github-octokit.ts), in a module of its
 * own so the worker Lambda can ship it as a file beside its bundle
 * (`node_modules/hookagent-octokit/index.js`, built by scripts/build-lambda.mjs) and load
 * it at the first GitHub call: a cold start that delivers to Slack, Telegram or the log
 * does not compile its ~72 KB (issue 20). Only third-party code lives here: hookagent's
 * own classes (RefusedRequest, checked with `instanceof`) must stay single instances in
 * the main bundle. Elsewhere (serve, the CLI, tests) `hookagent-octokit` names this file
 * (tsconfig.json `paths`, jest's moduleNameMapper) and it is bundled as usual.
 */
export { createAppAuth } from '@octokit/auth-app';
export { Octokit } from '@octokit/core';
export { paginateRest } from '@octokit/plugin-paginate-rest';
export { retry } from '@octokit/plugin-retry';
export { throttling } from '@octokit/plugin-throttling';
export { default as Bottleneck } from 'bottleneck/light.js';
