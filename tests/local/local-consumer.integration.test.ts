/** The local consumer drives a batch handler the way the SQS event source mapping does. */
import type { SQSEvent } from 'aws-lambda';
import { QueueConsumer } from '../../functions/local/consumer';
import { SqliteQueue } from '../../functions/local/sqlite/queue';
import { silentLogger } from '../../functions/core/log';
import { systemClock } from '../../functions/core/ports';
import { SqliteAtomicAccept } from '../../functions/local/sqlite/accept';
import { SqliteDebounceStore } from '../../functions/local/sqlite/debounce';
import { SqliteDedupStore } from '../../functions/local/sqlite/dedup';
import { SqliteEventLog } from '../../functions/local/sqlite/event-log';
import { handedOver } from '../../functions/core/worker/message';
import { eventRecord } from '../../functions/core/worker/record';
import type { QueueMessage } from '../../functions/core/types';
import { tempStore, type TestStore } from '../support/local-store';

const stores: TestStore[] = [];
afterAll(() => stores.forEach((s) => s.close()));

async function queue(visibilityTimeoutMs: number, maxReceiveCount = 5) {
  const t = tempStore();
  stores.push(t);
  return new SqliteQueue(t.store, { visibilityTimeoutMs, maxReceiveCount, clock: systemClock });
}

function until(check: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const tick = () => (check() ? resolve() : setImmediate(tick));
    tick();
  });
}

test('batches carry SQS records; only reported failures come back, after the visibility timeout', async () => {
  const q = await queue(100);
  const seen: Array<{ body: string; count: string }> = [];
  const handler = async (event: SQSEvent) => {
    for (const r of event.Records) seen.push({ body: r.body, count: r.attributes.ApproximateReceiveCount });
    const failures = event.Records.filter((r) => r.body === 'flaky' && r.attributes.ApproximateReceiveCount === '1');
    return { batchItemFailures: failures.map((r) => ({ itemIdentifier: r.messageId })) };
  };
  const consumer = new QueueConsumer(q, handler, { batchSize: 10, concurrency: 1, idleCheckMs: 1000, logger: silentLogger });
  consumer.start();
  await q.sendBodies(['ok-1', 'flaky', 'ok-2']);
  await until(() => seen.length === 4);
  await consumer.stop(1000);
  expect(seen.map((s) => `${s.body}#${s.count}`).sort()).toEqual(['flaky#1', 'flaky#2', 'ok-1#1', 'ok-2#1']);
  expect(await q.size()).toBe(0);
});

test('a handler that throws fails the whole batch; after max receives the messages are dead letters', async () => {
  const q = await queue(20, 2);
  let calls = 0;
  const consumer = new QueueConsumer(q, async () => {
    calls += 1;
    throw new Error('boom');
  }, { batchSize: 10, concurrency: 1, idleCheckMs: 50, logger: silentLogger });
  consumer.start();
  await q.sendBodies(['poison']);
  const deadLetters = async () => (await q.deadLetters()).length;
  let dead = 0;
  while (dead === 0) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    dead = await deadLetters();
  }
  await consumer.stop(1000);
  expect(calls).toBe(2);
  expect((await q.deadLetters())[0]).toMatchObject({ body: 'poison', receiveCount: 2 });
});

test('stop waits for in-flight work; what cannot finish in the grace period is requeued', async () => {
  const q = await queue(60_000);
  let release: () => void = () => {};
  const blocked = new Promise<void>((resolve) => {
    release = resolve;
  });
  let started = false;
  const consumer = new QueueConsumer(q, async () => {
    started = true;
    await blocked;
    return { batchItemFailures: [] };
  }, { batchSize: 10, concurrency: 1, idleCheckMs: 1000, logger: silentLogger });
  consumer.start();
  await q.sendBodies(['slow']);
  await until(() => started);
  await consumer.stop(10);
  // Requeued: visible again now, not after the 60 s visibility timeout.
  const again = await q.receive(1);
  expect(again.map((m) => [m.body, m.receiveCount])).toEqual([['slow', 2]]);
  release();
});

test('waiting leaves nothing behind: idle checks and waits for a free slot undo what they registered', async () => {
  const q = await queue(30_000);
  let handled = 0;
  const consumer = new QueueConsumer(q, async (event) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    handled += event.Records.length;
  }, { batchSize: 1, concurrency: 1, idleCheckMs: 1, logger: silentLogger });
  const stopEntries = (consumer as unknown as { onStop: Set<unknown> }).onStop;
  // Each idle check ends in a receive: counted, so the test waits for checks, not for time.
  let receives = 0;
  const receive = q.receive.bind(q);
  q.receive = (max: number) => {
    receives += 1;
    return receive(max);
  };
  consumer.start();
  try {
    // Idle checks that time out (no sends), then batches that each wait for the one slot.
    await until(() => receives >= 20);
    expect(q.waitingCount).toBeLessThanOrEqual(1);
    await q.sendBodies(Array.from({ length: 50 }, (_, i) => `m${i}`));
    await until(() => handled === 50);
    const drained = receives;
    await until(() => receives >= drained + 10);
    // One wait at a time, each holding one stop entry and at most one wake callback.
    expect(stopEntries.size).toBeLessThanOrEqual(1);
    expect(q.waitingCount).toBeLessThanOrEqual(1);
  } finally {
    await consumer.stop(1000);
  }
  expect(stopEntries.size).toBe(0);
  expect(q.waitingCount).toBe(0);
});

test('a message accepted in this process reaches the worker handler already parsed, with its text as the body', async () => {
  const t = tempStore();
  stores.push(t);
  const q = new SqliteQueue(t.store, { visibilityTimeoutMs: 1000, maxReceiveCount: 5, clock: systemClock });
  const events = new SqliteEventLog(t.store);
  const atomic = new SqliteAtomicAccept(t.store, new SqliteDedupStore(t.store, systemClock), events, q, new SqliteDebounceStore(t.store, systemClock));
  const message: QueueMessage = { v: 1, event_id: 'e1', subscription: 's', source: 'github', event: 'push', delivery_id: 'd1', received_at: '2026-01-01T00:00:00Z', payload: { ref: 'main' } };
  const seen: Array<{ handed: QueueMessage | undefined; body: string }> = [];
  const consumer = new QueueConsumer(q, async (event: SQSEvent) => {
    for (const r of event.Records) seen.push({ handed: handedOver(r), body: r.body });
  }, { batchSize: 10, concurrency: 1, idleCheckMs: 1000, logger: silentLogger });
  consumer.start();
  await atomic.acceptNew({ claim: { eventId: 'e1', ttlSeconds: 60, staleBefore: 0 }, records: [eventRecord(message, 'queued', message.received_at)], messages: [message] });
  await until(() => seen.length === 1);
  await consumer.stop(1000);
  expect(seen[0]!.handed).toBe(message);
  expect(JSON.parse(seen[0]!.body)).toEqual(message);
  expect(await q.size()).toBe(0);
});
