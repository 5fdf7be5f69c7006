/**
 * Bench 5: end-to-end latency through `hookagent serve`, from the signed POST to the
 * delivery arriving at a local Slack-compatible webhook (echo agent): p50 and p99 over
 * events sent one after another.
 */
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signHub } from '../../functions/core/auth/signatures';
import { configDir, hookagent, startServe } from './processes';
import { percentile, type Measurement } from './stats';

const SECRET = 'bench-e2e-secret';
const EVENTS = 200;
const DELIVERY_TIMEOUT_MS = 30_000;

export async function benchE2eLatency(): Promise<Measurement> {
  const waiting = new Map<string, (at: number) => void>();
  const slack = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const seq = /seq=(\d+)/.exec(Buffer.concat(chunks).toString())?.[1];
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      if (seq) waiting.get(seq)?.(at);
    });
  });
  await new Promise<void>((resolve) => slack.listen(0, '127.0.0.1', resolve));
  const env = { GH_SECRET: SECRET, SLACK_WEBHOOK_URL: `http://127.0.0.1:${(slack.address() as AddressInfo).port}/services/T0/B0/bench` };
  const dir = configDir('webhooks: { github: { secret: ${GH_SECRET} } }\ndelivery: { teamchat: { provider: slack, webhook_url: ${SLACK_WEBHOOK_URL} } }\n');
  hookagent(['--config-dir', dir, 'webhook', 'subscribe', 'latency', '--events', 'push', '--deliver', 'teamchat', '--prompt', 'seq={seq}'], env);
  const serve = await startServe(dir, env);
  const latencies: number[] = [];
  try {
    for (let seq = 0; seq < EVENTS; seq++) {
      const body = JSON.stringify({ ref: 'refs/heads/main', seq });
      const delivered = new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`event ${seq} was not delivered within ${DELIVERY_TIMEOUT_MS} ms`)), DELIVERY_TIMEOUT_MS);
        waiting.set(String(seq), (at) => { clearTimeout(timer); resolve(at); });
      });
      const start = performance.now();
      const response = await fetch(`${serve.url}/webhooks/github`, {
        method: 'POST', body,
        headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': `lat-${seq}`, 'x-hub-signature-256': signHub(body, SECRET) },
      });
      if (response.status !== 202) throw new Error(`event ${seq} answered ${response.status}: ${await response.text()}`);
      latencies.push((await delivered) - start);
      waiting.delete(String(seq));
    }
  } finally {
    await serve.stop();
    rmSync(dir, { recursive: true, force: true });
    await new Promise<void>((resolve) => slack.close(() => resolve()));
  }
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  return {
    name: `end to end, accepted → delivered (serve, echo agent, local Slack webhook; ${EVENTS} events)`, value: p50, unit: `ms p50, ${p99.toFixed(1)} ms p99`,
    target: '(reported)', met: true, detail: { p50_ms: p50, p99_ms: p99, max_ms: Math.max(...latencies) },
  };
}
