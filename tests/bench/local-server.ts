/**
 * Bench 3: `hookagent serve` throughput and latency for signed ~20 KB GitHub events at a
 * fixed concurrency, next to (a) a bare Node server that reads the body, verifies the
 * HMAC and answers 202, and (b) @octokit/webhooks' Node middleware; same machine, same
 * run, same load. serve keeps its guarantees meanwhile: every 202 is on disk in the queue,
 * and its worker drains the queue while the load runs.
 */
import autocannon, { type Result } from 'autocannon';
import githubExamples from '@octokit/webhooks-examples';
import { signHub } from '../../functions/core/auth/signatures';
import { configDir, hookagent, startPeer, startServe, type Running } from './processes';
import type { Measurement } from './stats';

const SECRET = 'bench-github-secret';
const CONNECTIONS = 10;
const WARMUP_SECONDS = 1;
const SECONDS = 5;

/** The example payload closest to 20 KB. */
export function twentyKilobyteEvent(): { event: string; body: string } {
  const all = githubExamples.flatMap((group) => group.examples.map((example) => ({ event: group.name, body: JSON.stringify(example) })));
  const [best] = all.sort((a, b) => Math.abs(a.body.length - 20_000) - Math.abs(b.body.length - 20_000));
  if (!best) throw new Error('no GitHub example payloads');
  return best;
}

async function load(target: Running, event: string, body: string, seconds: number): Promise<Result> {
  let delivery = 0;
  const result = await autocannon({
    url: `${target.url}/webhooks/github`, connections: CONNECTIONS, duration: seconds,
    requests: [{
      method: 'POST', body,
      headers: { 'content-type': 'application/json', 'x-github-event': event, 'x-hub-signature-256': signHub(body, SECRET) },
      // A fresh delivery id per request: a repeated one would be answered as a cheap duplicate.
      setupRequest: (request) => ({ ...request, headers: { ...request.headers, 'x-github-delivery': `bench-${process.pid}-${delivery++}` } }),
    }],
  });
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0 || result['2xx'] === 0) {
    throw new Error(`${target.url}: ${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts of ${result.requests.total}`);
  }
  return result;
}

async function measure(target: Running, event: string, body: string): Promise<Result> {
  try {
    await load(target, event, body, WARMUP_SECONDS);
    return await load(target, event, body, SECONDS);
  } finally {
    await target.stop();
  }
}

export async function benchLocalServer(): Promise<Measurement[]> {
  const { event, body } = twentyKilobyteEvent();
  const env = { GH_SECRET: SECRET };
  const dir = configDir('webhooks: { github: { secret: ${GH_SECRET} } }\n');
  hookagent(['--config-dir', dir, 'webhook', 'subscribe', 'bench', '--events', event], env);

  const serve = await measure(await startServe(dir, env), event, body);
  const bare = await measure(await startPeer('bare', env), event, body);
  const octokit = await measure(await startPeer('octokit', env), event, body);

  const rate = (r: Result) => r.requests.total / SECONDS;
  const summary = (r: Result) => ({ requests_per_second: rate(r), latency_p50_ms: r.latency.p50, latency_p99_ms: r.latency.p99 });
  const detail = { event, body_bytes: Buffer.byteLength(body), connections: CONNECTIONS, seconds: SECONDS, serve: summary(serve), bare_node: summary(bare), octokit_middleware: summary(octokit) };
  const vsBare = rate(serve) / rate(bare);
  const vsOctokit = rate(serve) / rate(octokit);
  return [
    { name: 'serve throughput ÷ bare Node HMAC server', value: vsBare, unit: '×', target: '≥ 0.5×', met: vsBare >= 0.5, detail },
    { name: 'serve throughput ÷ @octokit/webhooks middleware', value: vsOctokit, unit: '×', target: '(reported)', met: true, detail: { serve: detail.serve, octokit_middleware: detail.octokit_middleware } },
    { name: 'serve latency p50 / p99 under that load', value: serve.latency.p50, unit: `ms p50, ${serve.latency.p99} ms p99`, target: '(reported)', met: true },
  ];
}
