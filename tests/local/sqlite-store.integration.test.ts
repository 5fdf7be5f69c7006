/** The SQLite adapters of every port, against a real database file (and a second connection, as the CLI opens it). */
import Database from 'better-sqlite3';
import { readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ABANDONED_REASON, SWEEP_PAGE, abandonStranded } from '../../functions/core/ingest/abandoned';
import { SqliteAtomicAccept } from '../../functions/local/sqlite/accept';
import { SqliteCounterStore } from '../../functions/local/sqlite/counters';
import { SqliteQueue } from '../../functions/local/sqlite/queue';
import { SqliteDebounceStore } from '../../functions/local/sqlite/debounce';
import { SqliteDedupStore } from '../../functions/local/sqlite/dedup';
import { SqliteEventLog } from '../../functions/local/sqlite/event-log';
import { SqliteLeaseStore } from '../../functions/local/sqlite/leases';
import { SqlitePayloadStore } from '../../functions/local/sqlite/payloads';
import { SqliteRequestLog } from '../../functions/local/sqlite/request-log';
import { SqliteSubscriptionStore } from '../../functions/local/sqlite/subscriptions';
import type { EventRecord, RequestRecord, Subscription } from '../../functions/core/types';
import { resumeSubscription, type LifecycleDeps } from '../../functions/core/subscriptions/lifecycle';
import { replayEvent } from '../../functions/core/subscriptions/replay';
import { tempStore, type TestStore } from '../support/local-store';
import { ManualClock } from '../support/recording-queue';

let t: TestStore;
beforeEach(() => {
  t = tempStore();
});
afterEach(() => t.close());

const sub = (name: string, extra: Partial<Subscription> = {}): Subscription => ({
  name, events: ['push'], skills: [], deliver: ['log'], state: 'active', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z', secret: 's', ...extra,
});

const record = (eventId: string, subscription: string, receivedAt: string, extra: Partial<EventRecord> = {}): EventRecord => ({
  event_id: eventId, subscription, status: 'queued', source: 'custom', event: 'e', delivery_id: `d-${eventId}`, received_at: receivedAt, updated_at: receivedAt,
  message: { v: 1, event_id: eventId, subscription, source: 'custom', event: 'e', delivery_id: `d-${eventId}`, received_at: receivedAt, payload: { big: 'x'.repeat(100) } },
  ...extra,
});

describe('writes of one event-loop turn share one transaction', () => {
  test('many writes in one turn: one commit; a failing write fails alone', async () => {
    const subs = new SqliteSubscriptionStore(t.store);
    const before = t.store.commits;
    const results = await Promise.allSettled([subs.create(sub('a')), subs.create(sub('b')), subs.create(sub('a')), subs.create(sub('c'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(t.store.commits - before).toBe(1);
    expect((await subs.list()).map((s) => s.name)).toEqual(['a', 'b', 'c']);
  });

  test('the savepoint journal of a write stays in memory: no temporary file, however many pages it touches', async () => {
    // SQLite names its temporary files etilqs_*, unlinked at once but open while in use.
    const tempFiles = () => readdirSync('/proc/self/fd').map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return '';
      }
    }).filter((target) => target.includes('etilqs_'));
    await t.store.write(() => {
      t.store.db.exec('CREATE TABLE scratch (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
      const insert = t.store.db.prepare('INSERT INTO scratch (body) VALUES (?)');
      for (let i = 0; i < 200; i++) insert.run('a'.repeat(3000));
    });
    // Rewriting 200 existing pages journals ~800 KB for the savepoint; SQLite spills past 64 KB to a file unless temp_store is MEMORY.
    const seen = await t.store.write(() => {
      t.store.db.prepare("UPDATE scratch SET body = replace(body, 'a', 'b')").run();
      return tempFiles();
    });
    expect(seen).toEqual([]);
    expect(t.store.db.prepare('SELECT COUNT(*) FROM scratch WHERE body LIKE ?').pluck().get('b%')).toBe(200);
  });

  test('a write is visible to another connection once its promise resolves (it is committed)', async () => {
    const other = new SqliteSubscriptionStore(t.reopen());
    await new SqliteSubscriptionStore(t.store).create(sub('x'));
    expect(await other.get('x')).toMatchObject({ name: 'x' });
  });
});

describe('SqliteSubscriptionStore', () => {
  test('create/put/delete answer the contract errors', async () => {
    const subs = new SqliteSubscriptionStore(t.store);
    await subs.create(sub('a'));
    await expect(subs.create(sub('a'))).rejects.toMatchObject({ code: 'subscription_exists' });
    await expect(subs.put(sub('nope'))).rejects.toMatchObject({ code: 'subscription_not_found' });
    await expect(subs.delete('nope')).rejects.toMatchObject({ code: 'subscription_not_found' });
    await subs.put(sub('a', { state: 'paused' }));
    expect((await subs.get('a'))?.state).toBe('paused');
    await subs.delete('a');
    expect(await subs.get('a')).toBeUndefined();
  });

  test("list() is cached until any connection changes the table (the CLI's writes invalidate serve's cache)", async () => {
    const serve = new SqliteSubscriptionStore(t.store);
    const cli = new SqliteSubscriptionStore(t.reopen());
    await cli.create(sub('one'));
    expect((await serve.list()).map((s) => s.name)).toEqual(['one']);
    // No write in between: the cached list is returned (same content, fresh copies).
    const a = await serve.list();
    const b = await serve.list();
    expect(a).toEqual(b);
    // Shared, and frozen so that no caller changes what the next one reads.
    expect(a[0]).toBe(b[0]);
    expect(Object.isFrozen(a[0]) && Object.isFrozen(a[0]?.events)).toBe(true);
    // Proof that the list is not re-read: a change that hides itself from the counter is not seen.
    t.store.db.exec(`UPDATE subscriptions SET body = json_set(body, '$.deliver', json('["slack"]')); UPDATE versions SET version = version - 1 WHERE name = 'subscriptions'`);
    expect((await serve.list())[0]?.deliver).toEqual(['log']);
    await cli.put(sub('one', { state: 'paused' }));
    expect((await serve.list())[0]?.state).toBe('paused');
    await cli.delete('one');
    expect(await serve.list()).toEqual([]);
  });
});

describe('SqliteDedupStore', () => {
  test('new, duplicate, in progress, resumed after the lease, released, expired', async () => {
    const clock = new ManualClock();
    const dedup = new SqliteDedupStore(t.store, clock);
    const opts = (eventId: string) => ({ eventId, ttlSeconds: 60, staleBefore: clock.now() - 1000 });
    const [first, second] = await Promise.all([dedup.claim('k', opts('e1')), dedup.claim('k', opts('e2'))]);
    expect([first, second]).toEqual([{ kind: 'new' }, { kind: 'in_progress' }]);
    clock.advance(2000);
    expect(await dedup.claim('k', opts('e3'))).toEqual({ kind: 'resumed', eventId: 'e1' });
    await dedup.release('k');
    expect(await dedup.claim('k', { eventId: 'e4', ttlSeconds: 60, staleBefore: clock.now() })).toEqual({ kind: 'resumed', eventId: 'e1' });
    await dedup.commit('k');
    expect(await dedup.claim('k', opts('e5'))).toEqual({ kind: 'duplicate', eventId: 'e1' });
    clock.advance(61_000);
    expect(await dedup.claim('k', opts('e6'))).toEqual({ kind: 'new' });
  });
});

describe('SqliteEventLog', () => {
  test('put, get, list by subscription (newest first) and by status (oldest first), delete', async () => {
    const log = new SqliteEventLog(t.store);
    await log.putAll([record('e1', 's', '2026-01-01T00:00:01Z'), record('e2', 's', '2026-01-01T00:00:02Z', { status: 'held' }), record('e1', 'other', '2026-01-01T00:00:01Z')]);
    expect((await log.get('e1', 's'))?.message.payload).toEqual({ big: 'x'.repeat(100) });
    expect((await log.getEvent('e1')).map((r) => r.subscription)).toEqual(['other', 's']);
    expect((await log.listBySubscription('s', 10)).map((r) => r.event_id)).toEqual(['e2', 'e1']);
    expect((await log.listBySubscription('s', 1)).map((r) => r.event_id)).toEqual(['e2']);
    expect((await log.listByStatus('s', 'held')).map((r) => r.event_id)).toEqual(['e2']);
    await log.deleteAll([{ event_id: 'e1', subscription: 's' }]);
    expect(await log.get('e1', 's')).toBeUndefined();
  });

  test('update changes only the given fields, removes undefined ones, keeps the message, ignores absent records', async () => {
    const log = new SqliteEventLog(t.store);
    await log.putAll([record('e1', 's', '2026-01-01T00:00:01Z', { error: { code: 'x', message: 'y' } })]);
    await log.update('e1', 's', { status: 'delivered', error: undefined, reply: 'hi' });
    const got = await log.get('e1', 's');
    expect(got).toMatchObject({ status: 'delivered', reply: 'hi', event: 'e' });
    expect(got).not.toHaveProperty('error');
    expect(got?.message.payload).toEqual({ big: 'x'.repeat(100) });
    expect((await log.listByStatus('s', 'delivered')).map((r) => r.event_id)).toEqual(['e1']);
    await log.update('missing', 's', { status: 'failed' });
    expect(await log.get('missing', 's')).toBeUndefined();
  });
});

describe('SqliteEventLog: prompt and reply apart from the record', () => {
  test('texts are stored, replaced and removed on their own; a status change leaves them', async () => {
    const log = new SqliteEventLog(t.store);
    await log.putAll([record('e1', 's', '2026-01-01T00:00:01Z', { prompt: 'P'.repeat(5000) })]);
    await log.update('e1', 's', { status: 'processing' });
    expect(await log.get('e1', 's')).toMatchObject({ status: 'processing', prompt: 'P'.repeat(5000) });
    await log.update('e1', 's', { reply: 'R1' });
    await log.update('e1', 's', { reply: 'R2', status: 'delivered' });
    expect(await log.get('e1', 's')).toMatchObject({ status: 'delivered', prompt: 'P'.repeat(5000), reply: 'R2' });
    await log.update('e1', 's', { prompt: undefined });
    const got = await log.get('e1', 's');
    expect(got).not.toHaveProperty('prompt');
    expect(got?.reply).toBe('R2');
    // The small row holds neither text.
    const data = t.store.db.prepare('SELECT data FROM events WHERE event_id = ?').pluck().get('e1') as string;
    expect(data).not.toContain('R2');
    // A whole record written again replaces its texts too.
    await log.putAll([record('e1', 's', '2026-01-01T00:00:01Z')]);
    expect(await log.get('e1', 's')).not.toHaveProperty('reply');
    await log.deleteAll([{ event_id: 'e1', subscription: 's' }]);
    expect(t.store.db.prepare('SELECT COUNT(*) FROM event_texts').pluck().get()).toBe(0);
  });

  test('get with the caller\'s message returns the record with that message, without reading the stored one', async () => {
    const log = new SqliteEventLog(t.store);
    const stored = record('e1', 's', '2026-01-01T00:00:01Z', { reply: 'r' });
    await log.putAll([stored]);
    const known = { ...stored.message };
    const got = await log.get('e1', 's', known);
    expect(got?.message).toBe(known);
    expect(got).toMatchObject({ status: 'queued', reply: 'r' });
    expect(await log.get('absent', 's', known)).toBeUndefined();
  });

  test('a record written before event_texts existed (texts inside data) still reads, and a text update moves it out', async () => {
    const log = new SqliteEventLog(t.store);
    await log.putAll([record('old', 's', '2026-01-01T00:00:01Z')]);
    const { message: _m, ...rest } = record('old', 's', '2026-01-01T00:00:01Z', { prompt: 'old prompt', reply: 'old reply' });
    t.store.db.prepare('UPDATE events SET data = ? WHERE event_id = ?').run(JSON.stringify(rest), 'old');
    expect(await log.get('old', 's')).toMatchObject({ prompt: 'old prompt', reply: 'old reply' });
    await log.update('old', 's', { reply: 'new reply' });
    expect(await log.get('old', 's')).toMatchObject({ prompt: 'old prompt', reply: 'new reply' });
    await log.update('old', 's', { reply: undefined });
    expect(await log.get('old', 's')).not.toHaveProperty('reply');
  });
});

describe('SqliteEventLog: summaries for sweeps over a backlog', () => {
  test('by status, received before a time, oldest first, paged, without message, prompt or reply', async () => {
    const log = new SqliteEventLog(t.store);
    await log.putAll([
      record('e1', 's', '2026-01-01T00:00:01Z', { prompt: 'P', reply: 'R', attempts: 0 }),
      record('e2', 's', '2026-01-01T00:00:02Z', { status: 'held' }),
      record('e3', 's', '2026-01-01T00:00:03Z'),
      record('e4', 's', '2026-01-01T00:00:05Z'),
      record('e1', 'other', '2026-01-01T00:00:01Z'),
    ]);
    const before = '2026-01-01T00:00:04Z';
    const all = await log.listSummariesByStatus('s', 'queued', { receivedBefore: before, limit: 10 });
    expect(all.map((r) => r.event_id)).toEqual(['e1', 'e3']);
    expect(all[0]).toMatchObject({ subscription: 's', status: 'queued', delivery_id: 'd-e1', attempts: 0 });
    for (const summary of all) for (const big of ['message', 'prompt', 'reply']) expect(summary).not.toHaveProperty(big);
    const first = await log.listSummariesByStatus('s', 'queued', { receivedBefore: before, limit: 1 });
    expect(first.map((r) => r.event_id)).toEqual(['e1']);
    expect((await log.listSummariesByStatus('s', 'queued', { receivedBefore: before, limit: 1, after: first[0]! })).map((r) => r.event_id)).toEqual(['e3']);
    expect(await log.listSummariesByStatus('s', 'queued', { receivedBefore: before, limit: 1, after: all[1]! })).toEqual([]);
  });

  test("serve's abandoned-records sweep reads a backlog a page at a time, never the messages, and marks only the stranded", async () => {
    const log = new SqliteEventLog(t.store);
    const subscriptions = new SqliteSubscriptionStore(t.store);
    await subscriptions.create(sub('s'));
    const start = Date.parse('2026-01-01T00:00:00Z');
    const count = SWEEP_PAGE * 2 + 7;
    const at = (i: number) => new Date(start + i * 10).toISOString();
    // Every third record still has its message in the queue; every fifth was attempted already; the last few are too young.
    await log.putAll(Array.from({ length: count }, (_, i) => record(`e${i}`, 's', at(i), i % 5 === 0 ? { attempts: 1 } : {})));
    const receivedBefore = start + (count - 3) * 10;
    const stranded = (i: number) => i % 3 !== 0 && i % 5 !== 0 && i < count - 3;
    const byStatus = jest.spyOn(log, 'listByStatus');
    const pages = jest.spyOn(log, 'listSummariesByStatus');
    const abandoned = await abandonStranded(log, subscriptions, { receivedBefore, now: '2026-01-02T00:00:00.000Z', queued: (id) => Number(id.slice(1)) % 3 === 0 });
    expect(byStatus).not.toHaveBeenCalled();
    expect(pages).toHaveBeenCalledTimes(3);
    const expected = Array.from({ length: count }, (_, i) => i).filter(stranded).map((i) => `e${i}`);
    expect(abandoned.map((r) => r.event_id)).toEqual(expected);
    expect(abandoned[0]).toMatchObject({ status: 'abandoned', delivery_id: 'd-e1', error: { code: 'abandoned', message: ABANDONED_REASON } });
    expect(await log.get('e1', 's')).toMatchObject({ status: 'abandoned', updated_at: '2026-01-02T00:00:00.000Z', error: { code: 'abandoned' }, message: { payload: { big: 'x'.repeat(100) } } });
    expect((await log.get('e3', 's'))?.status).toBe('queued');
    expect((await log.get('e5', 's'))?.status).toBe('queued');
    expect((await log.get(`e${count - 1}`, 's'))?.status).toBe('queued');
    expect((await log.listByStatus('s', 'abandoned')).length).toBe(expected.length);
  });
});

describe('SqliteAtomicAccept', () => {
  const parts = (clock: ManualClock) => {
    const dedup = new SqliteDedupStore(t.store, clock);
    const events = new SqliteEventLog(t.store);
    const queue = new SqliteQueue(t.store, { visibilityTimeoutMs: 60_000, maxReceiveCount: 5, clock });
    return { dedup, events, queue, atomic: new SqliteAtomicAccept(t.store, dedup, events, queue, new SqliteDebounceStore(t.store, clock)) };
  };
  const claimRow = (key: string) => t.store.db.prepare('SELECT event_id, committed FROM dedup WHERE key = ?').get(key);

  test('a new delivery id: claim (committed at once), records and messages in one transaction', async () => {
    const clock = new ManualClock();
    const { events, queue, atomic } = parts(clock);
    const r = record('e1', 's', '2026-01-01T00:00:01Z');
    const commits = t.store.commits;
    const claim = await atomic.acceptNew({ dedupKey: 'github#d1', claim: { eventId: 'e1', ttlSeconds: 60, staleBefore: 0 }, records: [r], messages: [r.message] });
    expect(claim).toEqual({ kind: 'new' });
    expect(t.store.commits - commits).toBe(1);
    expect(claimRow('github#d1')).toEqual({ event_id: 'e1', committed: 1 });
    expect((await events.get('e1', 's'))?.status).toBe('queued');
    // Queued by reference to the record's message: the payload is stored once.
    expect(t.store.db.prepare('SELECT body FROM queue').pluck().all()).toEqual(['']);
    const [received] = await queue.receive(10);
    expect(JSON.parse(received!.body)).toEqual(r.message);
    // Handed over in-process: the very message ingest built, not parsed again; only once.
    expect(received!.message).toBe(r.message);
    expect(queue.handedOverCount).toBe(0);
    expect(await queue.heldEvents()).toEqual(new Set(['e1\u0000s']));
    // A second receive (here: the message given back) reads it from the store.
    await queue.changeVisibility(received!.receiptHandle, 0);
    const [again] = await queue.receive(10);
    expect(again!.message).toBeUndefined();
    expect(again!.body).toBe(received!.body);
    // Seen by another connection (the CLI) as soon as it resolved.
    const other = new Database(join(t.dir, 'hookagent.db'), { readonly: true });
    expect(other.prepare('SELECT committed FROM dedup WHERE key = ?').pluck().get('github#d1')).toBe(1);
    other.close();
  });

  test('a message queued by reference whose event record was deleted goes to the dead letters, named', async () => {
    const clock = new ManualClock();
    const { events, queue, atomic } = parts(clock);
    const r = record('e9', 's', '2026-01-01T00:00:01Z');
    await atomic.acceptNew({ claim: { eventId: 'e9', ttlSeconds: 60, staleBefore: 0 }, records: [r], messages: [r.message] });
    await events.deleteAll([r]);
    // Handed over too, but the record is gone: the message is not processed.
    expect(queue.handedOverCount).toBe(1);
    expect(await queue.receive(10)).toEqual([]);
    expect(queue.handedOverCount).toBe(0);
    const [dead] = await queue.deadLetters();
    expect(dead).toMatchObject({ reason: 'the event record of this message was deleted' });
    expect(JSON.parse(dead!.body)).toEqual({ event_id: 'e9', subscription: 's' });
  });

  test('a known delivery id writes nothing and answers as a claim would: duplicate, in progress, resumed', async () => {
    const clock = new ManualClock();
    const { dedup, events, queue, atomic } = parts(clock);
    const r = record('e2', 's', '2026-01-01T00:00:01Z');
    const input = (key: string, staleBefore: number) => ({ dedupKey: key, claim: { eventId: 'e2', ttlSeconds: 60, staleBefore }, records: [r], messages: [r.message] });
    await atomic.acceptNew({ ...input('k-dup', 0), records: [], messages: [] });
    expect(await atomic.acceptNew(input('k-dup', 0))).toEqual({ kind: 'duplicate', eventId: 'e2' });
    await dedup.claim('k-pending', { eventId: 'e-first', ttlSeconds: 60, staleBefore: 0 });
    expect(await atomic.acceptNew(input('k-pending', clock.now() - 1000))).toEqual({ kind: 'in_progress' });
    clock.advance(2000);
    expect(await atomic.acceptNew(input('k-pending', clock.now() - 1000))).toEqual({ kind: 'resumed', eventId: 'e-first' });
    // Taken over, still pending: the resumed request commits it once it has queued the event.
    expect(claimRow('k-pending')).toEqual({ event_id: 'e-first', committed: 0 });
    expect(await events.get('e2', 's')).toBeUndefined();
    expect(await queue.size()).toBe(0);
  });

  test('a write that fails (the disk is full) leaves nothing behind: the retry is new', async () => {
    t.close();
    t = tempStore({ maxPageCount: 40 });
    const clock = new ManualClock();
    const { events, queue, atomic } = parts(clock);
    const big = (id: string) => record(id, 's', '2026-01-01T00:00:01Z', { message: { ...record(id, 's', '2026-01-01T00:00:01Z').message, payload: { big: 'y'.repeat(400_000) } } });
    const r = big('e3');
    await expect(atomic.acceptNew({ dedupKey: 'k-full', claim: { eventId: 'e3', ttlSeconds: 60, staleBefore: 0 }, records: [r], messages: [r.message] }))
      .rejects.toMatchObject({ code: 'unavailable' });
    // Nothing handed over for a transaction that was not committed.
    expect(queue.handedOverCount).toBe(0);
    expect(claimRow('k-full')).toBeUndefined();
    expect(await events.get('e3', 's')).toBeUndefined();
    expect(await queue.size()).toBe(0);
    const small = record('e3', 's', '2026-01-01T00:00:01Z');
    expect(await atomic.acceptNew({ dedupKey: 'k-full', claim: { eventId: 'e3', ttlSeconds: 60, staleBefore: 0 }, records: [small], messages: [small.message] })).toEqual({ kind: 'new' });
  });
});

describe('SqlitePayloadStore', () => {
  test('round trip; bad keys and pointers refused; missing payloads named', async () => {
    const payloads = new SqlitePayloadStore(t.store, t.dir);
    const pointer = await payloads.put('evt_1', '{"a":1}');
    expect(await payloads.get(pointer)).toBe('{"a":1}');
    await expect(payloads.put('../x', 'y')).rejects.toMatchObject({ code: 'payload_key_invalid' });
    await expect(payloads.get('s3://bucket/x')).rejects.toMatchObject({ code: 'payload_pointer_invalid' });
    await expect(payloads.get('file:///etc/passwd')).rejects.toMatchObject({ code: 'payload_pointer_invalid' });
    await expect(payloads.get('sqlite:nope')).rejects.toMatchObject({ code: 'payload_missing' });
  });
});

describe('SqliteLeaseStore', () => {
  test('one holder at a time; an expired lease is taken over; release only by the holder', async () => {
    const clock = new ManualClock();
    const leases = new SqliteLeaseStore(t.store, clock);
    const [a, b] = await Promise.all([leases.acquire('e', 's', 'A', 1000), leases.acquire('e', 's', 'B', 1000)]);
    expect([a, b]).toEqual([true, false]);
    expect(await leases.acquire('e', 's', 'A', 1000)).toBe(true);
    await leases.release('e', 's', 'B');
    expect(await leases.acquire('e', 's', 'B', 1000)).toBe(false);
    clock.advance(1000);
    expect(await leases.acquire('e', 's', 'B', 1000)).toBe(true);
    await leases.release('e', 's', 'B');
    expect(await leases.acquire('e', 's', 'C', 1000)).toBe(true);
  });
});

describe('SqliteCounterStore', () => {
  test('adds, reads, and restarts after the window expires', async () => {
    const clock = new ManualClock();
    const counters = new SqliteCounterStore(t.store, clock);
    expect(await counters.get('runs#s#h1')).toBe(0);
    const totals = await Promise.all([counters.add('runs#s#h1', 1, 60), counters.add('runs#s#h1', 1, 60), counters.add('runs#s#h1', 0, 60)]);
    expect(totals).toEqual([1, 2, 2]);
    expect(await counters.get('runs#s#h1')).toBe(2);
    clock.advance(60_000);
    expect(await counters.get('runs#s#h1')).toBe(0);
    expect(await counters.add('runs#s#h1', 5, 60)).toBe(5);
  });
});

describe('SqliteDebounceStore', () => {
  test('keeps the latest event per subject until it expires', async () => {
    const clock = new ManualClock();
    const debounce = new SqliteDebounceStore(t.store, clock);
    expect(await debounce.getLatest('s', 'github.com/o/r#1')).toBeUndefined();
    await debounce.setLatest('s', 'github.com/o/r#1', 'e1', 30);
    await debounce.setLatest('s', 'github.com/o/r#1', 'e2', 30);
    await debounce.setLatest('s', 'github.com/o/r#2', 'e3', 30);
    expect(await debounce.getLatest('s', 'github.com/o/r#1')).toBe('e2');
    expect(await debounce.getLatest('other', 'github.com/o/r#1')).toBeUndefined();
    clock.advance(30_000);
    expect(await debounce.getLatest('s', 'github.com/o/r#1')).toBeUndefined();
  });
});

describe('SqliteRequestLog', () => {
  const entry = (id: string, at: string, endpoint: string, outcome: RequestRecord['outcome']): RequestRecord => ({
    request_id: id, received_at: at, endpoint, method: 'POST', status: 202, outcome, header_names: ['content-type'],
  });

  test('most recent first, filtered by endpoint, outcome and time, limited', async () => {
    const log = new SqliteRequestLog(t.store);
    await log.record(entry('r1', '2026-01-01T00:00:01Z', 'github', 'accepted'));
    await log.record(entry('r2', '2026-01-01T00:00:02Z', 'gitlab', 'rejected_signature'));
    await log.record(entry('r3', '2026-01-01T00:00:03Z', 'github', 'duplicate'));
    expect((await log.list({ limit: 10 })).map((r) => r.request_id)).toEqual(['r3', 'r2', 'r1']);
    expect((await log.list({ limit: 10, endpoint: 'github' })).map((r) => r.request_id)).toEqual(['r3', 'r1']);
    expect((await log.list({ limit: 10, outcome: 'rejected_signature' })).map((r) => r.request_id)).toEqual(['r2']);
    expect((await log.list({ limit: 10, since: Date.parse('2026-01-01T00:00:02Z') })).map((r) => r.request_id)).toEqual(['r3', 'r2']);
    expect((await log.list({ limit: 1 })).map((r) => r.request_id)).toEqual(['r3']);
  });
});

describe('a release or a replay does not write the message again (issue 16)', () => {
  const setup = async () => {
    const clock = new ManualClock(Date.parse('2026-01-01T00:00:10Z'));
    const subscriptions = new SqliteSubscriptionStore(t.store);
    const events = new SqliteEventLog(t.store);
    const queue = new SqliteQueue(t.store, { visibilityTimeoutMs: 60_000, maxReceiveCount: 5, clock });
    await subscriptions.create({ name: 'p', events: [], skills: [], deliver: ['log'], state: 'paused', created_at: '', updated_at: '', secret: 'x' });
    const lifecycle: LifecycleDeps = { subscriptions, events, queue, clock, leases: new SqliteLeaseStore(t.store, clock) };
    const messageRow = (id: string) => t.store.db.prepare('SELECT rowid, message FROM event_messages WHERE event_id = ? AND subscription = ?').get(id, 'p') as { rowid: number; message: string };
    return { events, queue, lifecycle, messageRow, subscriptions };
  };

  test('held records are queued by reference; their stored messages stay as they were', async () => {
    const { events, queue, lifecycle, messageRow } = await setup();
    const held = [record('h1', 'p', '2026-01-01T00:00:01Z', { status: 'held' }), record('h2', 'p', '2026-01-01T00:00:02Z', { status: 'held' })];
    await events.putAll(held);
    const before = messageRow('h1');
    expect(await resumeSubscription(lifecycle, 'p')).toEqual({ kind: 'resumed', released: 2 });
    // Not deleted and inserted again (a new rowid), nor rewritten: the same row.
    expect(messageRow('h1')).toEqual(before);
    expect((await events.get('h1', 'p'))?.status).toBe('queued');
    expect(t.store.db.prepare('SELECT body FROM queue ORDER BY id').pluck().all()).toEqual(['', '']);
    const received = await queue.receive(10);
    expect(received.map((m) => JSON.parse(m.body).event_id)).toEqual(['h1', 'h2']);
    // Handed over as read for the release: the worker does not parse them again.
    expect(received.every((m) => m.message !== undefined)).toBe(true);
  });

  test('a record written again with a different message does rewrite it', async () => {
    const { events, messageRow } = await setup();
    const r = record('h3', 'p', '2026-01-01T00:00:03Z');
    await events.putAll([r]);
    const moved = { ...r, message: { ...r.message, payload: undefined, payload_ref: 'payloads/h3' } };
    await events.putAll([moved]);
    expect(JSON.parse(messageRow('h3').message)).toEqual(JSON.parse(JSON.stringify(moved.message)));
  });

  test('a replay writes its copy once and queues it by reference', async () => {
    const { events, queue, lifecycle, subscriptions } = await setup();
    await subscriptions.put({ ...(await subscriptions.get('p'))!, state: 'active' });
    await events.putAll([record('h4', 'p', '2026-01-01T00:00:04Z', { status: 'delivered' })]);
    const { copies: [copy] } = await replayEvent(lifecycle, 'h4');
    expect(t.store.db.prepare('SELECT body FROM queue').pluck().all()).toEqual(['']);
    const [received] = await queue.receive(10);
    expect(JSON.parse(received!.body)).toMatchObject({ event_id: copy!.event_id, replay_of: 'h4', payload: { big: 'x'.repeat(100) } });
  });
  test('a paused subscription holds its replay (resume releases it, once); a record still held is not replayed', async () => {
    const { events, queue, lifecycle } = await setup();
    await events.putAll([record('d1', 'p', '2026-01-01T00:00:05Z', { status: 'delivered' }), record('h5', 'p', '2026-01-01T00:00:06Z', { status: 'held' })]);
    const { copies: [copy], stillHeld } = await replayEvent(lifecycle, 'd1');
    expect(copy).toMatchObject({ status: 'held', message: { replay_of: 'd1' } });
    expect(stillHeld).toEqual([]);
    expect(await queue.receive(10)).toEqual([]);
    // Replaying what is itself still held would deliver it twice (now and at resume): refused.
    await expect(replayEvent(lifecycle, 'h5')).rejects.toMatchObject({ code: 'event_held', message: expect.stringContaining('hookagent webhook resume p') });
    expect((await events.getEvent('h5')).length).toBe(1);
    expect(await queue.receive(10)).toEqual([]);
    expect(await resumeSubscription(lifecycle, 'p')).toEqual({ kind: 'resumed', released: 2 });
    expect((await queue.receive(10)).map((m) => JSON.parse(m.body).event_id).sort()).toEqual([copy!.event_id, 'h5'].sort());
  });

});
