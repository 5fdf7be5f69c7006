/**
 * `hookagent serve` over real HTTP on 127.0.0.1: a Grafana alert sent with PUT (Grafana's
 * webhook contact point offers POST or PUT) is accepted and delivered like the POST; PUT
 * on the GitHub URL and other methods on a custom URL stay 405; bad input answers the same
 * for PUT as for POST; the request log records the method.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signHub } from '../../functions/core/auth/signatures';
import { buildCli, runCli } from '../support/cli';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { eventually, startServe, stopServe, type Serve } from '../support/serve';

const GH_SECRET = 'put-e2e-github-secret';
const env = { GH_SECRET, TELEGRAM_BOT_TOKEN: '42:put', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
const GRAFANA = readFileSync(join(__dirname, '..', 'fixtures', 'alerts', 'grafana.json'), 'utf8');

let telegram: LocalServer;
let serve: Serve;
let dir: string;
let secret: string;

beforeAll(async () => {
  buildCli();
  telegram = await startLocalServer((_req, res) => sendJson(res, 200, { ok: true, result: { message_id: telegram.requests.length } }));
  dir = mkdtempSync(join(tmpdir(), 'hookagent-put-'));
  writeFileSync(join(dir, 'config.yaml'), [
    'webhooks: { github: { secret: ${GH_SECRET} } }',
    'delivery:',
    '  timeout: 2s',
    `  messenger: { provider: telegram, bot_token: \${TELEGRAM_BOT_TOKEN}, chat_id: "-100", api_url: "${telegram.url}" }`,
  ].join('\n'));
  serve = await startServe(dir, env);
  const sub = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'grafana', '--events', 'alert.firing', '--prompt', 'FIRING {alerts.0.labels.alertname}: {alerts.0.annotations.summary}', '--deliver', 'messenger'], env);
  expect(sub.code).toBe(0);
  secret = /whsec_\S+/.exec(sub.stdout)![0];
}, 90_000);
afterAll(async () => {
  if (serve) expect(await stopServe(serve)).toBe(0);
  await telegram?.close();
});

async function call(method: string, path: string, body: string | Buffer | undefined, headers: Record<string, string> = {}) {
  const response = await fetch(`${serve.url}${path}`, { method, body, headers: { 'content-type': 'application/json', ...headers } });
  const text = await response.text();
  return { status: response.status, allow: response.headers.get('allow'), type: response.headers.get('content-type'), body: JSON.parse(text) as Record<string, unknown> };
}

async function requestLog(): Promise<Array<{ method: string; status: number; outcome: string; endpoint: string; event?: string; action?: string }>> {
  const result = await runCli(['--config-dir', dir, 'webhook', 'requests', '--endpoint', 'custom/grafana', '--json', '--limit', '200'], env);
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Array<{ method: string; status: number; outcome: string; endpoint: string }>;
}

test('a Grafana alert PUT to serve is accepted and delivered like the POST, and logged as PUT', async () => {
  const put = await call('PUT', '/webhooks/custom/grafana', GRAFANA, { authorization: `Bearer ${secret}` });
  expect(put).toMatchObject({ status: 202, body: { status: 'accepted', event: 'alert', subscriptions: ['grafana'] } });
  expect(put.type).toMatch(/application\/json/);
  await eventually(() => telegram.requests.length === 1, 'the Telegram message of the PUT');
  const post = await call('POST', '/webhooks/custom/grafana', GRAFANA, { authorization: `Bearer ${secret}` });
  expect(post).toMatchObject({ status: 202, body: { status: 'accepted', event: 'alert', subscriptions: ['grafana'] } });
  await eventually(() => telegram.requests.length === 2, 'the Telegram message of the POST');
  const [viaPut, viaPost] = telegram.requests.map((r) => JSON.parse(r.body) as { chat_id: string; text: string });
  expect(viaPut?.text).toBe('FIRING High memory usage: This alert was triggered for zone us-1');
  expect(viaPut).toEqual(viaPost);

  // Grafana retries with the same method and delivery id: a duplicate, whichever method came first.
  const id = { authorization: `Bearer ${secret}`, 'x-request-id': 'grafana-put-retry' };
  expect((await call('PUT', '/webhooks/custom/grafana', GRAFANA, id)).status).toBe(202);
  expect(await call('PUT', '/webhooks/custom/grafana', GRAFANA, id)).toMatchObject({ status: 200, body: { status: 'duplicate', delivery_id: 'grafana-put-retry' } });
  expect(await call('POST', '/webhooks/custom/grafana', GRAFANA, id)).toMatchObject({ status: 200, body: { status: 'duplicate' } });

  await eventually(async () => (await requestLog()).filter((e) => e.outcome === 'accepted').length === 3, 'the accepted requests in the log');
  const log = await requestLog();
  expect(log.filter((e) => e.outcome === 'accepted').map((e) => e.method).sort()).toEqual(['POST', 'PUT', 'PUT']);
  expect(log.find((e) => e.method === 'PUT' && e.outcome === 'accepted')).toMatchObject({ status: 202, event: 'alert', action: 'firing' });
  expect(log.find((e) => e.method === 'PUT' && e.outcome === 'duplicate')).toMatchObject({ status: 200 });
  await eventually(async () => {
    const events = JSON.parse((await runCli(['--config-dir', dir, 'webhook', 'events', 'grafana', '--json'], env)).stdout) as Array<{ status: string }>;
    return events.length === 3 && events.every((e) => e.status === 'delivered');
  }, 'three delivered events');
}, 60_000);

test('PUT to /webhooks/github is 405 (Allow: POST); DELETE and PATCH on a custom URL are 405 (Allow: POST, PUT); all JSON', async () => {
  const body = JSON.stringify({ zen: 'x', hook_id: 1 });
  const github = await call('PUT', '/webhooks/github', body, { 'x-github-event': 'ping', 'x-hub-signature-256': signHub(body, GH_SECRET) });
  expect(github).toMatchObject({ status: 405, allow: 'POST', body: { status: 'error', code: 'method_not_allowed', message: 'Method not allowed; use POST' } });
  expect(github.type).toMatch(/application\/json/);
  for (const method of ['DELETE', 'PATCH']) {
    const result = await call(method, '/webhooks/custom/grafana', GRAFANA, { authorization: `Bearer ${secret}` });
    expect({ method, ...result }).toMatchObject({ method, status: 405, allow: 'POST, PUT', body: { status: 'error', code: 'method_not_allowed', message: 'Method not allowed; use POST, PUT' } });
  }
  const log = await requestLog();
  expect(log.filter((e) => e.outcome === 'method_not_allowed').map((e) => e.method).sort()).toEqual(['DELETE', 'PATCH']);
}, 30_000);

test('bad input through serve: PUT answers exactly as POST', async () => {
  const before = telegram.requests.length;
  const cases: Array<[string, string, string | Buffer | undefined, Record<string, string>]> = [
    ['wrong bearer', '/webhooks/custom/grafana', GRAFANA, { authorization: 'Bearer whsec_wrong' }],
    ['bad hub signature', '/webhooks/custom/grafana', GRAFANA, { 'x-hub-signature-256': signHub(`${GRAFANA} `, secret) }],
    ['not JSON', '/webhooks/custom/grafana', 'alert: firing', { authorization: `Bearer ${secret}` }],
    ['empty body', '/webhooks/custom/grafana', '', { authorization: `Bearer ${secret}` }],
    ['invalid UTF-8', '/webhooks/custom/grafana', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), { authorization: `Bearer ${secret}` }],
    ['unknown subscription', '/webhooks/custom/nobody', GRAFANA, { authorization: `Bearer ${secret}` }],
  ];
  for (const [what, path, body, headers] of cases) {
    const post = await call('POST', path, body, headers);
    const put = await call('PUT', path, body, headers);
    expect({ what, ...put }).toEqual({ what, ...post });
    expect(put.status).toBeGreaterThanOrEqual(400);
  }
  expect(telegram.requests.length).toBe(before);
}, 30_000);
