/**
 * Bench 3: `hookagent serve` accepting signed ~20 KB GitHub events, side by side with
 * peers on the same machine in the same run: (a) a bare Node server that reads the body,
 * verifies the HMAC and answers 202 (the floor), (b) @octokit/webhooks' Node middleware,
 * (c) adnanh/webhook (Debian package `webhook`, an HMAC trigger rule running /bin/true)
 * when it installs here. Servers are rotated over ROUNDS interleaved rounds; the load
 * comes from another process (autocannon, a fresh delivery id per request) at 10 and 50
 * connections; CPU per request is read from /proc. serve's 202s are fsync'd (see
 * functions/local/sqlite/db.ts) and its worker (echo agent, `log` target) drains the
 * queue: the pipeline figure is accepted events ÷ the time until the queue is empty, with
 * serve's CPU over that whole time. Medians with [min–max] over the rounds.
 */
import githubExamples from '@octokit/webhooks-examples';
import Database from 'better-sqlite3';
import { execFileSync, spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { cpuSeconds, rssMb, runLoad, type LoadResult } from './load';
import { configDir, hookagent, startPeer, startServe, type Running } from './processes';
import { median, type Measurement } from './stats';

const SECRET = 'bench-github-secret';
const ROUNDS = 5;
const CONNECTIONS = [10, 50];
const WARMUP_SECONDS = 1;
const SECONDS = 4;

/** The example payload closest to 20 KB. */
export function twentyKilobyteEvent(): { event: string; body: string } {
  const all = githubExamples.flatMap((group) => group.examples.map((example) => ({ event: group.name, body: JSON.stringify(example) })));
  const [best] = all.sort((a, b) => Math.abs(a.body.length - 20_000) - Math.abs(b.body.length - 20_000));
  if (!best) throw new Error('no GitHub example payloads');
  return best;
}

type Kind = 'serve' | 'bare' | 'octokit' | 'webhook';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/** adnanh/webhook from Debian, installed with apt-get when missing and allowed; undefined when it cannot be had. */
function webhookBinary(): string | undefined {
  const which = () => {
    try {
      return execFileSync('which', ['webhook'], { encoding: 'utf8' }).trim() || undefined;
    } catch {
      return undefined;
    }
  };
  if (which()) return which();
  if (process.getuid?.() !== 0) return undefined;
  try {
    execFileSync('apt-get', ['install', '-y', '-q', 'webhook'], { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  } catch {
    return undefined;
  }
  return which();
}

async function startWebhook(binary: string): Promise<Running> {
  const dir = configDir('');
  const hooks = join(dir, 'hooks.json');
  writeFileSync(hooks, JSON.stringify([{
    id: 'github', 'execute-command': '/bin/true', 'success-http-response-code': 202,
    'trigger-rule': { match: { type: 'payload-hmac-sha256', secret: SECRET, parameter: { source: 'header', name: 'X-Hub-Signature-256' } } },
  }]));
  const port = await freePort();
  const child = spawn(binary, ['-hooks', hooks, '-ip', '127.0.0.1', '-port', String(port)], { stdio: 'ignore' });
  const exited = new Promise<void>((done) => child.on('exit', () => done()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    const up = await fetch(`${url}/`).then(() => true, () => false);
    if (up) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { url, child, stop: async () => { child.kill('SIGTERM'); await exited; rmSync(dir, { recursive: true, force: true }); } };
}

const path = (kind: Kind) => (kind === 'webhook' ? '/hooks/github' : '/webhooks/github');

interface Sample extends LoadResult { rate: number; cpuPerRequestMs: number }

export async function benchLocalServer(): Promise<Measurement[]> {
  const { event, body } = twentyKilobyteEvent();
  const signature = signHub(body, SECRET);
  const env = { GH_SECRET: SECRET };
  const webhook = webhookBinary();
  const kinds: Kind[] = ['serve', 'bare', 'octokit', ...(webhook ? ['webhook' as const] : [])];
  const samples = new Map<string, Sample[]>();
  const pipeline: Array<{ rate: number; cpuPerEventMs: number; accepted: number }> = [];
  let rss: { before: number; after: number; events: number } | undefined;

  for (let round = 0; round < ROUNDS; round++) {
    // Rotated order: no server always runs first (or last) on a machine that heats up.
    const order = kinds.map((_, i) => kinds[(i + round) % kinds.length] as Kind);
    for (const kind of order) {
      let dir = '';
      let target: Running;
      if (kind === 'serve') {
        dir = configDir('webhooks: { github: { secret: ${GH_SECRET} } }\n');
        hookagent(['--config-dir', dir, 'webhook', 'subscribe', 'bench', '--events', event], env);
        target = await startServe(dir, env);
      } else if (kind === 'webhook') {
        target = await startWebhook(webhook as string);
      } else {
        target = await startPeer(kind, env);
      }
      const pid = target.child.pid as number;
      try {
        const rssBefore = rssMb(pid);
        let accepted = 0;
        const pipelineStart = performance.now();
        const pipelineCpu = cpuSeconds(pid);
        for (const connections of CONNECTIONS) {
          const warm = await runLoad(`${target.url}${path(kind)}`, connections, WARMUP_SECONDS, event, signature, body);
          accepted += warm.ok;
          const cpu = cpuSeconds(pid);
          const result = await runLoad(`${target.url}${path(kind)}`, connections, SECONDS, event, signature, body);
          accepted += result.ok;
          if (result.non2xx > 0 || result.errors > 0 || result.ok === 0) {
            throw new Error(`${kind}: ${result.non2xx} non-2xx answers, ${result.errors} errors of ${result.total}`);
          }
          const sample: Sample = { ...result, rate: result.ok / SECONDS, cpuPerRequestMs: ((cpuSeconds(pid) - cpu) * 1000) / result.ok };
          samples.set(`${kind}@${connections}`, [...(samples.get(`${kind}@${connections}`) ?? []), sample]);
        }
        if (kind === 'serve') {
          // Drained: every accepted event has left the queue (delivered by the worker).
          const db = new Database(join(dir, 'data', 'hookagent.db'), { readonly: true, timeout: 5000 });
          const count = db.prepare('SELECT COUNT(*) FROM queue').pluck();
          while ((count.get() as number) > 0) await new Promise((resolve) => setTimeout(resolve, 20));
          const delivered = db.prepare("SELECT COUNT(*) FROM events WHERE status = 'delivered'").pluck().get() as number;
          db.close();
          const seconds = (performance.now() - pipelineStart) / 1000;
          pipeline.push({ rate: delivered / seconds, cpuPerEventMs: ((cpuSeconds(pid) - pipelineCpu) * 1000) / delivered, accepted });
          if (round === ROUNDS - 1) rss = { before: rssBefore, after: rssMb(pid), events: accepted };
        }
      } finally {
        await target.stop();
        // Each serve round writes ~0.5 GB (its events, kept 14 days): left behind, a few bench runs fill a disk.
        if (dir) rmSync(dir, { recursive: true, force: true });
      }
    }
  }

  const stat = (values: number[]) => ({ median: median(values), min: Math.min(...values), max: Math.max(...values) });
  const of = (kind: Kind, connections: number) => samples.get(`${kind}@${connections}`) ?? [];
  const detail: Record<string, unknown> = { event, body_bytes: Buffer.byteLength(body), rounds: ROUNDS, seconds: SECONDS, peers: kinds };
  for (const kind of kinds) {
    for (const c of CONNECTIONS) {
      const s = of(kind, c);
      detail[`${kind}@${c}`] = { requests_per_second: stat(s.map((x) => x.rate)), cpu_ms_per_request: stat(s.map((x) => x.cpuPerRequestMs)), p50_ms: stat(s.map((x) => x.p50)), p99_ms: stat(s.map((x) => x.p99)) };
    }
  }
  detail.pipeline = { events_per_second: stat(pipeline.map((p) => p.rate)), cpu_ms_per_event: stat(pipeline.map((p) => p.cpuPerEventMs)), accepted_per_round: pipeline.map((p) => p.accepted) };
  detail.rss_mb = rss;

  // Ratios per round (same round, same machine state), then their median and spread.
  const ratios = (c: number, peer: Kind) => of('serve', c).map((s, i) => s.rate / (of(peer, c)[i]?.rate ?? NaN));
  const fmt = (v: { median: number; min: number; max: number }, digits = 2) => `[${v.min.toFixed(digits)}–${v.max.toFixed(digits)}]`;
  const r10 = stat(ratios(10, 'bare'));
  const r50 = stat(ratios(50, 'bare'));
  const bareCpu = stat(of('bare', 10).map((s) => s.cpuPerRequestMs));
  const cpuRatio = stat(pipeline.map((p, i) => p.cpuPerEventMs / (of('bare', 10)[i]?.cpuPerRequestMs ?? NaN)));
  const p99 = stat(of('serve', 10).map((s) => s.p99));
  const rate = (kind: Kind, c: number) => `${Math.round(stat(of(kind, c).map((s) => s.rate)).median).toLocaleString('en')} requests/s`;
  const name = (kind: Kind) => ({ bare: 'the bare Node HMAC server', octokit: '@octokit/webhooks', webhook: 'adnanh/webhook', serve: 'serve' } as Record<string, string>)[kind] ?? kind;
  const against = (peer: Kind, c: number) => `${name(peer)}: ${rate(peer, c)} (median of ${ROUNDS} rounds); serve ${rate('serve', c)}`;
  const results: Measurement[] = [
    { name: 'serve throughput ÷ bare Node HMAC server, 10 connections', value: r10.median, unit: `× ${fmt(r10)}`, target: '≥ 0.3×', met: r10.median >= 0.3, floor: against('bare', 10), detail },
    { name: 'serve throughput ÷ bare Node HMAC server, 50 connections', value: r50.median, unit: `× ${fmt(r50)}`, target: '≥ 0.45×', met: r50.median >= 0.45, floor: against('bare', 50) },
    { name: 'serve pipeline CPU per event ÷ bare server CPU per request', value: cpuRatio.median, unit: `× ${fmt(cpuRatio, 1)} (bare ${bareCpu.median.toFixed(3)} ms/request)`, target: '≤ 10×', met: cpuRatio.median <= 10, floor: `the bare server's CPU per request: ${bareCpu.median.toFixed(3)} ms (median); serve ${stat(pipeline.map((p) => p.cpuPerEventMs)).median.toFixed(2)} ms per delivered event` },
    { name: 'serve p99 latency at 10 connections', value: p99.median, unit: `ms ${fmt(p99, 0)}`, target: '≤ 20 ms', met: p99.median <= 20 },
    { name: 'serve sustained pipeline rate (queue drained)', value: stat(pipeline.map((p) => p.rate)).median, unit: `events/s ${fmt(stat(pipeline.map((p) => p.rate)), 0)}`, target: '(reported)', met: true },
    { name: 'serve RSS before / after the last round', value: rss?.before ?? NaN, unit: `MB before, ${rss?.after.toFixed(1)} MB after ${rss?.events} events`, target: '(reported; flat)', met: true },
    ...(['octokit', 'webhook'] as const).filter((k) => kinds.includes(k)).map((peer) => {
      const r = stat(ratios(10, peer));
      return { name: `serve throughput ÷ ${peer === 'octokit' ? '@octokit/webhooks middleware' : 'adnanh/webhook'}, 10 connections`, value: r.median, unit: `× ${fmt(r)}`, target: '(reported)', met: true, floor: against(peer, 10) };
    }),
  ];
  if (!webhook) results.push({ name: 'adnanh/webhook peer', value: NaN, unit: 'not installable here (apt-get install webhook failed)', target: '(reported)', met: true });
  return results;
}
