/**
 * Records of requests that were never accepted (issue 23): a request that recorded its
 * event and died (or was answered 503) before queueing leaves a `queued` record no message
 * will finish. Once the ingest lease has passed it ends `abandoned` with the reason; a
 * later retry of the same delivery id still resumes and queues it.
 */
import { abandonStranded, ABANDONED_REASON } from '../../functions/core/ingest/abandoned';
import { DEDUP_TTL_SECONDS, DEFAULT_CLAIM_LEASE_MS } from '../../functions/core/ingest/service';
import type { EventRecord, QueueMessage } from '../../functions/core/types';
import { githubEvent } from '../support/requests';
import { GITHUB_SECRET, bodyOf, startHarness, type Harness } from '../support/ingest-harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const PR = JSON.stringify({ action: 'opened', number: 3, pull_request: { number: 3 }, repository: { full_name: 'o/r' } });

/** What a request leaves when it dies after writing its records, before queueing them. */
async function deadRequest(eventId: string, deliveryId: string, subscription: string): Promise<EventRecord> {
  const at = new Date(h.clock.now()).toISOString();
  const message: QueueMessage = { v: 1, event_id: eventId, subscription, source: 'github', event: 'pull_request', action: 'opened', delivery_id: deliveryId, received_at: at, payload: JSON.parse(PR) };
  const record: EventRecord = { event_id: eventId, subscription, status: 'queued', source: 'github', event: 'pull_request', action: 'opened', delivery_id: deliveryId, received_at: at, updated_at: at, message, attempts: 0 };
  await h.dedup.claim(`github#${deliveryId}`, { eventId, ttlSeconds: DEDUP_TTL_SECONDS, staleBefore: 0 });
  await h.events.putAll([record]);
  return record;
}

test('a stranded record ends abandoned after the lease; one whose message is queued, or a young one, is left alone', async () => {
  await h.addSubscription({ name: 'review', events: ['pull_request'] });
  await deadRequest('evt_stranded', 'd-stranded', 'review');
  await deadRequest('evt_in_queue', 'd-in-queue', 'review');
  const young = { receivedBefore: h.clock.now() - DEFAULT_CLAIM_LEASE_MS, now: new Date().toISOString(), queued: () => false };
  expect(await abandonStranded(h.events, h.subscriptions, young)).toEqual([]);

  h.clock.advance(DEFAULT_CLAIM_LEASE_MS + 1);
  const options = { receivedBefore: h.clock.now() - DEFAULT_CLAIM_LEASE_MS, now: new Date(h.clock.now()).toISOString(), queued: (id: string) => id === 'evt_in_queue' };
  const abandoned = await abandonStranded(h.events, h.subscriptions, options);
  expect(abandoned.map((r) => r.event_id)).toEqual(['evt_stranded']);
  expect(await h.events.get('evt_stranded', 'review')).toMatchObject({ status: 'abandoned', error: { code: 'abandoned', message: ABANDONED_REASON } });
  expect((await h.events.get('evt_in_queue', 'review'))?.status).toBe('queued');
  const listed = await h.events.listBySubscription('review', 10);
  expect(listed.find((r) => r.event_id === 'evt_stranded')?.status).toBe('abandoned');
});

test('the sender retrying later still gets the same event accepted and queued', async () => {
  h.queue.sent.length = 0;
  const retry = await h.handler(githubEvent('pull_request', PR, GITHUB_SECRET, { 'x-github-delivery': 'd-stranded' }));
  expect(retry.statusCode).toBe(202);
  expect(bodyOf(retry)).toMatchObject({ status: 'accepted', event_id: 'evt_stranded', subscriptions: ['review'] });
  expect(h.queue.sent.map((m) => m.event_id)).toEqual(['evt_stranded']);
  const record = await h.events.get('evt_stranded', 'review');
  expect(record?.status).toBe('queued');
  expect(record?.error).toBeUndefined();
});

test('the local queue names the events it holds, visible or in flight (what the sweep trusts)', async () => {
  const { tempStore } = await import('../support/local-store');
  const { SqliteQueue } = await import('../../functions/local/sqlite/queue');
  const t = tempStore();
  try {
    const queue = new SqliteQueue(t.store, { visibilityTimeoutMs: 60_000, maxReceiveCount: 5, clock: { now: () => Date.now() } });
    const message = (event_id: string): QueueMessage => ({ v: 1, event_id, subscription: 'review', source: 'github', event: 'push', delivery_id: event_id, received_at: new Date().toISOString() });
    await queue.send([message('evt_a'), message('evt_b')]);
    await queue.receive(1); // evt_a in flight: still held
    await queue.sendBodies(['not json']);
    expect([...(await queue.heldEvents())].sort()).toEqual(['evt_a\u0000review', 'evt_b\u0000review']);
  } finally {
    t.close();
  }
});

test('on AWS the dedup claims tell: a pending claim past the lease, or a released one, means never accepted; a committed one was queued', async () => {
  const { abandonUncommitted } = await import('../../functions/core/ingest/abandoned');
  await h.addSubscription({ name: 'aws-review', events: ['pull_request'] });
  const dead = await deadRequest('evt_aws_dead', 'd-aws-dead', 'aws-review');
  const answered503 = await deadRequest('evt_aws_503', 'd-aws-503', 'aws-review');
  await h.dedup.release('github#d-aws-503');
  const committed = await deadRequest('evt_aws_ok', 'd-aws-ok', 'aws-review');
  await h.dedup.commit('github#d-aws-ok');
  const options = () => ({ receivedBefore: h.clock.now() - DEFAULT_CLAIM_LEASE_MS, leaseMs: DEFAULT_CLAIM_LEASE_MS, now: h.clock.now() });
  expect(await abandonUncommitted(h.events, h.dedup, 'aws-review', options())).toEqual([]); // all within the lease

  h.clock.advance(DEFAULT_CLAIM_LEASE_MS + 1);
  const found = await abandonUncommitted(h.events, h.dedup, 'aws-review', options());
  expect(found.map((r) => r.event_id).sort()).toEqual([answered503.event_id, dead.event_id].sort());
  expect((await h.events.get(dead.event_id, 'aws-review'))?.status).toBe('abandoned');
  expect((await h.events.get(committed.event_id, 'aws-review'))?.status).toBe('queued');
});
