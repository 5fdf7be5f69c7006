/**
 * Bodies and delivery ids as real senders send them (hunt 6), over serve's HTTP side on
 * 127.0.0.1 in front of the real ingest on the local SQLite store:
 * - GitHub's `application/x-www-form-urlencoded` content type (`payload=<JSON>`, the
 *   default of GitHub's hook API) is accepted like JSON, signed over the form bytes;
 * - a text body that starts with a byte order mark (API Gateway hands JSON over as text)
 *   is accepted on the Lambda path as it is by serve;
 * - an empty delivery-id header does not hide the next one in the order;
 * - PagerDuty v3's `X-Webhook-Id` (the same on every retry) deduplicates its retries.
 */
import { mkdtempSync } from 'node:fs';
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHmac } from 'node:crypto';
import { signHub } from '../../functions/core/auth/signatures';
import { createIngest } from '../../functions/core/ingest/service';
import { silentLogger } from '../../functions/core/log';
import { systemClock } from '../../functions/core/ports';
import type { Subscription } from '../../functions/core/types';
import { apiGatewayHandler } from '../../functions/ingest/api-gateway';
import { openLocalRuntime, type LocalRuntime } from '../../functions/local/compose';
import { createLocalHttpServer } from '../../cli/local/http-server';
import { apiEvent } from '../support/requests';

const GH = 'gh-secret';
const GL = 'gl-secret';
const CUSTOM_SECRET = `whsec_${Buffer.from('hunt6-custom-secret').toString('base64')}`;

let runtime: LocalRuntime;
let server: Server;
let url: string;
let handler: ReturnType<typeof apiGatewayHandler>;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'inbound-bodies-'));
  runtime = await openLocalRuntime(dir, { role: 'serve', clock: systemClock, visibilityTimeoutMs: 60_000 });
  const ingest = createIngest(runtime.ingestDeps({ webhooks: { github: { secret: [GH] }, gitlab: { secret: [GL] }, max_payload_size: 1024 * 1024 } }, silentLogger));
  handler = apiGatewayHandler(async () => ingest, silentLogger);
  const now = new Date().toISOString();
  const base = (name: string, events: string[], secret: string): Subscription => ({ name, events, secret, skills: [], deliver: ['log'], state: 'active', created_at: now, updated_at: now });
  await runtime.subscriptions.create(base('all', ['*'], 'unused'));
  await runtime.subscriptions.create(base('pager', [], CUSTOM_SECRET));
  server = createLocalHttpServer({ handler, maxBodyBytes: 1024 * 1024, trustProxy: false, logger: silentLogger });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await runtime.close();
});

function post(path: string, body: Buffer | string, headers: Record<string, string>): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const storedPayload = async (eventId: unknown) => (await runtime.events.getEvent(eventId as string))[0]?.message.payload;

describe('GitHub hooks with the form content type (payload=<url-encoded JSON>)', () => {
  const json = JSON.stringify({ action: 'opened', number: 7, pull_request: { number: 7, title: 'Fix a+b & c=d 100% ✓' }, repository: { full_name: 'o/r' } });
  // As GitHub sends it: the form encoding (spaces as '+'), signed over these exact bytes.
  const form = new URLSearchParams({ payload: json }).toString();

  test('a signed form delivery is accepted, with the same payload as the JSON one', async () => {
    const answer = await post('/webhooks/github', form, {
      'content-type': 'application/x-www-form-urlencoded', 'x-github-event': 'pull_request', 'x-github-delivery': 'form-1', 'x-hub-signature-256': signHub(form, GH),
    });
    expect(answer).toMatchObject({ status: 202, json: { status: 'accepted', event: 'pull_request', delivery_id: 'form-1', subscriptions: ['all'] } });
    expect(await storedPayload(answer.json.event_id)).toEqual(JSON.parse(json));
  });

  test('on the Lambda path too, where API Gateway hands the form over base64-encoded', async () => {
    const result = await handler(apiEvent({ path: '/webhooks/github', body: Buffer.from(form), headers: {
      'content-type': 'application/x-www-form-urlencoded', 'x-github-event': 'pull_request', 'x-github-delivery': 'form-lambda', 'x-hub-signature-256': signHub(form, GH),
    } }));
    expect({ status: result.statusCode, body: JSON.parse(String(result.body)) as unknown }).toMatchObject({ status: 202, body: { status: 'accepted', delivery_id: 'form-lambda' } });
  });

  test('a form ping answers ok; a charset parameter and upper case do not matter', async () => {
    const ping = new URLSearchParams({ payload: JSON.stringify({ zen: 'Keep it simple.', hook_id: 1 }) }).toString();
    const answer = await post('/webhooks/github', ping, {
      'content-type': 'Application/X-WWW-Form-URLEncoded; charset=utf-8', 'x-github-event': 'ping', 'x-github-delivery': 'form-ping', 'x-hub-signature-256': signHub(ping, GH),
    });
    expect(answer).toEqual({ status: 200, json: { status: 'ok', event: 'ping' } });
  });

  test('the signature still covers the form bytes: signing the JSON inside is refused', async () => {
    const answer = await post('/webhooks/github', form, {
      'content-type': 'application/x-www-form-urlencoded', 'x-github-event': 'pull_request', 'x-github-delivery': 'form-2', 'x-hub-signature-256': signHub(json, GH),
    });
    expect(answer.status).toBe(401);
  });

  test('JSON sent with the form content type (curl -d) is still read as JSON, whatever its text holds', async () => {
    const body = JSON.stringify({ event_type: 'deploy', note: 'a&payload=b' });
    const answer = await post('/webhooks/custom/pager', body, { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${CUSTOM_SECRET}` });
    expect(answer).toMatchObject({ status: 202, json: { status: 'accepted', event: 'deploy' } });
    expect(await storedPayload(answer.json.event_id)).toEqual(JSON.parse(body));
  });

  test('a form without a payload field, or whose payload is not a JSON object, is 400 invalid_json', async () => {
    for (const body of ['other=1', `payload=${encodeURIComponent('[1,2]')}`, 'payload=%7Bnot-json']) {
      const answer = await post('/webhooks/github', body, {
        'content-type': 'application/x-www-form-urlencoded', 'x-github-event': 'push', 'x-hub-signature-256': signHub(body, GH),
      });
      expect(answer).toMatchObject({ status: 400, json: { status: 'error', code: 'invalid_json' } });
    }
  });
});

test('a JSON text body that starts with a byte order mark is accepted on the Lambda path too', async () => {
  const body = '\uFEFF{"action":"opened","issue":{"number":8}}';
  const result = await handler(apiEvent({ path: '/webhooks/github', body, headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': 'bom-1', 'x-hub-signature-256': signHub(body, GH) } }));
  expect(result.isBase64Encoded ?? false).toBe(false);
  expect({ status: result.statusCode, body: JSON.parse(String(result.body)) as unknown }).toMatchObject({ status: 202, body: { status: 'accepted', delivery_id: 'bom-1' } });
});

describe('delivery ids', () => {
  test('GitLab: an empty Idempotency-Key does not hide X-Gitlab-Event-UUID (the retry is a duplicate)', async () => {
    const headers = { 'content-type': 'application/json', 'x-gitlab-token': GL, 'idempotency-key': '', 'x-gitlab-event-uuid': 'uuid-empty-key' };
    const first = await post('/webhooks/gitlab', '{"object_kind":"push"}', headers);
    const retry = await post('/webhooks/gitlab', '{"object_kind":"push"}', headers);
    expect(first.json).toMatchObject({ status: 'accepted', delivery_id: 'uuid-empty-key' });
    expect(retry).toEqual({ status: 200, json: { status: 'duplicate', delivery_id: 'uuid-empty-key' } });
  });

  test('custom: an empty X-Request-ID does not hide Idempotency-Key', async () => {
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${CUSTOM_SECRET}`, 'x-request-id': ' ', 'idempotency-key': 'key-after-empty' };
    const first = await post('/webhooks/custom/pager', '{"a":1}', headers);
    const retry = await post('/webhooks/custom/pager', '{"a":1}', headers);
    expect(first.json).toMatchObject({ status: 'accepted', delivery_id: 'key-after-empty' });
    expect(retry.json).toEqual({ status: 'duplicate', delivery_id: 'key-after-empty' });
  });

  test('PagerDuty v3: a retry with the same X-Webhook-Id is a duplicate', async () => {
    const body = JSON.stringify({ event: { id: '5ac64822-4adc-4fda-ade0-410becf0de4f', event_type: 'incident.priority_updated', resource_type: 'incident', occurred_at: '2020-10-02T18:45:22.169Z', data: { id: 'PGR0VU2' } } });
    const headers = { 'content-type': 'application/json', 'x-pagerduty-signature': `v1=${createHmac('sha256', CUSTOM_SECRET).update(body).digest('hex')}`, 'x-webhook-id': 'pd-delivery-1' };
    const first = await post('/webhooks/custom/pager', body, headers);
    const retry = await post('/webhooks/custom/pager', body, headers);
    expect(first.json).toMatchObject({ status: 'accepted', event: 'incident', delivery_id: 'pd-delivery-1' });
    expect(retry.json).toEqual({ status: 'duplicate', delivery_id: 'pd-delivery-1' });
  });

  test('X-Webhook-Id is not a delivery id for other senders (it may name the hook, not the delivery)', async () => {
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${CUSTOM_SECRET}`, 'x-webhook-id': 'hook-42' };
    const first = await post('/webhooks/custom/pager', '{"b":1}', headers);
    const second = await post('/webhooks/custom/pager', '{"b":2}', headers);
    expect([first.json.status, second.json.status]).toEqual(['accepted', 'accepted']);
  });
});
