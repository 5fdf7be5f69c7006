/**
 * `npm run bench`: every figure is a ratio or a latency measured side by side in one run.
 * Prints a table, merges the figures into tests/bench/results.json (a measurement run
 * again replaces its own rows), rewrites the README's table from that file
 * (readme-table.ts), and exits non-zero when a measurement could not be taken (a target
 * not met is reported, not hidden).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mergeRecorded, parseRecorded, renderTable, replaceSection, type Recorded } from './readme-table';
import { benchColdStart } from './cold-start';
import { benchIngestCpu } from './ingest-cpu';
import { benchLambdaIngestCpu } from './lambda-ingest-cpu';
import { benchLocalServer } from './local-server';
import { benchServeMemory } from './serve-memory';
import { benchWorkerConcurrency } from './worker-concurrency';
import { benchE2eLatency } from './e2e-latency';
import { benchWorkerBundle } from './worker-bundle';
import { benchCliStart } from './cli-start';
import type { Measurement } from './stats';

const benches: Array<[string, () => Promise<Measurement | Measurement[]>]> = [
  ['ingest-cpu', benchIngestCpu],
  ['lambda-ingest-cpu', benchLambdaIngestCpu],
  ['cold-start', benchColdStart],
  ['local-server', benchLocalServer],
  ['serve-memory', benchServeMemory],
  ['worker-concurrency', benchWorkerConcurrency],
  ['e2e-latency', benchE2eLatency],
  ['worker-bundle', benchWorkerBundle],
  ['cli-start', benchCliStart],
];

const ROOT = join(__dirname, '..');
const RESULTS = join(ROOT, 'tests', 'bench', 'results.json');
const README = join(ROOT, 'README.md');

/** The commit measured: short hash, `+changes` when files other than the two this run writes differ from it. */
function commitMeasured(): string {
  try {
    const hash = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const changed = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', '.', ':!README.md', ':!tests/bench/results.json'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return changed ? `${hash}+changes` : hash;
  } catch {
    return 'unknown';
  }
}

function previousRecord(): Recorded {
  if (!existsSync(RESULTS)) return { results: [], errors: [] };
  try {
    return parseRecorded(readFileSync(RESULTS, 'utf8'));
  } catch (error) {
    // This run's figures are still written; what the file held is not kept.
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}: starting it afresh\n`);
    return { results: [], errors: [] };
  }
}

async function main(): Promise<void> {
  const results: Measurement[] = [];
  const errors: string[] = [];
  if (process.argv.includes('--table')) {
    // Only the README's table, from what results.json holds (after a change to its rendering).
    writeFileSync(README, replaceSection(readFileSync(README, 'utf8'), renderTable(previousRecord())));
    return;
  }
  const fresh: Recorded = { results: [], errors: [] };
  const stamp = { node: process.version, commit: commitMeasured() };
  const only = process.argv.slice(2);
  const unknown = only.filter((name) => !benches.some(([known]) => known === name));
  if (unknown.length > 0) {
    process.stderr.write(`unknown measurement ${unknown.join(', ')}; known: ${benches.map(([name]) => name).join(', ')}\n`);
    process.exit(2);
  }
  for (const [name, run] of benches) {
    if (only.length > 0 && !only.includes(name)) continue;
    try {
      const taken = [await run()].flat();
      results.push(...taken);
      fresh.results.push(...taken.map((m) => ({ bench: name, ...m, at: new Date().toISOString(), ...stamp })));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      errors.push(`${name}: ${message}`);
      fresh.errors.push({ bench: name, at: new Date().toISOString(), error: message });
    }
  }
  const rows = results.map((r) => `| ${r.name} | ${r.value.toFixed(2)} ${r.unit} | ${r.target} | ${r.met ? 'met' : 'NOT met'} |`);
  process.stdout.write(['| measurement | value | target | |', '|---|---|---|---|', ...rows].join('\n') + '\n');
  const recorded = mergeRecorded(previousRecord(), fresh, benches.map(([name]) => name));
  writeFileSync(RESULTS, `${JSON.stringify(recorded, null, 2)}\n`);
  try {
    writeFileSync(README, replaceSection(readFileSync(README, 'utf8'), renderTable(recorded)));
  } catch (error) {
    errors.push(`README table: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (errors.length > 0) {
    process.stderr.write(`measurements that could not be taken:\n  ${errors.join('\n  ')}\n`);
    process.exit(1);
  }
}

void main();
