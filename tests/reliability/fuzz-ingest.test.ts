/**
 * Fuzzing the ingest handler (fast-check): random and mutated methods, paths, headers,
 * bodies, encodings and lengths. Whatever arrives: no 5xx except an injected
 * "unavailable" (503), never 2xx without valid authentication, and the answer is always
 * JSON with a `status`.
 */
import fc from 'fast-check';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { parseConfig, resolveConfig } from '../../functions/core/config/load';
import { signHub, signStandardWebhooks } from '../../functions/core/auth/signatures';
import { SubscriptionCache } from '../../functions/core/ingest/subscription-cache';
import { createIngest } from '../../functions/core/ingest/service';
import { silentLogger } from '../../functions/core/log';
import { systemClock } from '../../functions/core/ports';
import { apiGatewayHandler } from '../../functions/ingest/api-gateway';
import { MemoryDedupStore, MemoryEventLog, MemoryPayloadStore, MemoryQueue, MemorySubscriptionStore } from '../support/memory';
import { apiEvent } from '../support/requests';
import { Tally } from './tally';
import type { EventQueue } from '../../functions/core/ports';
import type { QueueMessage } from '../../functions/core/types';

const GH = 'fuzz-github-secret';
const GL = 'fuzz-gitlab-secret';
const CUSTOM = 'whsec_ZnV6ei1jdXN0b20tc2VjcmV0LTMyLWJ5dGVzLWxvbmc=';

let handler: ReturnType<typeof apiGatewayHandler>;
const tally = new Tally('fuzz');
/** A queue whose sends fail while `refusing` is set: the injected outage. */
let refusing = false;
class FlakyQueue implements EventQueue {
  readonly inner = new MemoryQueue();
  async send(messages: QueueMessage[]): Promise<void> {
    if (refusing) throw Object.assign(new Error('queue refused the send'), { name: 'ServiceUnavailable' });
    await this.inner.send(messages);
  }
}

beforeAll(async () => {
  const parsed = parseConfig('webhooks: { github: { secret: ${GH} }, gitlab: { secret: ${GL} }, max_payload_size: 4KB }');
  if (!parsed.ok) throw new Error(parsed.error.message);
  const resolved = await resolveConfig(parsed.value, { get: async (n) => ({ GH, GL })[n] });
  if (!resolved.ok) throw new Error(resolved.error.message);
  const store = new MemorySubscriptionStore();
  await store.create({ name: 'alerts', events: ['*'], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: CUSTOM });
  const ingest = createIngest({
    config: resolved.value, subscriptions: new SubscriptionCache(store, 0, systemClock), queue: new FlakyQueue(),
    dedup: new MemoryDedupStore(systemClock), events: new MemoryEventLog(), payloads: new MemoryPayloadStore(), clock: systemClock, logger: silentLogger,
  });
  handler = apiGatewayHandler(async () => ingest, silentLogger);
});

afterAll(() => tally.flush());

const paths = fc.oneof(
  fc.constantFrom('/webhooks/github', '/webhooks/gitlab', '/webhooks/custom/alerts', '/webhooks/custom/nope', '/health', '/', '/webhooks/custom/', '/webhooks/custom/%ZZ', '/webhooks/github/../gitlab'),
  fc.string({ maxLength: 60 }).map((s) => `/${s}`),
);
const headerNames = fc.constantFrom(
  'x-github-event', 'x-hub-signature-256', 'x-github-delivery', 'x-gitlab-token', 'x-gitlab-event', 'idempotency-key',
  'webhook-id', 'webhook-timestamp', 'webhook-signature', 'authorization', 'content-length', 'x-event-type', 'x-forwarded-for',
  'x-pagerduty-signature', 'x-grafana-alerting-signature', 'content-type',
);
const headerValues = fc.oneof(fc.string({ maxLength: 80 }), fc.constantFrom('sha256=', 'Bearer ', 'Basic ', 'v1,', '-1', '99999999999', 'push', 'ping'), fc.string({ maxLength: 9000 }));
const bodies = fc.oneof(
  fc.uint8Array({ maxLength: 6000 }).map((a) => Buffer.from(a)),
  fc.json({ maxDepth: 6 }).map((j) => Buffer.from(j)),
  fc.object().map((o) => Buffer.from(JSON.stringify(o))),
  fc.string({ unit: 'binary', maxLength: 500 }).map((s) => Buffer.from(s)),
);

function check(result: { statusCode?: number; body?: string }, authenticated: boolean): void {
  tally.add(1, 0);
  try {
    if (refusing && result.statusCode === 503) expect(JSON.parse(result.body ?? '')).toMatchObject({ status: 'error', code: 'unavailable' });
    else expect(result.statusCode).toBeLessThan(500);
    const body = JSON.parse(result.body ?? '') as { status?: unknown };
    expect(typeof body.status).toBe('string');
    if (!authenticated && result.statusCode !== undefined && result.statusCode >= 200 && result.statusCode < 300) {
      // Only answers that accept nothing may be 2xx without authentication.
      expect(['ok']).toContain(body.status);
    }
  } catch (error) {
    tally.add(0, 1);
    throw error;
  }
}

test('random requests: no 5xx, JSON with a status, nothing accepted without authentication', async () => {
  await fc.assert(fc.asyncProperty(
    fc.constantFrom('POST', 'GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'), paths,
    fc.dictionary(headerNames, headerValues, { maxKeys: 8 }), bodies, fc.boolean(),
    async (method, path, headers, body, base64) => {
      const event: APIGatewayProxyEventV2 = apiEvent({ method, path, headers, body, base64 });
      check(await handler(event), false);
    },
  ), { numRuns: 600 });
});

test('validly signed requests, then mutated: a mutation never gets through as accepted', async () => {
  await fc.assert(fc.asyncProperty(
    fc.object({ maxDepth: 3 }), fc.constantFrom('github', 'gitlab', 'standard', 'hub-custom', 'bearer'),
    fc.nat({ max: 200 }), fc.integer({ min: 0, max: 255 }),
    async (payload, scheme, position, byte) => {
      const body = JSON.stringify(payload);
      const now = Math.floor(Date.now() / 1000);
      const headers: Record<string, string> = {
        github: { 'x-github-event': 'push', 'x-hub-signature-256': signHub(body, GH) },
        gitlab: { 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': GL },
        standard: { 'webhook-id': 'id', 'webhook-timestamp': String(now), 'webhook-signature': signStandardWebhooks(body, CUSTOM, 'id', now) },
        'hub-custom': { 'x-hub-signature-256': signHub(body, CUSTOM) },
        bearer: { authorization: `Bearer ${CUSTOM}` },
      }[scheme] as Record<string, string>;
      const path = scheme === 'github' ? '/webhooks/github' : scheme === 'gitlab' ? '/webhooks/gitlab' : '/webhooks/custom/alerts';
      const valid = await handler(apiEvent({ path, headers, body }));
      check(valid, true);
      expect([200, 202]).toContain(valid.statusCode);
      // Mutate one byte of the body: only token schemes (which do not sign the body) may still pass.
      const raw = Buffer.from(body);
      const at = position % raw.length;
      if (raw[at] === byte) return;
      raw[at] = byte;
      const mutated = await handler(apiEvent({ path, headers, body: raw, base64: true }));
      check(mutated, scheme === 'gitlab' || scheme === 'bearer');
      if (scheme !== 'gitlab' && scheme !== 'bearer') expect(mutated.statusCode).toBe(401);
    },
  ), { numRuns: 400 });
});

test('with the queue refusing sends: valid events get 503 unavailable (never 500), the rest their usual answer', async () => {
  let delivery = 0;
  await fc.assert(fc.asyncProperty(
    fc.object({ maxDepth: 2 }), fc.boolean(), fc.boolean(),
    async (payload, signed, outage) => {
      refusing = outage;
      try {
        const body = JSON.stringify(payload);
        const headers = { 'x-github-event': 'push', 'x-github-delivery': `fz-${delivery++}`, 'x-hub-signature-256': signed ? signHub(body, GH) : 'sha256=00' };
        const result = await handler(apiEvent({ path: '/webhooks/github', headers, body }));
        check(result, signed);
        if (!signed) expect(result.statusCode).toBe(401);
        else if (outage) expect(result.statusCode).toBe(503);
        else expect(result.statusCode).toBe(202);
      } finally {
        refusing = false;
      }
    },
  ), { numRuns: 300 });
});
