// Builds the Lambda bundles for serverless.yml: dist/lambda/<function>/index.js (minified,
// with source maps, AWS SDK clients bundled and tree-shaken), plus {config_dir}/config.yaml
// validated for what AWS can honour and written as the prepared configuration
// (config/config.json: parsed and normalised), and the built-in and user skills parsed into
// config/skills.json: no function parses YAML on a cold start.
// Usage: node scripts/build-lambda.mjs [--config-dir DIR] [--out DIR] [--require-config]
// (--out: another directory than dist/lambda, e.g. for the lambda-ingest-cpu benchmark;
// --require-config: no config.yaml is an error, as for `osls package`, not a warning.)
import { build } from 'esbuild';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
// The esbuild settings of a Lambda bundle; the cold-start benchmark builds with the same ones.
import options from './lambda-esbuild.json' with { type: 'json' };

const args = process.argv.slice(2);
const flag = args.indexOf('--config-dir');
const configDir = (flag >= 0 ? args[flag + 1] : undefined) ?? process.env.HOOKAGENT_CONFIG_DIR ?? join(homedir(), '.hookagent');
const outFlag = args.indexOf('--out');
const outRoot = (outFlag >= 0 ? args[outFlag + 1] : undefined) ?? join('dist', 'lambda');
const configFile = join(configDir, 'config.yaml');
const hasConfig = existsSync(configFile);
if (!hasConfig) {
  // Easy to miss in CI, where ~/.hookagent is absent: such a deployment refuses every signed request and runs the echo agent.
  const what = `no config.yaml in ${configDir}: the functions would get the defaults (no webhook secrets, so every GitHub/GitLab request is refused; the echo agent)`;
  if (args.includes('--require-config')) {
    process.stderr.write(`Cannot package: ${what}. Set HOOKAGENT_CONFIG_DIR to the directory that holds config.yaml, or pass --param="allowEmptyConfig=true" to package the defaults on purpose.\n`);
    process.exit(1);
  }
  process.stderr.write(`warning: ${what}\n`);
}

// Validate with the service's own loader (bundled on the fly, so no TypeScript runtime is needed).
await build({
  entryPoints: ['scripts/check-config.ts'], outfile: '.build/check-config.cjs', bundle: true, platform: 'node', target: 'node20',
  format: 'cjs', logLevel: 'warning', external: ['@aws-sdk/*'], loader: { '.md': 'text' },
});
const { prepareForAws, prepareSkills } = await import(join(process.cwd(), '.build/check-config.cjs'));
const checked = prepareForAws(configDir);
if ('problems' in checked) {
  process.stderr.write(`${checked.problems}\n`);
  process.exit(1);
}
// The region is one osls has settled by now and does not pass on: without aws.region the CLI
// cannot know a --region given here, so say which default both sides share (cli/context.ts
// DEFAULT_REGION, serverless.yml's fallback). Only a literal counts, as infra/deploy-config.cjs reads it.
const region = JSON.parse(checked.prepared).config.aws?.region;
if (hasConfig && !(typeof region === 'string' && !region.includes('${'))) {
  process.stderr.write("warning: config.yaml names no aws.region: npx osls deploys to --region if given, else us-east-1; hookagent commands act on their own --region if given, else us-east-1 (never AWS_REGION or the profile's region). Set aws.region in config.yaml so both use it.\n");
}

for (const fn of ['ingest', 'worker']) {
  const out = join(outRoot, fn);
  rmSync(out, { recursive: true, force: true });
  // re2js (payload filters' regexes) is external in the shared settings: it ships beside the
  // bundle and loads on the first regex filter only.
  await build({ ...options, entryPoints: [`functions/${fn}/handler.ts`], outfile: join(out, 'index.js') });
  await build({ ...options, sourcemap: false, external: [], entryPoints: ['re2js'], outfile: join(out, 'node_modules', 're2js', 'index.js') });
  // octokit (external `hookagent-octokit` in the shared settings) likewise beside the worker,
  // loaded at its first GitHub call: a cold start does not compile it.
  if (fn === 'worker') await build({ ...options, entryPoints: ['functions/core/delivery/octokit-vendor.ts'], outfile: join(out, 'node_modules', 'hookagent-octokit', 'index.js') });
  mkdirSync(join(out, 'config'), { recursive: true });
  writeFileSync(join(out, 'config', 'config.json'), checked.prepared);
  if (fn === 'worker') {
    const skills = prepareSkills(configDir);
    // Packaged anyway, as SkillLibrary would load them: refused when a subscription uses one.
    for (const problem of skills.invalid) process.stderr.write(`warning: ${problem}\n`);
    writeFileSync(join(out, 'config', 'skills.json'), skills.prepared);
  }
}
process.stdout.write(`Built ${outRoot}/{ingest,worker} with ${hasConfig ? configFile : `the defaults (no config.yaml in ${configDir})`}\n`);
