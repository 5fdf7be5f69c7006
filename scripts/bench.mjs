// `npm run bench`: bundles tests/bench/main.ts with esbuild and runs it (no TypeScript runtime).
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';

// The serve measurements run the CLI as users do: build it first.
if (spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' }).status !== 0) process.exit(1);

await build({
  entryPoints: ['tests/bench/main.ts'], outfile: '.build/bench.cjs', bundle: true, platform: 'node', target: 'node20', format: 'cjs',
  external: ['esbuild', 'better-sqlite3', 'dynalite', 'classic-level', 'level', '@octokit/webhooks-examples', 'autocannon', '@octokit/webhooks'], loader: { '.md': 'text' }, logLevel: 'warning',
});
// Names given (`npm run bench -- cold-start`) run only those measurements.
const run = spawnSync(process.execPath, ['.build/bench.cjs', ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(run.status ?? 1);
