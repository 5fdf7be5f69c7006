/**
 * On AWS, reads (`webhook events`, `webhook event`, the console) tell a record of a request
 * that died before its event was queued by its dedup claim (abandoned.ts): the key they
 * look the claim up by must be the one ingest claimed. For a custom endpoint that key
 * carries the subscription's `created_at` (a subscription created again under the name
 * claims its own delivery ids): a request killed between the claim and the queue send, for
 * such a subscription, ends `abandoned` past the lease, and the sender's retry still resumes
 * the same event. Over the DynamoDB adapters (dynalite), the kill as tests/support/crash.ts
 * makes one: every call after the claim fails.
 */
import { abandonUncommitted, ABANDONED_REASON } from '../../functions/core/ingest/abandoned';
import { createIngest, DEFAULT_CLAIM_LEASE_MS } from '../../functions/core/ingest/service';
import { SubscriptionCache } from '../../functions/core/ingest/subscription-cache';
import { silentLogger } from '../../functions/core/log';
import { toInboundRequest } from '../../functions/ingest/api-gateway';
import { callBudget, dyingAfter } from '../support/crash';
import { bodyOf, startHarness, type Harness } from '../support/ingest-harness';
import { apiEvent } from '../support/requests';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h.close());

test('a request killed after its claim, for a subscription created again under the name: abandoned past the lease, then resumed by the retry', async () => {
  await h.addSubscription({ name: 'pager', events: [] });
  await h.subscriptions.delete('pager');
  h.clock.advance(1_000);
  const pager = await h.addSubscription({ name: 'pager', events: [] });
  const request = apiEvent({
    path: '/webhooks/custom/pager', body: JSON.stringify({ incident: 7 }),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${pager.secret}`, 'x-request-id': 'incident-7' },
  });

  // One call goes through (the claim with the records, one transaction); the queue send and every cleanup after it fail.
  const budget = callBudget(1);
  const dying = createIngest({
    config: { webhooks: { max_payload_size: 64 * 1024 } }, clock: h.clock, logger: silentLogger, payloads: h.payloads,
    subscriptions: new SubscriptionCache(h.subscriptions, 0, h.clock),
    dedup: dyingAfter(h.dedup, budget), events: dyingAfter(h.events, budget), queue: dyingAfter(h.queue, budget),
  });
  expect(await dying(toInboundRequest(request))).toMatchObject({ status: 503, body: { code: 'unavailable' } });
  expect(budget.killed).toBe(true);
  const [stranded] = await h.events.listByStatus('pager', 'queued');
  expect(stranded).toMatchObject({ delivery_id: 'incident-7', message: { subscription_created_at: pager.created_at } });

  const check = () => ({ receivedBefore: h.clock.now() - DEFAULT_CLAIM_LEASE_MS, leaseMs: DEFAULT_CLAIM_LEASE_MS, now: h.clock.now() });
  expect(await abandonUncommitted(h.events, h.dedup, 'pager', check())).toEqual([]); // within the lease: may still be running
  h.clock.advance(DEFAULT_CLAIM_LEASE_MS + 1);
  expect((await abandonUncommitted(h.events, h.dedup, 'pager', check())).map((r) => r.event_id)).toEqual([stranded!.event_id]);
  expect(await h.events.get(stranded!.event_id, 'pager')).toMatchObject({ status: 'abandoned', error: { code: 'abandoned', message: ABANDONED_REASON } });

  h.queue.sent.length = 0;
  expect(bodyOf(await h.handler(request))).toMatchObject({ status: 'accepted', event_id: stranded!.event_id, subscriptions: ['pager'] });
  expect(h.queue.sent.map((m) => m.event_id)).toEqual([stranded!.event_id]);
  expect(bodyOf(await h.handler(request))).toEqual({ status: 'duplicate', delivery_id: 'incident-7' });
});
