/**
 * `webhook delete` racing ingest that holds an event for a paused subscription (hunt 13):
 * ingest read the subscription (paused), `delete` ran (subscription removed, none of its
 * records held yet), then ingest wrote the record `held`. Its second read (the one that
 * covers a raced resume) must see the delete: the record ends `failed` as `delete` ends
 * held events, and the answer is not `202 held` for an event nothing will ever release.
 * The delete runs at a fixed point: inside ingest's first read of the subscriptions.
 * On the local SQLite store (as serve wires it) and on the DynamoDB adapters (dynalite,
 * wired as the ingest Lambda is).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDebounceStore } from '../../functions/aws/debounce-store';
import { DynamoDedupStore } from '../../functions/aws/dedup-store';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoLeaseStore } from '../../functions/aws/lease-store';
import { DynamoRequestLog } from '../../functions/aws/request-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { signHub } from '../../functions/core/auth/signatures';
import { createIngest, type IngestDeps, type InboundRequest } from '../../functions/core/ingest/service';
import { SubscriptionCache } from '../../functions/core/ingest/subscription-cache';
import { silentLogger } from '../../functions/core/log';
import type { EventLog, SubscriptionStore } from '../../functions/core/ports';
import { deleteSubscription } from '../../functions/core/subscriptions/held-settle';
import type { Subscription } from '../../functions/core/types';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { openLocalRuntime, type LocalRuntime } from '../../functions/local/compose';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { ManualClock, RecordingQueue } from '../support/recording-queue';

const CONFIG = { webhooks: { github: { secret: ['gh'] }, max_payload_size: 65536 } } as IngestDeps['config'];
const DELETED = (name: string) => `The subscription '${name}' was deleted while the event was held`;

const dirs: string[] = [];
const runtimes: LocalRuntime[] = [];
const dynamos: TestDynamo[] = [];
afterAll(async () => {
  for (const r of runtimes) await r.close();
  for (const d of dynamos) await d.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Store {
  /** Ingest as the store's process wires it, reading subscriptions through `cache`. */
  deps: (cache: SubscriptionCache) => IngestDeps;
  subscriptions: SubscriptionStore;
  events: EventLog;
  clock: ManualClock;
  /** Messages queued so far. */
  queued: () => Promise<number>;
}

async function localStore(): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-deleteheld13-ingest-'));
  dirs.push(dir);
  const clock = new ManualClock(Date.now());
  const r = await openLocalRuntime(dir, { role: 'serve', clock });
  runtimes.push(r);
  return {
    deps: (cache) => ({ ...r.ingestDeps(CONFIG, silentLogger), subscriptions: cache }),
    subscriptions: r.subscriptions, events: r.events, clock, queued: () => r.queue.size(),
  };
}

async function dynamoStore(): Promise<Store> {
  const dynamo = await startDynalite();
  dynamos.push(dynamo);
  const { client, tables } = dynamo;
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-deleteheld13-payloads-'));
  dirs.push(dir);
  const clock = new ManualClock(Date.now());
  const queue = new RecordingQueue();
  const subscriptions = new DynamoSubscriptionStore(client, tables.subscriptions);
  const events = new DynamoEventLog(client, tables.events);
  // As functions/aws/compose-ingest.ts wires it.
  const deps = (cache: SubscriptionCache): IngestDeps => ({
    config: CONFIG, subscriptions: cache, queue, events, clock, logger: silentLogger, payloads: new FilePayloadStore(dir),
    dedup: new DynamoDedupStore(client, tables.dedup, clock, tables.events),
    leases: new DynamoLeaseStore(client, tables.dedup, clock),
    requests: new DynamoRequestLog(client, tables.requests, clock, tables.dedup),
    debounce: new DynamoDebounceStore(client, tables.dedup, clock),
  });
  return { deps, subscriptions, events, clock, queued: async () => queue.sent.length };
}

let counter = 0;
const subscription = (name: string, fields: Partial<Subscription>): Subscription => ({
  name, events: [], skills: [], deliver: ['log'], state: 'active', agent: 'none', prompt: 'Event {n}',
  created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', secret: `whsec_${name}`, ...fields,
});

/** Subscriptions read through a cache whose first read runs `delete` on `gone` right after it read them (paused). */
function racing(store: Store, gone: string): { cache: SubscriptionCache; ended: () => number | undefined } {
  let ended: number | undefined;
  let reads = 0;
  const cache = new SubscriptionCache(store.subscriptions, 0, store.clock);
  const all = cache.all.bind(cache);
  cache.all = async () => {
    const list = await all();
    if (reads++ === 0) ended = await deleteSubscription(store, gone, new Date(store.clock.now()).toISOString());
    return list;
  };
  return { cache, ended: () => ended };
}

const custom = (name: string, n: number): InboundRequest => ({
  method: 'POST', path: `/webhooks/custom/${name}`, isBase64Encoded: false, sourceIp: '127.0.0.1', body: JSON.stringify({ n }),
  headers: { authorization: `Bearer whsec_${name}`, 'content-type': 'application/json', 'x-request-id': `r-${name}-${n}` },
});

const github = (delivery: string): InboundRequest => {
  const body = JSON.stringify({ action: 'opened', issue: { number: 1 } });
  return {
    method: 'POST', path: '/webhooks/github', isBase64Encoded: false, sourceIp: '127.0.0.1', body,
    headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': delivery, 'x-hub-signature-256': signHub(body, 'gh') },
  };
};

/** The records of `name` (its event ids from the event log's listing). */
const recordsOf = (store: Store, name: string) => store.events.listBySubscription(name, 100);

describe.each([
  ['the local SQLite store', localStore],
  ['DynamoDB (dynalite)', dynamoStore],
])('%s', (_label, open) => {
  test('custom endpoint: delete lands between ingest\'s read of the paused subscription and its held write: the event ends failed, answered 404 as an unknown subscription', async () => {
    const store = await open();
    const name = `c${++counter}`;
    await store.subscriptions.create(subscription(name, { state: 'paused' }));
    const race = racing(store, name);
    const answer = await createIngest(store.deps(race.cache))(custom(name, 1));
    // `delete` found nothing held yet: ingest's second read ends it.
    expect(race.ended()).toBe(0);
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ status: 'error', code: 'subscription_not_found', message: `No subscription named '${name}'` });
    const records = await recordsOf(store, name);
    expect(records.map((r) => [r.status, r.error])).toEqual([['failed', { code: 'subscription_not_found', message: DELETED(name) }]]);
    expect(await store.queued()).toBe(0);
  });

  test('GitHub: the deleted subscription\'s record ends failed; another subscription\'s is queued, and the answer names only it', async () => {
    const store = await open();
    const kept = `k${++counter}`;
    const gone = `g${counter}`;
    await store.subscriptions.create(subscription(kept, { events: ['issues'] }));
    await store.subscriptions.create(subscription(gone, { events: ['issues'], state: 'paused' }));
    const race = racing(store, gone);
    const answer = await createIngest(store.deps(race.cache))(github(`d-${kept}`));
    expect(race.ended()).toBe(0);
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ status: 'accepted', subscriptions: [kept] });
    expect(answer.body).not.toHaveProperty('held');
    expect((await recordsOf(store, gone)).map((r) => [r.status, r.error?.message])).toEqual([['failed', DELETED(gone)]]);
    expect((await recordsOf(store, kept)).map((r) => r.status)).toEqual(['queued']);
  });

  test('GitHub: only the deleted subscription matched: answered 200 ignored (Event not handled), its record failed', async () => {
    const store = await open();
    const gone = `o${++counter}`;
    await store.subscriptions.create(subscription(gone, { events: ['issues'], state: 'paused' }));
    const race = racing(store, gone);
    const answer = await createIngest(store.deps(race.cache))(github(`d-${gone}`));
    expect(race.ended()).toBe(0);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: 'ignored', reason: 'Event not handled', event: 'issues' });
    expect((await recordsOf(store, gone)).map((r) => r.status)).toEqual(['failed']);
  });
});
