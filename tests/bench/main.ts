/**
 * `npm run bench`: every figure is a ratio or a latency measured side by side in one run.
 * Prints a table, writes tests/bench/results.json, and exits non-zero when a measurement
 * could not be taken (a target not met is reported, not hidden).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchColdStart } from './cold-start';
import { benchIngestCpu } from './ingest-cpu';
import { benchLambdaIngestCpu } from './lambda-ingest-cpu';
import { benchLocalServer } from './local-server';
import { benchServeMemory } from './serve-memory';
import { benchWorkerConcurrency } from './worker-concurrency';
import { benchE2eLatency } from './e2e-latency';
import { benchWorkerBundle } from './worker-bundle';
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
];

async function main(): Promise<void> {
  const results: Measurement[] = [];
  const errors: string[] = [];
  const only = process.argv.slice(2);
  const unknown = only.filter((name) => !benches.some(([known]) => known === name));
  if (unknown.length > 0) {
    process.stderr.write(`unknown measurement ${unknown.join(', ')}; known: ${benches.map(([name]) => name).join(', ')}\n`);
    process.exit(2);
  }
  for (const [name, run] of benches) {
    if (only.length > 0 && !only.includes(name)) continue;
    try {
      results.push(...[await run()].flat());
    } catch (error) {
      errors.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const rows = results.map((r) => `| ${r.name} | ${r.value.toFixed(2)} ${r.unit} | ${r.target} | ${r.met ? 'met' : 'NOT met'} |`);
  process.stdout.write(['| measurement | value | target | |', '|---|---|---|---|', ...rows].join('\n') + '\n');
  writeFileSync(join(__dirname, '..', 'tests', 'bench', 'results.json'), `${JSON.stringify({ node: process.version, at: new Date().toISOString(), results, errors }, null, 2)}\n`);
  if (errors.length > 0) {
    process.stderr.write(`measurements that could not be taken:\n  ${errors.join('\n  ')}\n`);
    process.exit(1);
  }
}

void main();
