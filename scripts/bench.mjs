// `npm run bench`: bundles tests/bench/main.ts with esbuild and runs it (no TypeScript runtime).
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';

await build({
  entryPoints: ['tests/bench/main.ts'], outfile: '.build/bench.cjs', bundle: true, platform: 'node', target: 'node20', format: 'cjs',
  external: ['esbuild', 'dynalite', 'classic-level', 'level', '@octokit/webhooks-examples', 'autocannon', '@octokit/webhooks'], loader: { '.md': 'text' }, logLevel: 'warning',
});
const run = spawnSync(process.execPath, ['.build/bench.cjs'], { stdio: 'inherit' });
process.exit(run.status ?? 1);
