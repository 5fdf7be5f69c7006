/**
 * What the GitHub client (octokit) adds to the Lambda bundles, built exactly as for
 * deployment (scripts/lambda-esbuild.json, minified): esbuild's metafile gives the bytes
 * each package contributes to the output. Grouped as @octokit/core with its three plugins
 * (and Bottleneck, which the throttling and retry plugins schedule with) and
 * @octokit/auth-app with what only it brings. Target: all of it in the worker, none in
 * ingest.
 */
import { join, resolve } from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import lambdaOptions from '../../scripts/lambda-esbuild.json';
import type { Measurement } from './stats';

const ROOT = resolve(__dirname, '..');
const OUT = join(ROOT, '.build', 'bench', 'worker-bundle');

/** Packages by what brought them: core and its plugins, or auth-app. */
const GROUPS: Record<string, RegExp> = {
  'core + throttling + retry + paginate-rest': /node_modules\/(@octokit\/(core|request|request-error|endpoint|auth-token|graphql|plugin-throttling|plugin-retry|plugin-paginate-rest)|before-after-hook|universal-user-agent|content-type|json-with-bigint|bottleneck)\//,
  'auth-app': /node_modules\/(@octokit\/(auth-app|auth-oauth-app|auth-oauth-device|auth-oauth-user|oauth-methods|oauth-authorization-url)|toad-cache|universal-github-app-jwt)\//,
};

async function bytesByPackage(fn: string): Promise<{ bundle: number; packages: Record<string, number> }> {
  const built = await build({
    ...(lambdaOptions as BuildOptions), absWorkingDir: ROOT, entryPoints: [join(ROOT, 'functions', fn, 'handler.ts')],
    outfile: join(OUT, fn, 'index.js'), metafile: true,
  });
  const output = Object.values(built.metafile.outputs).find((o) => o.entryPoint !== undefined);
  if (!output) throw new Error(`esbuild wrote no ${fn} bundle`);
  const packages: Record<string, number> = {};
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const name = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1];
    if (name && Object.values(GROUPS).some((g) => g.test(input)) && bytesInOutput > 0) packages[name] = (packages[name] ?? 0) + bytesInOutput;
  }
  return { bundle: output.bytes, packages };
}

export async function benchWorkerBundle(): Promise<Measurement> {
  const worker = await bytesByPackage('worker');
  const ingest = await bytesByPackage('ingest');
  const total = Object.values(worker.packages).reduce((a, b) => a + b, 0);
  const inIngest = Object.values(ingest.packages).reduce((a, b) => a + b, 0);
  if (total === 0) throw new Error('no octokit package found in the worker bundle: the measurement could not be taken');
  const groups = Object.fromEntries(Object.entries(GROUPS).map(([label, pattern]) => [label, Object.entries(worker.packages)
    .filter(([name]) => pattern.test(`node_modules/${name}/`)).reduce((sum, [, bytes]) => sum + bytes, 0)]));
  return {
    name: 'worker bundle: what octokit adds', value: total / 1024, unit: 'KB', target: 'worker only (0 bytes in ingest)', met: inIngest === 0,
    floor: `the worker bundle: ${worker.bundle.toLocaleString('en')} B; octokit in the ingest bundle (${ingest.bundle.toLocaleString('en')} B): ${inIngest} B`,
    detail: {
      octokit_bytes: total, groups_bytes: groups, packages_bytes: worker.packages, bottleneck_bytes: worker.packages.bottleneck ?? 0,
      worker_bundle_bytes: worker.bundle, ingest_bundle_bytes: ingest.bundle, ingest_octokit_bytes: inIngest,
    },
  };
}
