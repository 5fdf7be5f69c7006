/** The LeaseStore port: the DynamoDB adapter on dynalite and the in-memory one used by tests behave alike. */
import { DynamoLeaseStore } from '../../functions/aws/lease-store';
import type { LeaseStore } from '../../functions/core/ports';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { MemoryLeaseStore } from '../support/memory-lease';
import { ManualClock } from '../support/recording-queue';

let dynamo: TestDynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => dynamo.close());

const adapters: Array<[string, (clock: ManualClock) => LeaseStore]> = [
  ['dynamodb', (clock) => new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, clock)],
  ['memory', (clock) => new MemoryLeaseStore(clock)],
];

describe.each(adapters)('%s lease store', (kind, make) => {
  test('one holder at a time; the holder renews; release only by the holder; expiry hands it over', async () => {
    const clock = new ManualClock();
    const leases = make(clock);
    const evt = `evt_lease_${kind}`;
    expect(await leases.acquire(evt, 'sub', 'a', 10_000)).toBe(true);
    expect(await leases.acquire(evt, 'sub', 'b', 10_000)).toBe(false);
    // Another subscription of the same event is another lease.
    expect(await leases.acquire(evt, 'other', 'b', 10_000)).toBe(true);
    expect(await leases.acquire(evt, 'sub', 'a', 10_000)).toBe(true);
    await leases.release(evt, 'sub', 'b');
    expect(await leases.acquire(evt, 'sub', 'b', 10_000)).toBe(false);
    clock.advance(10_000);
    expect(await leases.acquire(evt, 'sub', 'b', 10_000)).toBe(true);
    // The old holder's release no longer touches the new holder's lease.
    await leases.release(evt, 'sub', 'a');
    expect(await leases.acquire(evt, 'sub', 'c', 10_000)).toBe(false);
    await leases.release(evt, 'sub', 'b');
    expect(await leases.acquire(evt, 'sub', 'c', 10_000)).toBe(true);
  });
});

test('dynamodb: leases taken before `abandonedBefore` (a process that is gone) are taken over at once', async () => {
  const clock = new ManualClock();
  const before = new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, clock);
  expect(await before.acquire('evt_abandoned', 'sub', 'dead-process', 600_000)).toBe(true);
  clock.advance(1_000);
  const restarted = new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, clock, { abandonedBefore: clock.now() });
  expect(await restarted.acquire('evt_abandoned', 'sub', 'new-process', 600_000)).toBe(true);
  expect(await restarted.acquire('evt_abandoned', 'sub', 'another', 600_000)).toBe(false);
});

test('dynamodb: a store that cannot be reached is `unavailable` (retryable), not "held by another"', async () => {
  const { createDynamoClient } = await import('../../functions/aws/dynamo');
  const leases = new DynamoLeaseStore(createDynamoClient({ endpoint: 'http://127.0.0.1:9' }), 'nowhere', new ManualClock());
  await expect(leases.acquire('evt', 'sub', 'h', 1000)).rejects.toMatchObject({ code: 'unavailable', retryable: true });
});
