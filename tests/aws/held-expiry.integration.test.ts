/**
 * On AWS the events table's TTL (`expires_at`) deletes records 14 days on. A record held by
 * a paused subscription (and its message item, which carries the payload) is written
 * without it, by the event log and by ingest's claim transaction alike, so a long pause
 * never loses it; its release writes both items again with 14 days from the release.
 * Against dynalite (which stores the attribute, though it runs no TTL sweep).
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { DynamoDedupStore } from '../../functions/aws/dedup-store';
import { EVENT_RETENTION_SECONDS, messageKey } from '../../functions/aws/event-items';
import { DynamoEventLog } from '../../functions/aws/event-log';
import type { EventRecord, EventStatus } from '../../functions/core/types';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { ManualClock } from '../support/recording-queue';

const DAY = 24 * 3600 * 1000;
let dynamo: TestDynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo.close();
});

const received = Date.parse('2026-03-01T12:00:00Z');
const record = (eventId: string, status: EventStatus): EventRecord => ({
  event_id: eventId, subscription: 'holiday', status, source: 'custom', event: 'e', delivery_id: `d-${eventId}`,
  received_at: new Date(received).toISOString(), updated_at: new Date(received).toISOString(),
  message: { v: 1, event_id: eventId, subscription: 'holiday', source: 'custom', event: 'e', delivery_id: `d-${eventId}`, received_at: new Date(received).toISOString(), payload: { n: 1 } },
});

/** The TTL of the record's item and of its message item (undefined when absent). */
async function ttls(eventId: string): Promise<{ record?: number; message?: number }> {
  const read = async (key: Record<string, unknown>) => {
    const { Item } = await dynamo.client.send(new GetItemCommand({ TableName: dynamo.tables.events, Key: key as never, ConsistentRead: true }));
    expect(Item).toBeDefined();
    return Item?.expires_at?.N === undefined ? undefined : Number(Item.expires_at.N);
  };
  return { record: await read(marshall({ event_id: eventId, subscription: 'holiday' })), message: await read(messageKey(eventId, 'holiday')) };
}

test('held records and their messages carry no TTL, written by the event log or by the claim transaction; queued ones keep 14 days', async () => {
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  await events.putAll([record('evt_held1', 'held'), record('evt_queued1', 'queued')]);
  const dedup = new DynamoDedupStore(dynamo.client, dynamo.tables.dedup, new ManualClock(received), dynamo.tables.events);
  expect(await dedup.claimWithRecords('custom#held2', { eventId: 'evt_held2', ttlSeconds: 3600, staleBefore: received - 60_000 }, [record('evt_held2', 'held')])).toBe(true);

  const fourteenDays = Math.floor(received / 1000) + EVENT_RETENTION_SECONDS;
  expect({ held1: await ttls('evt_held1'), held2: await ttls('evt_held2'), queued: await ttls('evt_queued1') }).toEqual({
    held1: { record: undefined, message: undefined }, held2: { record: undefined, message: undefined }, queued: { record: fourteenDays, message: fourteenDays },
  });
});

test('a record released 20 days after it arrived keeps its message and expires 14 days after the release', async () => {
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  await events.putAll([record('evt_held3', 'held')]);
  const releasedAt = received + 20 * DAY;
  const held = (await events.get('evt_held3', 'holiday'))!;
  expect(held.message.payload).toEqual({ n: 1 });
  expect(await events.putIfStatus({ ...held, status: 'queued', updated_at: new Date(releasedAt).toISOString() }, 'held')).toBe(true);
  const fromRelease = Math.floor(releasedAt / 1000) + EVENT_RETENTION_SECONDS;
  expect(await ttls('evt_held3')).toEqual({ record: fromRelease, message: fromRelease });
  expect((await events.get('evt_held3', 'holiday'))?.message.payload).toEqual({ n: 1 });
});
