/**
 * Retention of the local store while serve runs (housekeeping.ts): the request log is kept
 * 7 days, finished events and their payloads 14 days after they end, expired claims,
 * leases, counters and debounce rows go; deletes run in bounded batches. Held, queued and
 * processing records (and the payloads they need) never expire.
 */
import { SqliteCounterStore } from '../../functions/local/sqlite/counters';
import { SqliteDebounceStore } from '../../functions/local/sqlite/debounce';
import { SqliteDedupStore } from '../../functions/local/sqlite/dedup';
import { SqliteEventLog } from '../../functions/local/sqlite/event-log';
import { expireOld, startHousekeeping } from '../../functions/local/sqlite/housekeeping';
import { SqliteLeaseStore } from '../../functions/local/sqlite/leases';
import { SqlitePayloadStore } from '../../functions/local/sqlite/payloads';
import { SqliteRequestLog } from '../../functions/local/sqlite/request-log';
import type { Logger } from '../../functions/core/log';
import type { EventRecord, EventStatus, RequestRecord } from '../../functions/core/types';
import { tempStore, type TestStore } from '../support/local-store';
import { ManualClock } from '../support/recording-queue';
import { eventually } from '../support/serve';

const DAY = 24 * 3600 * 1000;
const START = Date.parse('2026-03-01T12:00:00Z');

let t: TestStore;
beforeEach(() => {
  t = tempStore();
});
afterEach(() => {
  jest.restoreAllMocks();
  t.close();
});

const iso = (ms: number) => new Date(ms).toISOString();
const record = (eventId: string, status: EventStatus, at: number, message: Partial<EventRecord['message']> = {}): EventRecord => ({
  event_id: eventId, subscription: 'alerts', status, source: 'custom', event: 'e', delivery_id: `d-${eventId}`, received_at: iso(at), updated_at: iso(at),
  message: { v: 1, event_id: eventId, subscription: 'alerts', source: 'custom', event: 'e', delivery_id: `d-${eventId}`, received_at: iso(at), payload_ref: `sqlite:${eventId}`, ...message },
});
const request = (at: number, i: number): RequestRecord => ({ request_id: `r${i}`, received_at: iso(at), endpoint: 'custom/alerts', method: 'POST', status: 202, outcome: 'accepted', header_names: [] });
const count = (table: string) => t.store.db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
/** Payloads stamp `created_at` with Date.now(): written as at `at`. */
async function putPayload(payloads: SqlitePayloadStore, key: string, at: number): Promise<void> {
  const spy = jest.spyOn(Date, 'now').mockReturnValue(at);
  try {
    await payloads.put(key, JSON.stringify({ big: 'x'.repeat(50_000) }));
  } finally {
    spy.mockRestore();
  }
}
const quiet: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

test('a running housekeeping drops, as its clock moves on, requests older than 7 days, finished events and payloads older than 14, and expired claims, leases, counters and debounce rows', async () => {
  const clock = new ManualClock(START);
  const events = new SqliteEventLog(t.store);
  const payloads = new SqlitePayloadStore(t.store);
  const requests = new SqliteRequestLog(t.store);
  const dedup = new SqliteDedupStore(t.store, clock);
  const leases = new SqliteLeaseStore(t.store, clock);
  const counters = new SqliteCounterStore(t.store, clock);
  const debounce = new SqliteDebounceStore(t.store, clock);

  // Day 0: five delivered events with their payloads, 12,000 requests, a claim, a lease, a counter, a debounce row.
  await events.putAll([0, 1, 2, 3, 4].map((i) => record(`evt_old${i}`, 'delivered', START)));
  for (let i = 0; i < 5; i++) await putPayload(payloads, `evt_old${i}`, START);
  for (let i = 0; i < 12_000; i++) void requests.record(request(START, i));
  await t.store.committed();
  expect(await dedup.claim('custom#d1', { eventId: 'evt_old0', ttlSeconds: 3600, staleBefore: START - 60_000 })).toEqual({ kind: 'new' });
  expect(await leases.acquire('evt_old0', 'alerts', 'worker-1', 60_000)).toBe(true);
  await counters.add('runs#alerts', 1, 3600);
  await debounce.setLatest('alerts', 'subject', 'evt_old0', 60);
  const expiring = ['dedup', 'leases', 'counters', 'debounce'] as const;
  expect(expiring.map(count)).toEqual([1, 1, 1, 1]);

  const passes: number[] = [];
  const stop = startHousekeeping(t.store, { clock, intervalMs: 10, logger: quiet, onPass: (dropped) => passes.push(dropped.requests) });
  try {
    await eventually(() => passes.length >= 1, 'a pass on day 0');
    expect({ requests: count('requests'), events: count('events'), payloads: count('payloads') }).toEqual({ requests: 12_000, events: 5, payloads: 5 });

    // Day 15, serve still running: today's event and request arrive.
    clock.advance(15 * DAY);
    const today = clock.now();
    await events.putAll([record('evt_today', 'delivered', today)]);
    await putPayload(payloads, 'evt_today', today);
    await requests.record(request(today, 0));
    const commitsBefore = t.store.commits;
    const seen = passes.length;
    await eventually(() => passes.slice(seen).some((n) => n > 0), 'a pass on day 15');

    expect({
      requests: count('requests'), events: count('events'), messages: count('event_messages'), payloads: count('payloads'),
      expiring: expiring.map(count), listed: (await requests.list({ limit: 100 })).length,
    }).toEqual({ requests: 1, events: 1, messages: 1, payloads: 1, expiring: [0, 0, 0, 0], listed: 1 });
    // 12,000 requests in bounded batches: several transactions, none holding the writer for all of them.
    expect(t.store.commits - commitsBefore).toBeGreaterThanOrEqual(3);
  } finally {
    await stop();
  }
});

test('held, queued and processing records do not expire, nor the payloads they need; a finished one goes 14 days after it ended', async () => {
  const events = new SqliteEventLog(t.store);
  const payloads = new SqlitePayloadStore(t.store);
  // Day 0: waiting records, a delivered one, and a held replay of another delivered event (it reads that event's payload).
  await events.putAll([
    record('evt_held', 'held', START), record('evt_queued', 'queued', START), record('evt_processing', 'processing', START),
    record('evt_done', 'delivered', START), record('evt_orig', 'delivered', START),
    record('evt_replay', 'held', START, { payload_ref: 'sqlite:evt_orig' }),
  ]);
  for (const key of ['evt_held', 'evt_queued', 'evt_processing', 'evt_done', 'evt_orig']) await putPayload(payloads, key, START);

  const day15 = START + 15 * DAY;
  await expireOld(t.store, day15);
  const left = () => (t.store.db.prepare('SELECT event_id FROM events ORDER BY event_id').pluck().all() as string[]);
  const payloadKeys = () => (t.store.db.prepare('SELECT key FROM payloads ORDER BY key').pluck().all() as string[]);
  expect({ events: left(), payloads: payloadKeys() }).toEqual({
    events: ['evt_held', 'evt_processing', 'evt_queued', 'evt_replay'],
    payloads: ['evt_held', 'evt_orig', 'evt_processing', 'evt_queued'],
  });
  expect((await events.get('evt_held', 'alerts'))?.message.payload_ref).toBe('sqlite:evt_held');

  // Released on day 15 and delivered on day 16: kept until day 30, with its payload.
  const held = (await events.get('evt_held', 'alerts'))!;
  await events.putAll([{ ...held, status: 'queued', updated_at: iso(day15) }]);
  await events.update('evt_held', 'alerts', { status: 'processing', updated_at: iso(day15 + DAY) });
  await events.update('evt_held', 'alerts', { status: 'delivered', updated_at: iso(day15 + DAY) });
  await expireOld(t.store, day15 + 14 * DAY);
  expect(left()).toContain('evt_held');
  expect(payloadKeys()).toContain('evt_held');
  await expireOld(t.store, day15 + 15 * DAY);
  expect(left()).not.toContain('evt_held');
  expect(payloadKeys()).not.toContain('evt_held');
  // Messages and texts go with their records.
  expect(count('event_messages')).toBe(left().length);
});
