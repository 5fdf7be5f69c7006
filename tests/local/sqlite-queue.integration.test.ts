/** The local queue keeps SQS semantics, durably, in the SQLite store. */
import { SqliteQueue } from '../../functions/local/sqlite/queue';
import { tempStore, type TestStore } from '../support/local-store';
import { ManualClock } from '../support/recording-queue';

const stores: TestStore[] = [];
afterAll(() => stores.forEach((s) => s.close()));

function newQueue(clock: ManualClock, maxReceiveCount = 3) {
  const t = tempStore();
  stores.push(t);
  return { queue: new SqliteQueue(t.store, { visibilityTimeoutMs: 30_000, maxReceiveCount, clock }), t };
}

test('receive returns messages in arrival order and hides them for the visibility timeout', async () => {
  const clock = new ManualClock();
  const { queue } = newQueue(clock);
  await queue.sendBodies(['a', 'b', 'c']);
  const first = await queue.receive(2);
  expect(first.map((m) => [m.body, m.receiveCount])).toEqual([['a', 1], ['b', 1]]);
  expect((await queue.receive(10)).map((m) => m.body)).toEqual(['c']);
  expect(await queue.receive(10)).toEqual([]);
  expect(await queue.nextVisibleIn()).toBe(30_000);
  clock.advance(30_000);
  const again = await queue.receive(10);
  expect(again.map((m) => [m.body, m.receiveCount])).toEqual([['a', 2], ['b', 2], ['c', 2]]);
});

test('delete removes a message; a stale receipt does not delete a message received again', async () => {
  const clock = new ManualClock();
  const { queue } = newQueue(clock);
  await queue.sendBodies(['x']);
  const [first] = await queue.receive(1);
  clock.advance(30_000);
  const [second] = await queue.receive(1);
  await queue.delete(first!.receiptHandle);
  expect(await queue.size()).toBe(1);
  await queue.delete(second!.receiptHandle);
  expect(await queue.size()).toBe(0);
  expect(await queue.nextVisibleIn()).toBeUndefined();
});

test('changeVisibility re-times a received message (0 = at once); a stale receipt changes nothing', async () => {
  const clock = new ManualClock();
  const { queue } = newQueue(clock);
  await queue.sendBodies(['x']);
  const [m] = await queue.receive(1);
  await queue.changeVisibility(m!.receiptHandle, 0);
  const [again] = await queue.receive(1);
  expect(again!.receiveCount).toBe(2);
  await queue.changeVisibility(m!.receiptHandle, 0);
  expect(await queue.receive(1)).toEqual([]);
  await queue.changeVisibility(again!.receiptHandle, 45);
  expect(await queue.nextVisibleIn()).toBe(45_000);
  clock.advance(44_999);
  expect(await queue.receive(1)).toEqual([]);
  clock.advance(1);
  expect((await queue.receive(1)).map((r) => r.receiveCount)).toEqual([3]);
});

test('delaySeconds defers a send (capped at 900 s, like SQS)', async () => {
  const clock = new ManualClock();
  const { queue } = newQueue(clock);
  await queue.sendBodies(['later'], { delaySeconds: 10 });
  await queue.sendBodies(['capped'], { delaySeconds: 5000 });
  expect(await queue.receive(10)).toEqual([]);
  clock.advance(10_000);
  const [later] = await queue.receive(10);
  expect(later!.body).toBe('later');
  await queue.delete(later!.receiptHandle);
  clock.advance(889_999);
  expect(await queue.receive(10)).toEqual([]);
  clock.advance(1);
  expect((await queue.receive(10)).map((m) => m.body)).toEqual(['capped']);
});

test('after maxReceiveCount receives the message moves to the dead-letter table', async () => {
  const clock = new ManualClock();
  const { queue } = newQueue(clock, 2);
  await queue.sendBodies(['poison', 'fine']);
  for (let i = 0; i < 2; i++) {
    const got = await queue.receive(10);
    const fine = got.find((m) => m.body === 'fine');
    if (fine) await queue.delete(fine.receiptHandle);
    clock.advance(30_000);
  }
  expect(await queue.receive(10)).toEqual([]);
  expect(await queue.size()).toBe(0);
  expect((await queue.deadLetters()).map((d) => [d.body, d.receiveCount])).toEqual([['poison', 2]]);
  clock.advance(1);
  await queue.deadLetterSink().send('permanent', 'agent refused');
  expect((await queue.deadLetters()).map((d) => [d.body, d.reason])).toEqual([['poison', 'received 2 times without success'], ['permanent', 'agent refused']]);
});

test('two consumers never receive the same message at once', async () => {
  const clock = new ManualClock();
  const { queue, t } = newQueue(clock);
  const other = new SqliteQueue(t.reopen(), { visibilityTimeoutMs: 30_000, maxReceiveCount: 3, clock });
  await queue.sendBodies(Array.from({ length: 20 }, (_, i) => `m${i}`));
  const [a, b, c] = await Promise.all([queue.receive(20), queue.receive(20), other.receive(20)]);
  const bodies = [...a!, ...b!, ...c!].map((m) => m.body).sort();
  expect(bodies).toHaveLength(20);
  expect(new Set(bodies).size).toBe(20);
});

test('releaseAll makes in-flight messages visible again (serve at start-up)', async () => {
  const clock = new ManualClock();
  const { queue } = newQueue(clock);
  await queue.sendBodies(['a', 'b']);
  await queue.receive(10);
  expect(await queue.releaseAll()).toBe(2);
  expect((await queue.receive(10)).map((m) => [m.body, m.receiveCount])).toEqual([['a', 2], ['b', 2]]);
});

test('a send wakes a waiting consumer; the data survives a new connection (another process)', async () => {
  const clock = new ManualClock();
  const { queue, t } = newQueue(clock);
  const woken = queue.waitForMessages();
  await queue.send([{ v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'e', delivery_id: 'd', received_at: 'now', payload: {} }]);
  await woken;
  const other = new SqliteQueue(t.reopen(), { visibilityTimeoutMs: 30_000, maxReceiveCount: 3, clock });
  const [m] = await other.receive(1);
  expect(JSON.parse(m!.body)).toMatchObject({ event_id: 'evt_1' });
});

test('malformed receipts are refused; a closed store is unavailable', async () => {
  const clock = new ManualClock();
  const { queue, t } = newQueue(clock);
  await expect(queue.delete('garbage')).rejects.toMatchObject({ code: 'receipt_invalid' });
  await expect(queue.changeVisibility('1|2|3', 1)).rejects.toMatchObject({ code: 'receipt_invalid' });
  t.store.close();
  await expect(queue.sendBodies(['x'])).rejects.toMatchObject({ code: 'unavailable' });
});

test('a second message for an (event, subscription) still in the queue is not added (a resumed claim re-sends it); once deleted it may be sent again', async () => {
  const clock = new ManualClock();
  const { queue } = newQueue(clock);
  const message = { v: 1 as const, event_id: 'evt_r', subscription: 's', source: 'custom' as const, event: 'e', delivery_id: 'd', received_at: 'now', payload: {} };
  await queue.send([message, { ...message, subscription: 'other' }]);
  await queue.send([message]);
  expect(await queue.size()).toBe(2);
  const received = await queue.receive(10);
  await queue.send([message]);
  expect(await queue.size()).toBe(2);
  for (const m of received) await queue.delete(m.receiptHandle);
  await queue.send([message]);
  expect(await queue.size()).toBe(1);
});

test('the worker\'s dead-letter sink records the message\'s actual receive count and reason, not the maximum', async () => {
  const { queue } = newQueue(new ManualClock(), 5);
  await queue.deadLetterSink().send('{"event_id":"e1"}', 'provider_auth: bad key', 1);
  await queue.deadLetterSink().send('{"event_id":"e2"}', 'malformed queue message');
  const dead = await queue.deadLetters();
  expect(dead.map((d) => [d.receiveCount, d.reason])).toEqual([[1, 'provider_auth: bad key'], [5, 'malformed queue message']]);
});

test('a wake callback is called once at the next send; a cancelled one is not', async () => {
  const { queue } = newQueue(new ManualClock());
  const calls: string[] = [];
  queue.onNextMessages(() => calls.push('kept'));
  const cancel = queue.onNextMessages(() => calls.push('cancelled'));
  cancel();
  await queue.sendBodies(['a']);
  await queue.sendBodies(['b']);
  expect(calls).toEqual(['kept']);
});

test('releaseAll (serve at start-up) leaves a paced retry and a delayed send waiting: only messages in flight come back at once', async () => {
  const clock = new ManualClock();
  const { queue } = newQueue(clock, 5);
  await queue.sendBodies(['in-flight', 'paced']);
  await queue.sendBodies(['debounced'], { delaySeconds: 600 });
  const received = await queue.receive(10);
  expect(received.map((m) => m.body)).toEqual(['in-flight', 'paced']);
  // The worker gave 'paced' back with Retry-After: 120 (a 429), and is then stopped or killed holding 'in-flight'.
  await queue.changeVisibility(received[1]!.receiptHandle, 120);
  expect(await queue.releaseAll()).toBe(1);
  const again = await queue.receive(10);
  expect(again.map((m) => [m.body, m.receiveCount])).toEqual([['in-flight', 2]]);
  await queue.delete(again[0]!.receiptHandle);
  expect(await queue.nextVisibleIn()).toBe(120_000);
  clock.advance(120_000);
  const paced = await queue.receive(10);
  expect(paced.map((m) => [m.body, m.receiveCount])).toEqual([['paced', 2]]);
  await queue.delete(paced[0]!.receiptHandle);
  clock.advance(480_000);
  expect((await queue.receive(10)).map((m) => [m.body, m.receiveCount])).toEqual([['debounced', 1]]);
});
