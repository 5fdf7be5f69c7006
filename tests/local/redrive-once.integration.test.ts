/**
 * `webhook redrive` on the local store moves each dead letter once: the letter leaves the
 * dead-letter table and its message enters the queue in one transaction. Before, it was
 * sent, then removed, in two: two redrives at once (two terminals, or a retry of one that
 * seemed stuck) both sent it, and a redrive killed between the two left the letter listed
 * although its message was queued (and delivered), so the next redrive sent it again.
 */
import { SqliteDeadLetterQueue } from '../../functions/local/sqlite/dead-letter-queue';
import { SqliteQueue } from '../../functions/local/sqlite/queue';
import { tempStore, type TestStore } from '../support/local-store';
import { ManualClock } from '../support/recording-queue';

const stores: TestStore[] = [];
afterAll(() => stores.forEach((s) => s.close()));

const letter = JSON.stringify({ v: 1, event_id: 'evt_1', subscription: 's', source: 'custom', event: 'e', delivery_id: 'd', received_at: '2026-01-01T00:00:00.000Z', payload: {} });

test('two redrives at once (two processes) queue the letter once and leave no letter behind', async () => {
  const clock = new ManualClock();
  const t = tempStore();
  stores.push(t);
  const other = t.reopen();
  const options = { visibilityTimeoutMs: 30_000, maxReceiveCount: 5, clock };
  const queueA = new SqliteQueue(t.store, options);
  const queueB = new SqliteQueue(other, options);
  await queueA.sendToDeadLetters(letter, 5, 'received 5 times without success');
  const a = new SqliteDeadLetterQueue(t.store, queueA);
  const b = new SqliteDeadLetterQueue(other, queueB);
  // Both list the letter before either moves it, as two CLI processes started together do.
  let listed = 0;
  let bothListed: () => void = () => undefined;
  const barrier = new Promise<void>((resolve) => (bothListed = resolve));
  const beforeRequeue = async () => {
    listed += 1;
    if (listed === 2) bothListed();
    await barrier;
  };
  const [movedA, movedB] = await Promise.all([a.redrive(() => true, beforeRequeue), b.redrive(() => true, beforeRequeue)]);
  expect(await queueA.size()).toBe(1);
  expect(movedA.length + movedB.length).toBe(1);
  expect(await a.list()).toEqual([]);
});

test('a redrive whose letter is gone meanwhile queues nothing; bad receipts of the moved message are refused as before', async () => {
  const clock = new ManualClock();
  const t = tempStore();
  stores.push(t);
  const queue = new SqliteQueue(t.store, { visibilityTimeoutMs: 30_000, maxReceiveCount: 5, clock });
  await queue.sendToDeadLetters('not json', 1, 'malformed queue message');
  await queue.sendToDeadLetters(letter, 5);
  const dlq = new SqliteDeadLetterQueue(t.store, queue);
  // The malformed one names no event: not selected, stays.
  const moved = await dlq.redrive((l) => l.event_id !== undefined, async () => {
    t.store.db.prepare('DELETE FROM dead_letters WHERE body = ?').run(letter);
  });
  expect(moved).toEqual([]);
  expect(await queue.size()).toBe(0);
  expect((await dlq.list()).map((l) => l.body)).toEqual(['not json']);
  await expect(queue.changeVisibility('nope', 1)).rejects.toMatchObject({ code: 'receipt_invalid' });
});
