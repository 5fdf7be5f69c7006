/**
 * Bench 2: cold start. Each Lambda bundle, built exactly as for deployment (the shared
 * settings of scripts/lambda-esbuild.json, re2js external as it ships beside it), next to a
 * bundle holding only the AWS SDK imports of that function's own code (same esbuild
 * settings, so tree-shaken the same way): its size, and its module-initialisation time
 * (require() in a fresh Node process, run with the deployed NODE_OPTIONS): the median of
 * the ratios of alternating runs, so a busy moment of the machine weighs on one pair, not
 * on one side; the order within a pair alternates too (the second of two spawns in a row
 * tends to differ). Per-pair ratios spread widely on this 2-core machine (p10–p90 about
 * 0.95–1.5): RUNS pairs keep the median's own run-to-run wobble to a few hundredths. For ingest also against the same code built as before issue 20 (CommonJS
 * entry points of the SDK, so nothing tree-shaken, and source maps with sourcesContent),
 * in the same run: targets ingest bundle ≤ 800 KB and init ≤ 0.7× of that build.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build, type BuildOptions, type Metafile } from 'esbuild';
import lambdaOptions from '../../scripts/lambda-esbuild.json';
import { median, percentile, type Measurement } from './stats';

const ROOT = resolve(__dirname, '..');
const OUT = join(ROOT, '.build', 'bench', 'cold-start');
const RUNS = 41;
const INGEST_MAX_BYTES = 800 * 1024;
/** The esbuild settings before issue 20: the SDK resolved through its CommonJS `main`, sources inlined in the map. */
const BEFORE: BuildOptions = { mainFields: ['main', 'module'], sourcesContent: true };
/** As serverless.yml sets them for both functions. */
const DEPLOYED_NODE_OPTIONS = '--enable-source-maps';

/** `export { A, B } from '@aws-sdk/x'` for every value import from the AWS SDK in our own sources. */
function sdkOnlyEntry(metafile: Metafile): string {
  const imports = new Map<string, Set<string>>();
  // Only our modules that are in the bundle: a module parsed but shaken out (a module
  // imported only for a type, or whose exports go unused) adds no SDK code to the real bundle either.
  const kept = Object.values(metafile.outputs).flatMap((output) => Object.entries(output.inputs).filter(([, i]) => i.bytesInOutput > 0).map(([name]) => name));
  for (const input of new Set(kept)) {
    if (input.includes('node_modules') || !input.endsWith('.ts')) continue;
    const source = readFileSync(join(ROOT, input), 'utf8');
    for (const match of source.matchAll(/import\s*\{([^}]*)\}\s*from\s*'(@aws-sdk\/[^']+)'/g)) {
      const names = (match[1] as string).split(',').map((n) => n.trim()).filter((n) => n && !n.startsWith('type '));
      const set = imports.get(match[2] as string) ?? new Set<string>();
      for (const name of names) set.add(name.split(/\s+as\s+/)[0] as string);
      imports.set(match[2] as string, set);
    }
  }
  if (imports.size === 0) throw new Error('found no AWS SDK imports: the baseline could not be built');
  return [...imports].filter(([, names]) => names.size > 0).map(([module, names]) => `export { ${[...names].sort().join(', ')} } from '${module}';`).join('\n') + '\n';
}

function requireTimeMs(file: string): number {
  const script = `const t = process.hrtime.bigint(); require(${JSON.stringify(file)}); process.stdout.write(String(Number(process.hrtime.bigint() - t) / 1e6));`;
  const run = spawnSync(process.execPath, ['-e', script], {
    encoding: 'utf8', env: { PATH: process.env.PATH, NODE_OPTIONS: DEPLOYED_NODE_OPTIONS, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  });
  const ms = Number(run.stdout);
  if (run.status !== 0 || !Number.isFinite(ms) || ms <= 0) throw new Error(`could not load ${file}: ${run.stderr.slice(0, 500)}`);
  return ms;
}

const round = (n: number) => Math.round(n * 1000) / 1000;

export async function benchColdStart(): Promise<Measurement[]> {
  const results: Measurement[] = [];
  for (const fn of ['ingest', 'worker']) {
    const dir = join(OUT, fn);
    mkdirSync(dir, { recursive: true });
    const options = { ...(lambdaOptions as BuildOptions), absWorkingDir: ROOT };
    const real = join(dir, 'handler.js');
    const built = await build({ ...options, entryPoints: [join(ROOT, 'functions', fn, 'handler.ts')], outfile: real, metafile: true });
    const entry = join(dir, 'sdk-only.ts');
    writeFileSync(entry, sdkOnlyEntry(built.metafile));
    const baseline = join(dir, 'sdk-only.js');
    await build({ ...options, entryPoints: [entry], outfile: baseline });

    let before: string | undefined;
    if (fn === 'ingest') {
      before = join(dir, 'before.js');
      await build({ ...options, ...BEFORE, entryPoints: [join(ROOT, 'functions', fn, 'handler.ts')], outfile: before });
    }

    const size = statSync(real).size / statSync(baseline).size;
    const realTimes: number[] = [];
    const baselineTimes: number[] = [];
    const beforeTimes: number[] = [];
    requireTimeMs(real); // the first read warms the file cache for each
    requireTimeMs(baseline);
    if (before) requireTimeMs(before);
    for (let i = 0; i < RUNS; i++) {
      const pair: Array<[string, number[]]> = [[real, realTimes], [baseline, baselineTimes], ...(before ? [[before, beforeTimes] as [string, number[]]] : [])];
      for (const [file, times] of i % 2 === 0 ? pair : pair.reverse()) times.push(requireTimeMs(file));
    }
    const ratios = realTimes.map((ms, i) => ms / (baselineTimes[i] as number));
    const init = median(ratios);
    const spread = (values: number[]) => ({ p10: round(percentile(values, 10)), p90: round(percentile(values, 90)) });
    results.push({
      name: `${fn} bundle size ÷ AWS SDK-only bundle`, value: size, unit: '×', target: '≤ 1.2×', met: size <= 1.2,
      floor: `an AWS SDK-only bundle built the same way: ${statSync(baseline).size.toLocaleString('en')} B; this one ${statSync(real).size.toLocaleString('en')} B`,
      detail: { bundle_bytes: statSync(real).size, sdk_only_bytes: statSync(baseline).size },
    });
    results.push({
      name: `${fn} module init ÷ AWS SDK-only init`, value: init, unit: `× [${spread(ratios).p10.toFixed(2)}–${spread(ratios).p90.toFixed(2)}, p10–p90 of ${RUNS} pairs]`, target: '≤ 1.2×', met: init <= 1.2,
      floor: `the SDK-only bundle's init: ${median(baselineTimes).toFixed(1)} ms (median of ${RUNS}); this one ${median(realTimes).toFixed(1)} ms`,
      detail: {
        bundle_ms_median: median(realTimes), sdk_only_ms_median: median(baselineTimes), ratio_spread: spread(ratios),
        bundle_ms_spread: spread(realTimes), runs: RUNS, node_options: DEPLOYED_NODE_OPTIONS,
      },
    });
    if (before) {
      const bytes = statSync(real).size;
      results.push({
        name: `${fn} bundle size`, value: bytes / 1024, unit: 'KB', target: '≤ 800 KB', met: bytes <= INGEST_MAX_BYTES,
        floor: `the build before issue 20: ${statSync(before).size.toLocaleString('en')} B; this one ${bytes.toLocaleString('en')} B`,
        detail: { bundle_bytes: bytes, before_issue_20_bytes: statSync(before).size, change: round(bytes / statSync(before).size - 1) },
      });
      const againstBefore = realTimes.map((ms, i) => ms / (beforeTimes[i] as number));
      const ratio = median(againstBefore);
      results.push({
        name: `${fn} module init ÷ the build before issue 20 (same run)`, value: ratio, unit: '×', target: '≤ 0.7×', met: ratio <= 0.7,
        floor: `the build before issue 20: ${median(beforeTimes).toFixed(1)} ms (median of ${RUNS}); this one ${median(realTimes).toFixed(1)} ms`,
        detail: { bundle_ms_median: median(realTimes), before_ms_median: median(beforeTimes), ratio_spread: spread(againstBefore), before_ms_spread: spread(beforeTimes), runs: RUNS },
      });
    }
  }
  return results;
}
