/**
 * The console's event list answers for the whole event log, on both stores (SQLite for
 * real, DynamoDB through dynalite), over HTTP on 127.0.0.1:
 * - events of a deleted subscription are listed (and marked), not hidden;
 * - the filters (status, endpoint, since, q) search the whole log, not each subscription's
 *   newest 500 records;
 * - `next` continues the list exactly (no record twice, none skipped, ties included), and a
 *   search that stops at its read bound says how far it got and continues from there;
 * - the 24 h chart counts every event, a deleted subscription's too.
 */
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { systemClock, type EventLog, type EventQueue, type SubscriptionStore } from '../../functions/core/ports';
import { deleteSubscription } from '../../functions/core/subscriptions/held-settle';
import type { EventRecord, Subscription } from '../../functions/core/types';
import { openLocalRuntime } from '../../functions/local/compose';
import type { ConsoleSources } from '../../cli/console/data';
import { createConsoleHandler, type ConsoleOptions } from '../../cli/console/handler';
import { listenConsole } from '../../cli/console/command';
import { startDynalite } from '../support/dynalite';
import { MemoryEventLog, MemorySubscriptionStore } from '../support/memory';
import { record } from './fixture';

interface Listed { event_id: string; subscription: string; received_at: string; status: string; subscription_deleted?: boolean }
interface ListAnswer { events: Listed[]; next: string | null; searched?: { examined: number; until: string | null; note: string } | null; note?: string | null }

interface Store {
  subscriptions: SubscriptionStore;
  events: EventLog;
  /** The event log as another console process would open it (DynamoDB: its own scan state). */
  freshEvents(): EventLog;
  close(): Promise<void>;
}

/** Unused by the list: replay is not exercised here. */
const noQueue: EventQueue = { send: async () => { throw new Error('not used by these tests'); } };

const sub = (name: string, createdAt = '2026-11-01T10:00:00.000Z'): Subscription => ({
  name, events: [], skills: [], deliver: ['log'], state: 'active', secret: `whsec_${name}-secret-0123456789abcdef`, created_at: createdAt, updated_at: createdAt,
});

async function sqliteStore(): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-console-list-'));
  const runtime = await openLocalRuntime(join(dir, 'data'), { role: 'serve', clock: systemClock, visibilityTimeoutMs: 60_000 });
  return { subscriptions: runtime.subscriptions, events: runtime.events, freshEvents: () => runtime.events, close: () => runtime.close() };
}

async function dynamoStore(): Promise<Store> {
  const dynamo = await startDynalite('prod');
  return {
    subscriptions: new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions),
    events: new DynamoEventLog(dynamo.client, dynamo.tables.events),
    freshEvents: () => new DynamoEventLog(dynamo.client, dynamo.tables.events, { namesScanItems: 5 }),
    close: () => dynamo.close(),
  };
}

interface Served { url: string; close(): Promise<void> }
async function serveConsole(store: Store, options: ConsoleOptions = {}, events = store.events): Promise<Served> {
  const sources: ConsoleSources = { subscriptions: store.subscriptions, events, queue: noQueue, publicUrl: '', where: 'test store' };
  const handler = createConsoleHandler(sources, options);
  const server: Server = createServer((req, res) => void handler(req, res).then((handled) => { if (!handled) res.writeHead(404).end(); }));
  const url = (await listenConsole(server, 0, '127.0.0.1')).replace(/\/console$/, '');
  return { url, close: async () => { server.closeAllConnections(); await new Promise<void>((resolve) => server.close(() => resolve())); } };
}

/** Today's answer was a bare array: read both shapes, so the tests below fail on what the list holds. */
async function list(base: string, query = ''): Promise<ListAnswer> {
  const response = await fetch(`${base}/console/api/events${query ? `?${query}` : ''}`);
  const body = (await response.json()) as unknown;
  if (!response.ok) throw new Error(`HTTP ${response.status}: ${JSON.stringify(body)}`);
  return Array.isArray(body) ? { events: body as Listed[], next: null } : (body as ListAnswer);
}

/** Every page from `query`, following `next`. */
async function everyPage(base: string, query: string): Promise<{ events: Listed[]; answers: ListAnswer[] }> {
  const answers: ListAnswer[] = [];
  let next: string | null = null;
  do {
    const answer = await list(base, `${query}${next ? `&cursor=${encodeURIComponent(next)}` : ''}`);
    answers.push(answer);
    next = answer.next;
    if (answers.length > 200) throw new Error('the cursor does not end');
  } while (next);
  return { events: answers.flatMap((a) => a.events), answers };
}

const keyOf = (r: { event_id: string; subscription: string }) => `${r.event_id}/${r.subscription}`;
const newestFirst = (a: Listed, b: Listed) => (a.received_at !== b.received_at ? (a.received_at < b.received_at ? 1 : -1) : a.event_id !== b.event_id ? (a.event_id < b.event_id ? 1 : -1) : a.subscription < b.subscription ? 1 : -1);

describe.each([['SQLite', sqliteStore], ['DynamoDB (dynalite)', dynamoStore]] as const)('the console list over %s', (_name, open) => {
  let store: Store;
  let served: Served;
  let seeded: EventRecord[];
  let gone: EventRecord[];
  let oldFailed: EventRecord;
  const now = Date.now();
  const hour = 3600_000;

  beforeAll(async () => {
    store = await open();
    for (const name of ['pr-review', 'alerts', 'gone']) await store.subscriptions.create(sub(name));
    gone = [0, 1, 2].map((i) => record('gone', now - 3 * hour + i * 60_000, 'delivered', i === 1 ? { delivery_id: 'd-gone-needle' } : {}));
    oldFailed = record('pr-review', now - 30 * hour, 'failed', { delivery_id: 'needle-old-7781', error: { code: 'delivery_failed', message: 'gone' } });
    // More than the 500 newest per subscription the list used to read, all newer than oldFailed.
    const many = Array.from({ length: 520 }, (_, i) => record('pr-review', now - 20 * hour + i * 60_000, 'delivered'));
    const alerts = Array.from({ length: 5 }, (_, i) => record('alerts', now - hour + i * 60_000, 'suppressed'));
    // One event for two subscriptions: the same id and time, two records (a tie the cursor must keep).
    const shared = record('pr-review', now - 2 * hour, 'delivered');
    const sharedAlerts: EventRecord = { ...shared, subscription: 'alerts', status: 'suppressed', source: 'custom', message: { ...shared.message, subscription: 'alerts' } };
    seeded = [...gone, oldFailed, ...many, ...alerts, shared, sharedAlerts];
    await store.events.putAll(seeded);
    await deleteSubscription({ subscriptions: store.subscriptions, events: store.events }, 'gone', new Date().toISOString());
    served = await serveConsole(store);
  }, 120_000);
  afterAll(async () => {
    await served?.close();
    await store?.close();
  });

  test("a deleted subscription's events are listed, marked deleted", async () => {
    const answer = await list(served.url);
    const listed = answer.events.filter((e) => e.subscription === 'gone');
    expect(listed.map(keyOf).sort()).toEqual(gone.map(keyOf).sort());
    expect(listed.every((e) => e.subscription_deleted === true)).toBe(true);
    expect(answer.events.find((e) => e.subscription === 'pr-review')?.subscription_deleted).toBe(false);
    expect((await list(served.url, 'subscription=gone')).events.map(keyOf).sort()).toEqual(gone.map(keyOf).sort());
    expect((await list(served.url, 'q=d-gone-needle')).events.map(keyOf)).toEqual([keyOf(gone[1]!)]);
  });

  test('filters search the whole log: an event older than the newest 500 of its subscription is found', async () => {
    expect((await list(served.url, 'status=failed')).events.map(keyOf)).toContain(keyOf(oldFailed));
    expect((await list(served.url, 'q=NEEDLE-OLD')).events.map(keyOf)).toEqual([keyOf(oldFailed)]);
    expect((await list(served.url, 'subscription=pr-review&status=failed')).events.map(keyOf)).toEqual([keyOf(oldFailed)]);
    expect((await list(served.url, 'endpoint=github&q=needle-old')).events.map(keyOf)).toEqual([keyOf(oldFailed)]);
    expect((await list(served.url, 'endpoint=custom/alerts&status=failed')).events).toEqual([]);
    const since = now - 25 * hour;
    expect((await list(served.url, `since=${since}&q=needle-old`)).events).toEqual([]);
  });

  test('next continues the list exactly: every record once, newest first, ties included', async () => {
    const { events, answers } = await everyPage(served.url, 'limit=50');
    expect(answers.length).toBeGreaterThan(10);
    expect(new Set(events.map(keyOf)).size).toBe(events.length);
    expect(events.map(keyOf).sort()).toEqual(seeded.map(keyOf).sort());
    expect(events.map(keyOf)).toEqual([...events].sort(newestFirst).map(keyOf));
    // A filtered list pages the same way.
    const delivered = await everyPage(served.url, 'limit=100&status=delivered&subscription=pr-review');
    expect(delivered.events.map(keyOf).sort()).toEqual(seeded.filter((r) => r.subscription === 'pr-review' && r.status === 'delivered').map(keyOf).sort());
  });

  test('a search that stops at its read bound says how far it searched, and next continues it', async () => {
    const bounded = await serveConsole(store, { searchBudget: 60 });
    try {
      const first = await list(bounded.url, 'q=needle-old');
      expect(first.events).toEqual([]);
      expect(first.next).toEqual(expect.any(String));
      expect(first.searched).toMatchObject({ examined: expect.any(Number), until: expect.any(String), note: expect.stringContaining('Searched') });
      const { events } = await everyPage(bounded.url, 'q=needle-old');
      expect(events.map(keyOf)).toEqual([keyOf(oldFailed)]);
    } finally {
      await bounded.close();
    }
  });

  test('a small read bound still pages through everything exactly, over several subscriptions', async () => {
    const bounded = await serveConsole(store, { searchBudget: 37 });
    try {
      for (const status of ['delivered', 'suppressed', '']) {
        const { events, answers } = await everyPage(bounded.url, `limit=30${status ? `&status=${status}` : ''}`);
        // Rare matches (suppressed: 6 of 531) stop at the bound many times on the way.
        if (status === 'suppressed') expect(answers.filter((a) => a.searched).length).toBeGreaterThan(5);
        expect(new Set(events.map(keyOf)).size).toBe(events.length);
        expect(events.map(keyOf).sort()).toEqual(seeded.filter((r) => !status || r.status === status).map(keyOf).sort());
        expect(events.map(keyOf)).toEqual([...events].sort(newestFirst).map(keyOf));
      }
    } finally {
      await bounded.close();
    }
  }, 60_000);

  test('with a time bound and one record a walk per call, paging still moves on', async () => {
    const tiny = await serveConsole(store, { searchBudget: 3 });
    try {
      const since = now - 4 * hour;
      const { events } = await everyPage(tiny.url, `limit=4&since=${since}`);
      expect(events.map(keyOf).sort()).toEqual(seeded.filter((r) => Date.parse(r.received_at) >= since).map(keyOf).sort());
      expect(events.map(keyOf)).toEqual([...events].sort(newestFirst).map(keyOf));
    } finally {
      await tiny.close();
    }
  }, 60_000);

  test("the chart counts every event of the last 24 h, a deleted subscription's too", async () => {
    const buckets = (await (await fetch(`${served.url}/console/api/chart`)).json()) as Array<Record<string, number>>;
    const total = buckets.reduce((n, b) => n + b.delivered! + b.suppressed! + b.failed! + b.other!, 0);
    expect(total).toBe(seeded.filter((r) => r !== oldFailed).length);
  });

  test('a malformed cursor is answered 400 with what to pass instead', async () => {
    for (const cursor of ['not-a-cursor', Buffer.from('["x"]').toString('base64url'), Buffer.from('{"a":1}').toString('base64url')]) {
      const response = await fetch(`${served.url}/console/api/events?cursor=${cursor}`);
      expect([cursor, response.status]).toEqual([cursor, 400]);
      expect(((await response.json()) as { message: string }).message).toMatch(/cursor.*'next'/);
    }
    // A time past what a Date holds is the caller's mistake too, not a 500.
    expect((await fetch(`${served.url}/console/api/events?since=99999999999999999`)).status).toBe(400);
  });

  test('a subscription created again under the name: the earlier one\'s events stay marked deleted', async () => {
    await store.subscriptions.create(sub('gone', new Date(now - 60_000).toISOString()));
    try {
      const fresh = record('gone', now - 30_000, 'queued');
      fresh.message = { ...fresh.message, subscription_created_at: new Date(now - 60_000).toISOString() };
      await store.events.putAll([fresh]);
      const listed = (await list(served.url, 'subscription=gone')).events;
      expect(listed.find((e) => e.event_id === fresh.event_id)?.subscription_deleted).toBe(false);
      expect(listed.filter((e) => e.event_id !== fresh.event_id).map((e) => e.subscription_deleted)).toEqual([true, true, true]);
      await store.events.deleteAll([fresh]);
    } finally {
      await store.subscriptions.delete('gone');
    }
  });

  if (open === dynamoStore) {
    test('DynamoDB: until its scan for deleted subscriptions has read the whole log, the answer says so', async () => {
      const events = store.freshEvents();
      const slow = await serveConsole(store, {}, events);
      try {
        const first = await list(slow.url);
        expect(first.note).toMatch(/deleted subscriptions/);
        let answer = first;
        for (let i = 0; i < 400 && answer.note; i += 1) answer = await list(slow.url);
        expect(answer.note ?? null).toBeNull();
        expect(answer.events.filter((e) => e.subscription === 'gone').map(keyOf).sort()).toEqual(gone.map(keyOf).sort());
      } finally {
        await slow.close();
      }
    }, 60_000);
  }
});

test('an event log without the search methods (the in-memory one): every record once, and the answer says deleted subscriptions are not listed', async () => {
  const events = new MemoryEventLog();
  const subscriptions = new MemorySubscriptionStore();
  await subscriptions.create(sub('a'));
  await subscriptions.create(sub('b'));
  const base = Date.now() - 3600_000;
  const records = Array.from({ length: 40 }, (_, i) => record(i % 2 ? 'a' : 'b', base + Math.floor(i / 3) * 1000, i % 5 ? 'delivered' : 'failed'));
  await events.putAll(records);
  const served = await serveConsole({ subscriptions, events, freshEvents: () => events, close: async () => {} }, { searchBudget: 9 });
  try {
    const { events: listed, answers } = await everyPage(served.url, 'limit=7');
    expect(listed.map(keyOf).sort()).toEqual(records.map(keyOf).sort());
    expect(listed.map(keyOf)).toEqual([...listed].sort(newestFirst).map(keyOf));
    expect(answers[0]!.note).toMatch(/cannot list the names of deleted subscriptions/);
    expect((await everyPage(served.url, 'limit=4&status=failed')).events.map(keyOf).sort()).toEqual(records.filter((r) => r.status === 'failed').map(keyOf).sort());
  } finally {
    await served.close();
  }
});
