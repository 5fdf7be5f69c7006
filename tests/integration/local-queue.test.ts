/** The local queue keeps SQS semantics, durably, over the local store (dynalite). */
import { LocalQueue } from '../../functions/local/queue';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { ManualClock } from '../support/recording-queue';

let dynamo: TestDynamo;
let table = 0;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => dynamo.close());

async function newQueue(clock: ManualClock, maxReceiveCount = 3) {
  table += 1;
  const queue = new LocalQueue(dynamo.client, {
    table: `queue${table}`, deadLetterTable: `deadletters${table}`, visibilityTimeoutMs: 30_000, maxReceiveCount, clock,
  });
  await queue.ensureTables();
  await queue.ensureTables();
  return queue;
}

test('receive returns messages in arrival order and hides them for the visibility timeout', async () => {
  const clock = new ManualClock();
  const queue = await newQueue(clock);
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

test('delaySeconds keeps messages invisible until the delay has passed (as SQS DelaySeconds), at most 900 s', async () => {
  const clock = new ManualClock();
  const queue = await newQueue(clock);
  await queue.sendBodies(['later'], { delaySeconds: 60 });
  await queue.sendBodies(['now']);
  await queue.sendBodies(['capped'], { delaySeconds: 5000 });
  const [now] = await queue.receive(10);
  expect(now?.body).toBe('now');
  await queue.delete(now!.receiptHandle);
  expect(await queue.nextVisibleIn()).toBe(60_000);
  clock.advance(59_999);
  expect(await queue.receive(10)).toEqual([]);
  clock.advance(1);
  const [later] = await queue.receive(10);
  expect(later?.body).toBe('later');
  await queue.delete(later!.receiptHandle);
  clock.advance(900_000 - 60_000 - 1);
  expect(await queue.receive(10)).toEqual([]);
  clock.advance(1);
  expect((await queue.receive(10)).map((m) => m.body)).toEqual(['capped']);
});

test('delete removes a message; a stale receipt does not delete a message received again', async () => {
  const clock = new ManualClock();
  const queue = await newQueue(clock);
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

test('changeVisibility(0) makes a message visible again at once', async () => {
  const clock = new ManualClock();
  const queue = await newQueue(clock);
  await queue.sendBodies(['x']);
  const [m] = await queue.receive(1);
  await queue.changeVisibility(m!.receiptHandle, 0);
  expect((await queue.receive(1)).map((r) => r.receiveCount)).toEqual([2]);
});

test('after maxReceiveCount receives the message moves to the dead-letter table', async () => {
  const clock = new ManualClock();
  const queue = await newQueue(clock, 2);
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
  await queue.sendToDeadLetters('permanent', 1);
  expect((await queue.deadLetters()).map((d) => d.body)).toEqual(['poison', 'permanent']);
});

test('two consumers never receive the same message at once', async () => {
  const clock = new ManualClock();
  const queue = await newQueue(clock);
  await queue.sendBodies(Array.from({ length: 20 }, (_, i) => `m${i}`));
  const [a, b] = await Promise.all([queue.receive(20), queue.receive(20)]);
  const bodies = [...a!, ...b!].map((m) => m.body).sort();
  expect(bodies).toHaveLength(20);
  expect(new Set(bodies).size).toBe(20);
});

test('a send wakes a waiting consumer; the data survives a new queue object (another process)', async () => {
  const clock = new ManualClock();
  const queue = await newQueue(clock);
  const woken = queue.waitForMessages();
  await queue.send([{ v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'e', delivery_id: 'd', received_at: 'now', payload: {} }]);
  await woken;
  const other = new LocalQueue(dynamo.client, { table: `queue${table}`, deadLetterTable: `deadletters${table}`, visibilityTimeoutMs: 30_000, maxReceiveCount: 3, clock });
  const [m] = await other.receive(1);
  expect(JSON.parse(m!.body)).toMatchObject({ event_id: 'evt_1' });
});

test('malformed receipts are refused; an unreachable store is unavailable', async () => {
  const clock = new ManualClock();
  const queue = await newQueue(clock);
  await expect(queue.delete('garbage')).rejects.toMatchObject({ code: 'receipt_invalid' });
  const broken = new LocalQueue(dynamo.client, { table: 'missing', deadLetterTable: 'missing-dlq', visibilityTimeoutMs: 1, maxReceiveCount: 1, clock });
  await expect(broken.sendBodies(['x'])).rejects.toMatchObject({ code: 'unavailable' });
});
