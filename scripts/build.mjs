// Bundles the CLI (dist/cli.cjs) with esbuild so users need no TypeScript runtime.
// The Lambda bundles are built by serverless.yml's packaging step (see README, Deploy).
import { build } from 'esbuild';
import { existsSync } from 'node:fs';

const entries = [{ in: 'cli/main.ts', out: 'dist/cli.cjs' }];

for (const entry of entries) {
  if (!existsSync(entry.in)) continue;
  await build({
    entryPoints: [entry.in],
    outfile: entry.out,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: true,
    // Native or data-bearing packages stay in node_modules.
    external: ['dynalite', 'classic-level', 'level', '@octokit/webhooks-examples'],
    loader: { '.md': 'text', '.html': 'text' },
    // yargs is ESM and calls createRequire(import.meta.url): give the CommonJS bundle a real URL.
    define: { 'import.meta.url': '__bundle_url' },
    banner: { js: "const __bundle_url = require('node:url').pathToFileURL(__filename).href;" },
    logLevel: 'warning',
  });
}
