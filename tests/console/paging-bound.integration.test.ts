/**
 * "Older" / "Search older" after a search that stopped at its read bound (hunt 8 D1): the
 * `next` it answers must not be past records of a subscription whose walk ran out of what it
 * had read while the page was being filled. Over HTTP as the page pages (status filter,
 * following `next`), on SQLite and on DynamoDB (dynalite); then the merge itself over many
 * seeded logs, read bounds and page sizes, against the order every record sorts in.
 */
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { systemClock, type EventLog, type EventQueue, type SubscriptionStore } from '../../functions/core/ports';
import type { EventRecord, EventStatus, Subscription } from '../../functions/core/types';
import { openLocalRuntime } from '../../functions/local/compose';
import { searchLog, type Position } from '../../cli/console/event-list';
import { createConsoleHandler, type ConsoleOptions } from '../../cli/console/handler';
import { listenConsole } from '../../cli/console/command';
import { startDynalite } from '../support/dynalite';
import { MemoryEventLog } from '../support/memory';
import { record } from './fixture';

interface Store { subscriptions: SubscriptionStore; events: EventLog; close(): Promise<void> }
interface Listed { event_id: string; subscription: string; received_at: string }

const noQueue: EventQueue = { send: async () => { throw new Error('not used by these tests'); } };

const sub = (name: string): Subscription => ({
  name, events: [], skills: [], deliver: ['log'], state: 'active', secret: `whsec_${name.padEnd(40, 'x')}`,
  created_at: '2026-11-01T10:00:00.000Z', updated_at: '2026-11-01T10:00:00.000Z',
});

async function sqliteStore(): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-console-bound-'));
  const runtime = await openLocalRuntime(join(dir, 'data'), { role: 'serve', clock: systemClock, visibilityTimeoutMs: 60_000 });
  return { subscriptions: runtime.subscriptions, events: runtime.events, close: () => runtime.close() };
}

async function dynamoStore(): Promise<Store> {
  const dynamo = await startDynalite('prod');
  return {
    subscriptions: new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions),
    events: new DynamoEventLog(dynamo.client, dynamo.tables.events), close: () => dynamo.close(),
  };
}

/** Pages `query` from the console's API as the page does, following `next`; every record listed. */
async function everyPage(store: Store, query: string, options: ConsoleOptions = {}): Promise<string[]> {
  const handler = createConsoleHandler({ subscriptions: store.subscriptions, events: store.events, queue: noQueue, publicUrl: '', where: 'test store' }, options);
  const server: Server = createServer((req, res) => void handler(req, res).then((handled) => { if (!handled) res.writeHead(404).end(); }));
  const base = (await listenConsole(server, 0, '127.0.0.1')).replace(/\/console$/, '');
  try {
    const shown: string[] = [];
    let next: string | null = null;
    let pages = 0;
    do {
      const response = await fetch(`${base}/console/api/events?${query}${next ? `&cursor=${next}` : ''}`);
      const page = (await response.json()) as { events: Listed[]; next: string | null };
      if (!response.ok) throw new Error(`HTTP ${response.status}: ${JSON.stringify(page)}`);
      shown.push(...page.events.map(key));
      next = page.next;
      if (++pages > 1000) throw new Error('the cursor does not end');
    } while (next);
    return shown;
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const key = (r: { received_at: string; event_id: string; subscription: string }) => `${r.received_at} ${r.event_id} ${r.subscription}`;

/**
 * A burst of failures in one subscription (its walk reads part of it, then runs empty while
 * the page fills), a busy subscription that never matches, and one with a few failures
 * older than the burst's first part. `n` scales the counts; `sameTime` gives the burst and
 * the busy records equal times (ties broken by id and name).
 */
function burst(now: number, n: number, sameTime = false): EventRecord[] {
  const s = 1000;
  const at = (t: number, offset: number) => now - t * s - (sameTime ? 0 : offset);
  const records: EventRecord[] = [];
  const put = (name: string, ms: number, status: EventStatus) => records.push(record(name, ms, status));
  for (let t = 1; t <= 60 * n; t++) put('chat-alerts', at(t, 0), 'failed');
  for (let t = 1; t <= 1000 * n; t++) put('busy', at(t, 500), 'delivered');
  for (let t = 30 * n; t < 32 * n; t++) put('nightly', at(t, 250), 'failed');
  for (let t = 40 * n; t < 440 * n; t++) put('nightly', at(t, 250), 'delivered');
  return records;
}

async function seeded(open: () => Promise<Store>, records: EventRecord[]): Promise<Store> {
  const store = await open();
  for (const name of ['chat-alerts', 'busy', 'nightly']) await store.subscriptions.create(sub(name));
  await store.events.putAll(records);
  return store;
}

/** The failed records, in the list's order (newest first, ties by id then name). */
const failedInOrder = (records: EventRecord[]) => records.filter((r) => r.status === 'failed').map(key).sort().reverse();

test('status=failed paged through the whole log at the default read bound and page size: every failed event once, in order', async () => {
  const records = burst(Date.now() - 60_000, 5);
  const store = await seeded(sqliteStore, records);
  try {
    const shown = await everyPage(store, 'status=failed');
    const expected = failedInOrder(records);
    expect({ missing: expected.filter((k) => !shown.includes(k)).length, of: expected.length }).toEqual({ missing: 0, of: expected.length });
    expect(shown).toEqual(expected);
  } finally {
    await store.close();
  }
}, 120_000);

describe.each([['SQLite', sqliteStore], ['DynamoDB (dynalite)', dynamoStore]] as const)('a small read bound over %s', (_name, open) => {
  for (const sameTime of [false, true]) {
    test(`a burst read in part when the bound is hit is not skipped${sameTime ? ' (equal times)' : ''}`, async () => {
      const records = burst(Date.now() - 60_000, 1, sameTime);
      const store = await seeded(open, records);
      try {
        for (const [budget, limit] of [[200, 40], [120, 25], [500, 50]] as const) {
          const shown = await everyPage(store, `status=failed&limit=${limit}`, { searchBudget: budget });
          expect([budget, limit, shown]).toEqual([budget, limit, failedInOrder(records)]);
        }
      } finally {
        await store.close();
      }
    }, 120_000);
  }
});

/** A small seeded generator: the same logs every run. */
function seededRandom(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
}

test('any mix of subscriptions, read bounds and page sizes: paging lists every matching record once, in order', async () => {
  for (let seed = 1; seed <= 100; seed++) {
    const random = seededRandom(seed);
    const events = new MemoryEventLog();
    const names = ['a', 'b', 'c', 'd'].slice(0, 1 + Math.floor(random() * 4));
    const base = Date.now() - 3600_000;
    const records: EventRecord[] = [];
    for (const name of names) {
      const [count, matching] = [Math.floor(random() * 120), random()];
      // 50 distinct times for up to 480 records: many ties.
      for (let i = 0; i < count; i++) records.push(record(name, base - Math.floor(random() * 50) * 1000, random() < matching ? 'failed' : 'delivered'));
    }
    await events.putAll(records);
    const [budget, limit, status] = [1 + Math.floor(random() * 40), 1 + Math.floor(random() * 15), random() < 0.5 ? ('failed' as const) : undefined];
    const shown: string[] = [];
    let after: Position | undefined;
    for (let pages = 0; pages === 0 || after; pages++) {
      if (pages > 5000) throw new Error(`seed ${seed}: the cursor does not end`);
      const page = await searchLog(events, names, { limit, ...(status ? { status } : {}), ...(after ? { after } : {}) }, budget);
      shown.push(...page.records.map(key));
      after = page.next;
    }
    expect([seed, shown]).toEqual([seed, records.filter((r) => !status || r.status === status).map(key).sort().reverse()]);
  }
}, 60_000);
