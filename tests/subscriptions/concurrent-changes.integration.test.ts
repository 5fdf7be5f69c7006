/**
 * Hunt 9 D3: two changes to one subscription at the same moment both land. A change reads
 * the subscription, then writes it only while it is still the version it read; when
 * another change landed in between, it reads again and applies itself to that. On the
 * local store (SQLite) and on DynamoDB (dynalite); steps are ordered with a gate on the
 * changer's read, not with sleeps.
 */
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import type { SubscriptionStore } from '../../functions/core/ports';
import { changeSubscription, pauseSubscription, resumeSubscription, type LifecycleDeps } from '../../functions/core/subscriptions/lifecycle';
import type { Subscription } from '../../functions/core/types';
import { SqliteSubscriptionStore } from '../../functions/local/sqlite/subscriptions';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { tempStore, type TestStore } from '../support/local-store';
import { MemoryEventLog } from '../support/memory';
import { ManualClock, RecordingQueue } from '../support/recording-queue';
import { eventually } from '../support/serve';

let dynamo: TestDynamo;
let local: TestStore;
beforeAll(async () => {
  dynamo = await startDynalite();
  local = tempStore();
});
afterAll(async () => {
  local.close();
  await dynamo.close();
});

const stores: Array<[string, () => SubscriptionStore]> = [
  ['the local store', () => new SqliteSubscriptionStore(local.store)],
  ['DynamoDB', () => new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions)],
];

let counter = 0;
const subscription = (name: string, fields: Partial<Subscription> = {}): Subscription => ({
  name, events: [], skills: [], deliver: ['log'], state: 'active', created_at: '2026-11-01T00:00:00.000Z',
  updated_at: '2026-11-01T00:00:00.000Z', secret: 'whsec_old', ...fields,
});

/** The store as one changer sees it: its first read returns, then waits until `open()`. */
function gatedAfterRead(store: SubscriptionStore) {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  const state = { read: false, open };
  const gated: SubscriptionStore = Object.assign(Object.create(store) as SubscriptionStore, {
    get: async (name: string) => {
      const found = await store.get(name);
      if (!state.read) {
        state.read = true;
        await opened;
      }
      return found;
    },
  });
  return { gated, state };
}

const deps = (subscriptions: SubscriptionStore): LifecycleDeps => ({
  // Every write at the same instant: the version must not depend on the clock moving.
  subscriptions, events: new MemoryEventLog(), queue: new RecordingQueue(), clock: new ManualClock(Date.parse('2026-11-01T00:00:00.000Z')),
});

describe.each(stores)('on %s', (_label, open) => {
  test('a change that landed between a resume\'s read and its write is kept, and the resume lands too', async () => {
    const store = open();
    const name = `race${++counter}`;
    await store.create(subscription(name, { state: 'paused' }));
    const { gated, state } = gatedAfterRead(store);
    const resumed = resumeSubscription(deps(gated), name);
    await eventually(() => state.read, 'the resume read the subscription');
    // Another command (`webhook update --description …`) writes meanwhile.
    await store.put(subscription(name, { state: 'paused', description: 'from alice', updated_at: '2026-11-01T00:00:01.000Z' }));
    state.open();
    expect(await resumed).toEqual({ kind: 'resumed', released: 0 });
    const stored = await store.get(name);
    expect({ state: stored?.state, description: stored?.description }).toEqual({ state: 'active', description: 'from alice' });
  });

  /** A pause that has read its subscription, held there while the subscription is deleted. */
  async function pauseReadThenDeleted() {
    const store = open();
    const name = `race${++counter}`;
    await store.create(subscription(name));
    const { gated, state } = gatedAfterRead(store);
    const paused = pauseSubscription(deps(gated), name);
    await eventually(() => state.read, 'the pause read the subscription');
    await store.delete(name);
    return { store, name, state, paused };
  }

  test('a pause whose read came before the subscription was deleted and created again pauses the new one and keeps its secret', async () => {
    const { store, name, state, paused } = await pauseReadThenDeleted();
    const again = subscription(name, { created_at: '2026-11-02T00:00:00.000Z', updated_at: '2026-11-02T00:00:00.000Z', secret: 'whsec_new' });
    await store.create(again);
    state.open();
    expect(await paused).toBe(true);
    const stored = await store.get(name);
    expect({ state: stored?.state, created_at: stored?.created_at, secret: stored?.secret }).toEqual({ state: 'paused', created_at: again.created_at, secret: 'whsec_new' });
  });

  test('a pause whose subscription was deleted meanwhile says so and creates nothing', async () => {
    const { store, name, state, paused } = await pauseReadThenDeleted();
    state.open();
    await expect(paused).rejects.toMatchObject({ code: 'subscription_not_found' });
    expect(await store.get(name)).toBeUndefined();
  });

  test('putIf writes only over the version it was given, and never creates', async () => {
    const store = open();
    const name = `race${++counter}`;
    const first = subscription(name);
    expect(await store.putIf(first, first)).toBe(false);
    expect(await store.get(name)).toBeUndefined();
    await store.create(first);
    const second = { ...first, description: 'two', updated_at: '2026-11-01T00:00:02.000Z' };
    expect(await store.putIf(second, first)).toBe(true);
    // The version `first` is gone: a change read from it is refused, and the stored one stays.
    expect(await store.putIf({ ...first, description: 'stale', updated_at: '2026-11-01T00:00:03.000Z' }, first)).toBe(false);
    expect(await store.putIf(second, { ...second, created_at: '2026-10-01T00:00:00.000Z' })).toBe(false);
    expect((await store.get(name))?.description).toBe('two');
  });

  test('changes made at the same instant each move updated_at on, so each is a new version', async () => {
    const store = open();
    const name = `race${++counter}`;
    await store.create(subscription(name));
    const d = deps(store);
    const read = await store.get(name);
    expect(await pauseSubscription(d, name)).toBe(true);
    const paused = await store.get(name);
    expect(await resumeSubscription(d, name)).toEqual({ kind: 'resumed', released: 0 });
    const resumed = await store.get(name);
    expect(new Set([read?.updated_at, paused?.updated_at, resumed?.updated_at]).size).toBe(3);
    expect(await store.putIf({ ...read!, description: 'stale' }, read!)).toBe(false);
  });

  test('a change that loses every race to other writers gives up with store_busy and writes nothing', async () => {
    const store = open();
    const name = `race${++counter}`;
    await store.create(subscription(name));
    let writes = 0;
    // Another writer lands between every read and write of this change.
    const contended: SubscriptionStore = Object.assign(Object.create(store) as SubscriptionStore, {
      get: async (n: string) => {
        const found = await store.get(n);
        writes += 1;
        await store.put({ ...found!, description: `other ${writes}`, updated_at: `2026-11-01T00:01:0${writes}.000Z` });
        return found;
      },
    });
    await expect(changeSubscription(deps(contended), name, (s) => ({ ...s, state: 'paused' }))).rejects.toMatchObject({ code: 'store_busy' });
    const stored = await store.get(name);
    expect({ writes, state: stored?.state, description: stored?.description }).toEqual({ writes: 5, state: 'active', description: 'other 5' });
  });
});
