/**
 * Bench `serve-memory`: does `hookagent serve` keep a flat memory over 100,000 accepted
 * events? serve is started as in `local-server` (the signed ~20 KB GitHub example, one
 * subscription, the echo agent delivering to the `log` target, fsync'd 202s); the load
 * comes from another process (autocannon, 10 connections, a fresh delivery id per
 * request) in chunks of a fixed amount of requests. After a warm-up and after each chunk
 * the bench waits until the queue is drained (every accepted event delivered) and reads
 * serve's RSS from /proc: nothing is forced (no --expose-gc, no GC between chunks), the
 * figure is what a user of `serve` would see. Each chunk's peak is serve's VmHWM, reset
 * before the chunk (`/proc/<pid>/clear_refs`); where that cannot be written, the highest
 * of the RSS samples taken every 5 s. "Flat" compares the first chunk (by then every
 * cache and the heap have grown to their working size) with the later ones, on both the
 * RSS once drained and the peak: a reading taken just after a garbage collection can look
 * flat while the peaks grow.
 */
import Database from 'better-sqlite3';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { rssMb, runLoadAmount } from './load';
import { twentyKilobyteEvent } from './local-server';
import { configDir, hookagent, startServe } from './processes';
import type { Measurement } from './stats';

const SECRET = 'bench-github-secret';
const CONNECTIONS = 10;
const WARMUP_EVENTS = 2_000;
const CHUNKS = 4;
const CHUNK_EVENTS = 25_000;
/** The flat criterion: growth from the first chunk to the later ones, of the drained RSS and of the peaks. */
const MAX_GROWTH_MB = 50;
const MAX_GROWTH_RATIO = 0.25;
const SAMPLE_MS = 5_000;

/** Peak resident memory of a process in MB (VmHWM), from /proc. */
function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

/** Resets a process's VmHWM to its current RSS (Linux ≥ 4.0); false when not allowed here. */
function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

const progress = (line: string) => process.stderr.write(`serve-memory: ${line}\n`);
const round1 = (mb: number) => Math.round(mb * 10) / 10;

export async function benchServeMemory(): Promise<Measurement[]> {
  const { event, body } = twentyKilobyteEvent();
  const signature = signHub(body, SECRET);
  const env = { GH_SECRET: SECRET };
  const dir = configDir('webhooks: { github: { secret: ${GH_SECRET} } }\n');
  hookagent(['--config-dir', dir, 'webhook', 'subscribe', 'bench', '--events', event], env);
  const serve = await startServe(dir, env);
  const pid = serve.child.pid as number;
  const url = `${serve.url}/webhooks/github`;
  const db = new Database(join(dir, 'data', 'hookagent.db'), { readonly: true, timeout: 5000 });
  const queued = db.prepare('SELECT COUNT(*) FROM queue').pluck();
  const delivered = db.prepare("SELECT COUNT(*) FROM events WHERE status = 'delivered'").pluck();
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  // RSS every few seconds while the run lasts, for the peak under load and the shape of the curve.
  const samples: Array<[number, number]> = [];
  let chunkPeak = 0;
  const sampler = setInterval(() => {
    const rss = rssMb(pid);
    chunkPeak = Math.max(chunkPeak, rss);
    samples.push([Math.round(elapsed()), round1(rss)]);
  }, SAMPLE_MS);

  let accepted = 0;
  /** Sends `amount` events, throws on any non-2xx or error, then waits until every accepted event is delivered. */
  const send = async (amount: number, label: string) => {
    const result = await runLoadAmount(url, CONNECTIONS, amount, event, signature, body);
    if (result.non2xx > 0 || result.errors > 0 || result.ok !== amount) {
      throw new Error(`${label}: ${result.ok} accepted (2xx), ${result.non2xx} non-2xx answers, ${result.errors} errors of ${amount} requests`);
    }
    accepted += result.ok;
    const sent = elapsed();
    progress(`${label}: ${result.ok} × 202 in ${result.seconds.toFixed(1)} s (${Math.round(result.ok / result.seconds)}/s, p99 ${result.p99} ms); draining ${queued.get() as number} queued`);
    let reported = performance.now();
    while ((queued.get() as number) > 0) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      if (performance.now() - reported > 15_000) {
        reported = performance.now();
        progress(`${label}: ${queued.get() as number} still queued, serve RSS ${rssMb(pid).toFixed(0)} MB`);
      }
    }
    const done = delivered.get() as number;
    if (done !== accepted) throw new Error(`${label}: the queue is empty but ${done} of ${accepted} accepted events are delivered`);
    return { ...result, drainSeconds: elapsed() - sent };
  };

  try {
    const atStart = rssMb(pid);
    await send(WARMUP_EVENTS, 'warm-up');
    const before = rssMb(pid);
    progress(`RSS at start ${atStart.toFixed(1)} MB, after the warm-up (${WARMUP_EVENTS} events) ${before.toFixed(1)} MB`);
    const chunks: Array<{ accepted: number; rss_mb: number; peak_rss_mb: number; ingest_per_second: number; p99_ms: number; seconds: number }> = [];
    let peakFrom: 'VmHWM' | 'samples' = 'VmHWM';
    const pipelineStart = elapsed();
    for (let i = 0; i < CHUNKS; i++) {
      const chunkStart = elapsed();
      chunkPeak = 0;
      if (!resetPeakRss(pid)) peakFrom = 'samples';
      const result = await send(CHUNK_EVENTS, `chunk ${i + 1}/${CHUNKS}`);
      const rss = rssMb(pid);
      const peak = Math.max(peakFrom === 'VmHWM' ? peakRssMb(pid) : chunkPeak, rss);
      chunks.push({ accepted: accepted - WARMUP_EVENTS, rss_mb: round1(rss), peak_rss_mb: round1(peak), ingest_per_second: Math.round(result.ok / result.seconds), p99_ms: result.p99, seconds: Math.round(elapsed() - chunkStart) });
      progress(`after ${accepted - WARMUP_EVENTS} events: RSS ${rss.toFixed(1)} MB, peak during the chunk ${peak.toFixed(1)} MB (${peakFrom}; ${Math.round(elapsed())} s so far)`);
    }
    const pipelineSeconds = elapsed() - pipelineStart;
    const events = CHUNKS * CHUNK_EVENTS;
    const rate = events / pipelineSeconds;
    const [first, ...later] = chunks as [typeof chunks[0], ...typeof chunks];
    const last = chunks[chunks.length - 1]!;
    const drainedGrowth = last.rss_mb - first.rss_mb;
    const peakGrowth = Math.max(...later.map((c) => c.peak_rss_mb)) - first.peak_rss_mb;
    const within = (growth: number, base: number) => growth <= MAX_GROWTH_MB && growth <= base * MAX_GROWTH_RATIO;
    const flat = within(drainedGrowth, first.rss_mb) && within(peakGrowth, first.peak_rss_mb);
    const detail = {
      event, body_bytes: Buffer.byteLength(body), connections: CONNECTIONS, warmup_events: WARMUP_EVENTS, chunk_events: CHUNK_EVENTS,
      accepted_202: accepted, rss_at_start_mb: round1(atStart), rss_before_mb: round1(before), chunks, peak_from: peakFrom,
      drained_growth_mb: round1(drainedGrowth), peak_growth_mb: round1(peakGrowth),
      drained_growth_bytes_per_event: Math.round((drainedGrowth * 1024 * 1024) / (events - CHUNK_EVENTS)),
      pipeline_seconds: Math.round(pipelineSeconds), rss_samples: samples,
    };
    const mb = (values: number[]) => values.map((v) => v.toFixed(0)).join(' → ');
    const pct = (growth: number, base: number) => `${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MB (${((growth / base) * 100).toFixed(1)}%)`;
    return [
      {
        name: `serve RSS growth from ${CHUNK_EVENTS.toLocaleString('en')} to ${events.toLocaleString('en')} accepted events, drained / peak per chunk`,
        value: Math.max(drainedGrowth, peakGrowth),
        unit: `MB (drained ${pct(drainedGrowth, first.rss_mb)}, peaks ${pct(peakGrowth, first.peak_rss_mb)})`,
        target: `≤ ${MAX_GROWTH_MB} MB and ≤ ${MAX_GROWTH_RATIO * 100}% each (flat)`, met: flat,
        floor: `serve after the first ${CHUNK_EVENTS.toLocaleString('en')} events: ${first.rss_mb.toFixed(0)} MB drained, ${first.peak_rss_mb.toFixed(0)} MB peak`, detail,
      },
      {
        name: `serve RSS before → after each ${CHUNK_EVENTS.toLocaleString('en')} events (queue drained)`, value: last.rss_mb,
        unit: `MB (${mb([before, ...chunks.map((c) => c.rss_mb)])} MB; peak per chunk ${mb(chunks.map((c) => c.peak_rss_mb))} MB)`, target: '(reported)', met: true,
      },
      { name: `serve sustained pipeline rate over ${events.toLocaleString('en')} events (queue drained)`, value: rate, unit: `events/s (${accepted.toLocaleString('en')} × 202, 0 non-2xx)`, target: '(reported)', met: true },
    ];
  } finally {
    clearInterval(sampler);
    db.close();
    await serve.stop();
    // The store holds every event's payload, prompt and reply: gigabytes after 100,000 events.
    rmSync(dir, { recursive: true, force: true });
  }
}
