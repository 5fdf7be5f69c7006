// `npm run generate`: writes the code generated from the sources (the config validator).
import { build } from 'esbuild';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

await build({
  entryPoints: ['scripts/config-validator.ts'], outfile: '.build/config-validator.cjs', bundle: true, platform: 'node', target: 'node20',
  format: 'cjs', logLevel: 'warning',
});
const { configValidatorSource, GENERATED_VALIDATOR_PATH } = await import(join(process.cwd(), '.build/config-validator.cjs'));
writeFileSync(GENERATED_VALIDATOR_PATH, configValidatorSource());
process.stdout.write(`wrote ${GENERATED_VALIDATOR_PATH}\n`);

// The actions GitHub sends per event, for subscribe's check of `name.action` filters.
await build({
  entryPoints: ['scripts/github-actions.ts'], outfile: '.build/github-actions.cjs', bundle: true, platform: 'node', target: 'node20',
  format: 'cjs', logLevel: 'warning',
});
const { githubActionsSource, GENERATED_GITHUB_ACTIONS_PATH } = await import(join(process.cwd(), '.build/github-actions.cjs'));
const { emitterEventNames } = await import('@octokit/webhooks');
const { version: webhooksVersion } = JSON.parse(readFileSync('node_modules/@octokit/webhooks/package.json', 'utf8'));
writeFileSync(GENERATED_GITHUB_ACTIONS_PATH, githubActionsSource(emitterEventNames, webhooksVersion));
process.stdout.write(`wrote ${GENERATED_GITHUB_ACTIONS_PATH}\n`);
