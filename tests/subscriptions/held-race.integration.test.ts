/**
 * Issue 14 item 4: every event answered `held` is released by a resume, whatever the
 * interleaving of the ingest request and the resume, and with ingest's 5 s subscription
 * cache (AWS). Requests go through the ingest use case as the Lambda and `serve` call it;
 * stores are the DynamoDB adapters on dynalite; steps are ordered with gates, not sleeps.
 */
import { DynamoDedupStore } from '../../functions/aws/dedup-store';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoLeaseStore } from '../../functions/aws/lease-store';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { SubscriptionCache } from '../../functions/core/ingest/subscription-cache';
import { createIngest, type InboundRequest } from '../../functions/core/ingest/service';
import { silentLogger } from '../../functions/core/log';
import type { EventLog, SubscriptionStore } from '../../functions/core/ports';
import { pauseSubscription, resumeSubscription, type LifecycleDeps } from '../../functions/core/subscriptions/lifecycle';
import type { EventRecord } from '../../functions/core/types';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { ManualClock, RecordingQueue } from '../support/recording-queue';
import { eventually } from '../support/serve';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let dynamo: TestDynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => dynamo.close());

/** A gate a test opens by hand; `reached` once something waits at it. */
function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  const state = { armed: true, reached: false, open, wait: async () => {
    state.reached = true;
    await opened;
  } };
  return state;
}

let counter = 0;
async function setup(cacheMs = 0) {
  counter += 1;
  const name = `held${counter}`;
  const clock = new ManualClock(Date.now());
  const store = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  const leases = new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, clock);
  const queue = new RecordingQueue();
  const secret = 'race-secret';
  await store.create({ name, events: [], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret });
  const lifecycle: LifecycleDeps = { subscriptions: store, events, queue, clock, leases };
  const heldWrite = { current: undefined as ReturnType<typeof gate> | undefined };
  const freshRead = { current: undefined as ReturnType<typeof gate> | undefined };
  // Ingest's view of the stores, with gates at the two steps that race a resume.
  const gatedEvents: EventLog = Object.assign(Object.create(events) as EventLog, {
    putAll: async (records: EventRecord[]) => {
      const g = heldWrite.current;
      if (g?.armed && records.some((r) => r.status === 'held')) {
        g.armed = false;
        await g.wait();
      }
      return events.putAll(records);
    },
  });
  const gatedStore: SubscriptionStore = Object.assign(Object.create(store) as SubscriptionStore, {
    get: async (n: string) => {
      const g = freshRead.current;
      if (g?.armed) {
        g.armed = false;
        await g.wait();
      }
      return store.get(n);
    },
  });
  const ingest = createIngest({
    config: { webhooks: { max_payload_size: 1024 * 1024 } }, queue, events: gatedEvents, clock, logger: silentLogger,
    subscriptions: new SubscriptionCache(gatedStore, cacheMs, clock),
    dedup: new DynamoDedupStore(dynamo.client, dynamo.tables.dedup, clock),
    payloads: new FilePayloadStore(join(mkdtempSync(join(tmpdir(), 'hookagent-race-')), 'payloads')), leases,
  });
  const post = async (i: number) => {
    const request: InboundRequest = {
      method: 'POST', path: `/webhooks/custom/${name}`, isBase64Encoded: false, sourceIp: '127.0.0.1',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'x-request-id': `${name}-${i}` }, body: JSON.stringify({ n: i }),
    };
    const reply = await ingest(request);
    return { status: reply.status, body: reply.body as { status: string; event_id: string } };
  };
  const sentFor = (eventId: string) => queue.sent.filter((m) => m.event_id === eventId).length;
  return { name, clock, store, events, queue, lifecycle, post, heldWrite, freshRead, sentFor };
}

test('(a) the held record is written after resume released: it is released anyway, once', async () => {
  const t = await setup();
  await pauseSubscription(t.lifecycle, t.name);
  t.heldWrite.current = gate();
  const answer = t.post(1);
  // The request read the subscription as paused and is about to write `held`; resume runs now.
  await eventually(() => t.heldWrite.current!.reached, 'ingest at its held write');
  expect(await resumeSubscription(t.lifecycle, t.name)).toEqual({ kind: 'resumed', released: 0 });
  t.heldWrite.current.open();
  const reply = await answer;
  expect(reply.status).toBe(202);
  expect(await t.events.listByStatus(t.name, 'held')).toEqual([]);
  expect(t.sentFor(reply.body.event_id)).toBe(1);
  expect((await t.events.get(reply.body.event_id, t.name))?.status).toBe('queued');
});

test('(a) both resume and ingest see the held record: it is queued exactly once', async () => {
  const t = await setup();
  await pauseSubscription(t.lifecycle, t.name);
  t.freshRead.current = gate();
  const answer = t.post(1);
  // Held record written; ingest is about to re-read the subscription. Resume finds and releases the record first.
  await eventually(() => t.freshRead.current!.reached, 'ingest at its second read');
  expect(await resumeSubscription(t.lifecycle, t.name)).toEqual({ kind: 'resumed', released: 1 });
  t.freshRead.current.open();
  const reply = await answer;
  expect(reply.body.status).toBe('accepted');
  expect(t.sentFor(reply.body.event_id)).toBe(1);
  expect(await t.events.listByStatus(t.name, 'held')).toEqual([]);
});

test('(b) ingest caches subscriptions for 5 s: an event held from a stale cache after resume is released', async () => {
  const t = await setup(5_000);
  await pauseSubscription(t.lifecycle, t.name);
  const first = await t.post(1);
  expect(first.body.status).toBe('held');
  expect(await resumeSubscription(t.lifecycle, t.name)).toEqual({ kind: 'resumed', released: 1 });
  // Within the cache's 5 s the request still sees "paused".
  t.clock.advance(1_000);
  const second = await t.post(2);
  expect(second.status).toBe(202);
  expect(await t.events.listByStatus(t.name, 'held')).toEqual([]);
  expect(t.sentFor(first.body.event_id)).toBe(1);
  expect(t.sentFor(second.body.event_id)).toBe(1);
});

test('a paused subscription still holds its events, and resume releases them in arrival order', async () => {
  const t = await setup();
  await pauseSubscription(t.lifecycle, t.name);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const reply = await t.post(i);
    expect(reply.body.status).toBe('held');
    ids.push(reply.body.event_id);
    t.clock.advance(1);
  }
  expect(t.queue.sent).toEqual([]);
  expect(await resumeSubscription(t.lifecycle, t.name)).toEqual({ kind: 'resumed', released: 3 });
  expect(t.queue.sent.map((m) => m.event_id)).toEqual(ids);
  expect(await resumeSubscription(t.lifecycle, t.name)).toEqual({ kind: 'unchanged' });
});
