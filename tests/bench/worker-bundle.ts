/**
 * What the GitHub client (octokit) adds to the Lambda code, built exactly as for
 * deployment (scripts/lambda-esbuild.json, minified): esbuild's metafile gives the bytes
 * each package contributes to the output. Grouped as @octokit/core with its three plugins
 * (and Bottleneck, which the throttling and retry plugins schedule with) and
 * @octokit/auth-app with what only it brings. octokit ships beside the worker bundle
 * (node_modules/hookagent-octokit, from functions/core/delivery/octokit-vendor.ts) and
 * loads at the first GitHub call. Target: all of it there, none in either bundle.
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

async function bytesByPackage(fn: string, entry = join(ROOT, 'functions', fn, 'handler.ts')): Promise<{ bundle: number; packages: Record<string, number> }> {
  const built = await build({
    ...(lambdaOptions as BuildOptions), absWorkingDir: ROOT, entryPoints: [entry],
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

const sum = (packages: Record<string, number>) => Object.values(packages).reduce((a, b) => a + b, 0);

export async function benchWorkerBundle(): Promise<Measurement> {
  const beside = await bytesByPackage('hookagent-octokit', join(ROOT, 'functions', 'core', 'delivery', 'octokit-vendor.ts'));
  const worker = await bytesByPackage('worker');
  const ingest = await bytesByPackage('ingest');
  const total = sum(beside.packages);
  const inBundles = sum(worker.packages) + sum(ingest.packages);
  if (total === 0) throw new Error('no octokit package found in the file beside the worker: the measurement could not be taken');
  const groups = Object.fromEntries(Object.entries(GROUPS).map(([label, pattern]) => [label, Object.entries(beside.packages)
    .filter(([name]) => pattern.test(`node_modules/${name}/`)).reduce((all, [, bytes]) => all + bytes, 0)]));
  return {
    name: 'worker: what octokit adds, in the file loaded at the first GitHub call', value: total / 1024, unit: 'KB',
    target: 'beside the worker bundle (0 bytes in either bundle)', met: inBundles === 0,
    floor: `the worker bundle: ${worker.bundle.toLocaleString('en')} B (octokit in it: ${sum(worker.packages)} B); the file beside it: ${beside.bundle.toLocaleString('en')} B; octokit in the ingest bundle (${ingest.bundle.toLocaleString('en')} B): ${sum(ingest.packages)} B`,
    detail: {
      octokit_bytes: total, groups_bytes: groups, packages_bytes: beside.packages, bottleneck_bytes: beside.packages.bottleneck ?? 0,
      beside_bytes: beside.bundle, worker_bundle_bytes: worker.bundle, worker_octokit_bytes: sum(worker.packages),
      ingest_bundle_bytes: ingest.bundle, ingest_octokit_bytes: sum(ingest.packages),
    },
  };
}
