/**
 * Bench: how long a `hookagent` command takes from the shell, against Node's own start
 * (`node -e 0`) in the same interleaved rounds. Two commands on a local config dir with
 * one subscription: `--version` (start-up alone) and `webhook list` (start-up, config.yaml,
 * opening the SQLite store and one query). The built CLI (dist/cli.cjs) as users run it
 * through bin/hookagent.cjs; wall time of each process, since that is what a user waits for.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { median, type Measurement } from './stats';

const ROOT = resolve(__dirname, '..');
const BIN = join(ROOT, 'bin', 'hookagent.cjs');
const ROUNDS = 21;

function timed(args: string[], env: NodeJS.ProcessEnv): number {
  const start = process.hrtime.bigint();
  const run = spawnSync(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (run.status !== 0) throw new Error(`${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  return ms;
}

const spread = (values: number[]) => `${median(values).toFixed(0)} ms [${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}]`;

export async function benchCliStart(): Promise<Measurement> {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-bench-cli-'));
  try {
    writeFileSync(join(dir, 'config.yaml'), '');
    const env = { ...process.env, HOME: dir, NO_COLOR: '1' };
    timed([BIN, '--config-dir', dir, 'webhook', 'subscribe', 'alerts', '--prompt', 'Alert {alerts.0.labels.alertname}'], env);
    const sides: Record<'node' | 'version' | 'list', string[]> = {
      node: ['-e', '0'],
      version: [BIN, '--version'],
      list: [BIN, '--config-dir', dir, 'webhook', 'list'],
    };
    const times: Record<keyof typeof sides, number[]> = { node: [], version: [], list: [] };
    const order = Object.keys(sides) as Array<keyof typeof sides>;
    for (const side of order) timed(sides[side], env); // warm-up: the page cache, not the figures
    for (let round = 0; round < ROUNDS; round++) {
      // The order turns each round, so no side is always the one right after another spawn.
      for (let i = 0; i < order.length; i++) {
        const side = order[(i + round) % order.length] as keyof typeof sides;
        times[side].push(timed(sides[side], env));
      }
    }
    const ratios = times.list.map((ms, i) => ms / (times.node[i] as number));
    const ratio = median(ratios);
    return {
      name: 'CLI command time (`webhook list`, local store) ÷ `node -e 0`',
      value: ratio, unit: '×', target: '(reported)', met: true,
      floor: `node -e 0: ${spread(times.node)}; hookagent --version ${spread(times.version)}; webhook list ${spread(times.list)}`,
      detail: {
        rounds: ROUNDS, node_ms: median(times.node), version_ms: median(times.version), list_ms: median(times.list),
        list_ms_min: Math.min(...times.list), list_ms_max: Math.max(...times.list),
        ratio_min: Math.min(...ratios), ratio_max: Math.max(...ratios),
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
