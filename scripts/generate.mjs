// `npm run generate`: writes the code generated from the sources (the config validator).
import { build } from 'esbuild';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

await build({
  entryPoints: ['scripts/config-validator.ts'], outfile: '.build/config-validator.cjs', bundle: true, platform: 'node', target: 'node20',
  format: 'cjs', logLevel: 'warning',
});
const { configValidatorSource, GENERATED_VALIDATOR_PATH } = await import(join(process.cwd(), '.build/config-validator.cjs'));
writeFileSync(GENERATED_VALIDATOR_PATH, configValidatorSource());
process.stdout.write(`wrote ${GENERATED_VALIDATOR_PATH}\n`);
