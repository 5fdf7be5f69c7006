// Bundles the CLI (dist/cli.cjs) with esbuild so users need no TypeScript runtime.
// The Lambda bundles are built by serverless.yml's packaging step (see README, Deploy).
import { build } from 'esbuild';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

// Written aside and renamed into place: a CLI started while another build runs (the e2e
// test files each build in parallel) reads the old bundle or the new one, never half of one.
const result = await build({
  write: false,
  entryPoints: ['cli/main.ts'],
  outfile: 'dist/cli.cjs',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  // Native or data-bearing packages stay in node_modules.
  external: ['better-sqlite3', 'dynalite', 'classic-level', 'level', '@octokit/webhooks-examples', '@aws-sdk/*', '@smithy/*', '@aws-lambda-powertools/*'],
  loader: { '.md': 'text', '.html': 'text' },
  // yargs is ESM and calls createRequire(import.meta.url): give the CommonJS bundle a real URL.
  define: { 'import.meta.url': '__bundle_url' },
  banner: { js: "const __bundle_url = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
});
for (const file of result.outputFiles) {
  mkdirSync(dirname(file.path), { recursive: true });
  const aside = `${file.path}.${process.pid}.tmp`;
  writeFileSync(aside, file.contents);
  renameSync(aside, file.path);
}
