/**
 * Hunt 10 (D1), the EventLog contract both halves rely on, for each adapter (SQLite, DynamoDB
 * over dynalite, the tests' in-memory one): ingest's withdrawal after a failed queue send
 * deletes only records no worker has started, each checked in its delete; the worker's
 * first write (`existing`) reports a record that is gone instead of passing silently. So
 * either the withdrawal or the worker's run happens, never both.
 */
import { DynamoEventLog } from '../../functions/aws/event-log';
import type { EventLog } from '../../functions/core/ports';
import type { EventRecord } from '../../functions/core/types';
import { RecordGone } from '../../functions/core/worker/record';
import { SqliteEventLog } from '../../functions/local/sqlite/event-log';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { tempStore, type TestStore } from '../support/local-store';
import { MemoryEventLog } from '../support/memory';

let dynamo: TestDynamo;
let store: TestStore;
beforeAll(async () => {
  dynamo = await startDynalite();
  store = tempStore();
});
afterAll(async () => {
  store.close();
  await dynamo.close();
});

const adapters: Array<[string, () => EventLog]> = [
  ['SQLite', () => new SqliteEventLog(store.store)],
  ['DynamoDB', () => new DynamoEventLog(dynamo.client, dynamo.tables.events)],
  ['in-memory', () => new MemoryEventLog()],
];

let seq = 0;
function record(subscription: string, extra: Partial<EventRecord> = {}): EventRecord {
  const eventId = `evt_withdraw_${++seq}`;
  const at = '2026-11-24T00:00:00.000Z';
  return {
    event_id: eventId, subscription, status: 'queued', source: 'github', event: 'issues', delivery_id: `d-${seq}`, received_at: at, updated_at: at, attempts: 0,
    message: { v: 1, event_id: eventId, subscription, source: 'github', event: 'issues', delivery_id: `d-${seq}`, received_at: at, payload: { n: seq } }, ...extra,
  };
}
const keyOf = (r: EventRecord) => ({ event_id: r.event_id, subscription: r.subscription });

describe.each(adapters)('%s event log', (_name, open) => {
  test('deleteUnstarted deletes queued records no worker has started (and counts absent ones as deleted); returns those a worker has', async () => {
    const log = open();
    const unstarted = record('a');
    const processing = record('b', { status: 'processing', attempts: 1 });
    const givenBack = record('c', { attempts: 1 });
    const delivered = record('d', { status: 'delivered', attempts: 1 });
    const absent = record('e');
    await log.putAll([unstarted, processing, givenBack, delivered]);
    const left = await log.deleteUnstarted([unstarted, processing, givenBack, delivered, absent].map(keyOf));
    expect(left).toEqual([processing, givenBack, delivered].map(keyOf));
    expect(await log.get(unstarted.event_id, 'a')).toBeUndefined();
    expect((await Promise.all([processing, givenBack, delivered].map(async (r) => (await log.get(r.event_id, r.subscription))?.status)))).toEqual(['processing', 'queued', 'delivered']);
    expect(await log.deleteUnstarted([])).toEqual([]);
  });

  test('update with `existing` throws RecordGone for a record that is gone, writing nothing; without it, an absent record is left absent', async () => {
    const log = open();
    const gone = record('a');
    await expect(log.update(gone.event_id, 'a', { status: 'processing', attempts: 1 }, { existing: true })).rejects.toBeInstanceOf(RecordGone);
    await expect(log.update(gone.event_id, 'a', { status: 'processing', attempts: 1 })).resolves.toBeUndefined();
    expect(await log.get(gone.event_id, 'a')).toBeUndefined();
    const there = record('a');
    await log.putAll([there]);
    await log.update(there.event_id, 'a', { status: 'processing', attempts: 1 }, { existing: true });
    expect(await log.get(there.event_id, 'a')).toMatchObject({ status: 'processing', attempts: 1 });
    // Started now: ingest's withdrawal leaves it.
    expect(await log.deleteUnstarted([keyOf(there)])).toEqual([keyOf(there)]);
  });

  test('deleteHeld still counts only held records it deleted', async () => {
    const log = open();
    const held = record('a', { status: 'held' });
    const queued = record('b');
    await log.putAll([held, queued]);
    expect(await log.deleteHeld([held, queued, record('c', { status: 'held' })].map(keyOf))).toBe(1);
    expect(await log.get(queued.event_id, 'b')).toMatchObject({ status: 'queued' });
  });
});
