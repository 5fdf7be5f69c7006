/**
 * Held records written on AWS by an earlier version carry the events table's TTL
 * (`expires_at`, 14 days after arrival) on the record and on its message item, so a pause
 * longer than that lost them: `resume` released nothing for them. `pause` (also of a
 * subscription already paused) now removes the TTL from every record of the subscription
 * still held and from its message item, each written only while the record is still held
 * and unchanged, so one released meanwhile keeps the TTL its release wrote. Against
 * dynalite (which stores the attribute, though it runs no TTL sweep).
 */
import { PutItemCommand, GetItemCommand, QueryCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { EVENT_RETENTION_SECONDS, messageKey } from '../../functions/aws/event-items';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { pauseAndKeepHeld, pauseSubscription, resumeSubscription, type LifecycleDeps } from '../../functions/core/subscriptions/lifecycle';
import type { EventRecord, EventStatus, Subscription } from '../../functions/core/types';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { ManualClock, RecordingQueue } from '../support/recording-queue';

const DAY = 24 * 3600 * 1000;
const received = Date.parse('2026-03-01T12:00:00Z');
/** The TTL an earlier version wrote on both items of a record: 14 days after its arrival. */
const OLD_TTL = Math.floor(received / 1000) + EVENT_RETENTION_SECONDS;

let dynamo: TestDynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo.close();
});

function record(eventId: string, subscription: string, status: EventStatus, payload: Record<string, unknown> = { n: eventId }): EventRecord {
  const at = new Date(received).toISOString();
  return {
    event_id: eventId, subscription, status, source: 'custom', event: 'e', delivery_id: `d-${eventId}`, received_at: at, updated_at: at,
    message: { v: 1, event_id: eventId, subscription, source: 'custom', event: 'e', delivery_id: `d-${eventId}`, received_at: at, payload },
  };
}

/**
 * A held record as an earlier version wrote it: both items with the TTL; `inline`: the
 * layout before message items, the message in the record's own item.
 */
async function writeEarlierHeld(r: EventRecord, inline = false): Promise<void> {
  const { message, ...rest } = r;
  const base = { ...rest, arrival: `${r.received_at}#${r.event_id}`, expires_at: OLD_TTL };
  const put = (item: Record<string, unknown>) => dynamo.client.send(new PutItemCommand({ TableName: dynamo.tables.events, Item: item as never }));
  if (inline) return void (await put(marshall({ ...base, message: JSON.stringify(message) })));
  await put({ ...messageKey(r.event_id, r.subscription), message: { S: JSON.stringify(message) }, expires_at: { N: String(OLD_TTL) } });
  await put(marshall(base));
}

async function ttlOf(key: Record<string, unknown>): Promise<number | undefined | 'absent'> {
  const { Item } = await dynamo.client.send(new GetItemCommand({ TableName: dynamo.tables.events, Key: key as never, ConsistentRead: true }));
  if (!Item) return 'absent';
  return Item.expires_at?.N === undefined ? undefined : Number(Item.expires_at.N);
}
/** The TTL of a record's item and of its message item (undefined: none; 'absent': no such item). */
const ttls = async (eventId: string, subscription: string) => ({
  record: await ttlOf(marshall({ event_id: eventId, subscription })), message: await ttlOf(messageKey(eventId, subscription)),
});

const subscriptions = () => new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
async function pausedSubscription(name: string): Promise<void> {
  const at = new Date(received - DAY).toISOString();
  await subscriptions().create({ name, events: [], skills: [], deliver: ['log'], state: 'paused', created_at: at, updated_at: at, secret: 'whsec_x' } as Subscription);
}
function deps(client: DynamoDBClient = dynamo.client, queue = new RecordingQueue()): LifecycleDeps {
  return { subscriptions: subscriptions(), events: new DynamoEventLog(client, dynamo.tables.events), queue, clock: new ManualClock(received + 20 * DAY) };
}

/** The client, except that `before` runs once, just before the `nth` PutItem it is asked to send. */
function interleaved(nth: number, before: () => Promise<void>): { client: DynamoDBClient; commands: string[] } {
  const commands: string[] = [];
  let puts = 0;
  const client = new Proxy(dynamo.client, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver);
      return async (command: { constructor: { name: string } }) => {
        commands.push(command.constructor.name);
        if (command instanceof PutItemCommand && ++puts === nth) await before();
        return target.send(command as never);
      };
    },
  });
  return { client, commands };
}

test('pause of a paused subscription removes the TTL of its held records of an earlier version and of their messages; nothing else changes', async () => {
  await pausedSubscription('holiday');
  await writeEarlierHeld(record('evt_old1', 'holiday', 'held'));
  await writeEarlierHeld(record('evt_old2', 'holiday', 'held'));
  await writeEarlierHeld(record('evt_old3', 'holiday', 'held'), true);
  await writeEarlierHeld(record('evt_other', 'elsewhere', 'held'));
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  // Written by this version: held without a TTL, queued with 14 days.
  await events.putAll([record('evt_new', 'holiday', 'held'), record('evt_queued', 'holiday', 'queued')]);

  // As `hookagent webhook pause` calls it (cli/webhook/state.ts): already paused.
  expect(await pauseSubscription(deps(), 'holiday')).toBe(false);

  const none = { record: undefined, message: undefined };
  expect({
    old1: await ttls('evt_old1', 'holiday'), old2: await ttls('evt_old2', 'holiday'), old3: await ttls('evt_old3', 'holiday'),
    fresh: await ttls('evt_new', 'holiday'), queued: await ttls('evt_queued', 'holiday'), other: await ttls('evt_other', 'elsewhere'),
  }).toEqual({
    old1: none, old2: none, old3: { record: undefined, message: 'absent' },
    fresh: none, queued: { record: OLD_TTL, message: OLD_TTL }, other: { record: OLD_TTL, message: OLD_TTL },
  });
  // Kept whole: the payloads are there, and a second pause has nothing left to keep.
  expect((await events.get('evt_old3', 'holiday'))?.message.payload).toEqual({ n: 'evt_old3' });
  expect(await pauseAndKeepHeld(deps(), 'holiday')).toEqual({ paused: false, kept: 0 });

  // Resumed 20 days after they arrived: every held event goes out with its payload.
  const queue = new RecordingQueue();
  expect(await resumeSubscription(deps(dynamo.client, queue), 'holiday')).toMatchObject({ kind: 'resumed', released: 4 });
  expect(queue.sent.map((m) => [m.event_id, m.payload])).toEqual(['evt_new', 'evt_old1', 'evt_old2', 'evt_old3'].map((id) => [id, { n: id }]));
});

test.each([
  ['before the message item is written', 1],
  ['between the message item and the record', 2],
])('a record released meanwhile (%s) keeps the TTL its release wrote, on both items', async (_when, nth) => {
  const name = `race-${nth}`;
  await pausedSubscription(name);
  await writeEarlierHeld(record('evt_race', name, 'held'));
  const releasedAt = received + 20 * DAY;
  const release = async () => {
    const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
    const held = (await events.get('evt_race', name))!;
    expect(await events.putIfStatus({ ...held, status: 'queued', updated_at: new Date(releasedAt).toISOString() }, 'held')).toBe(true);
  };
  const { client, commands } = interleaved(nth, release);

  expect(await pauseAndKeepHeld(deps(client), name)).toEqual({ paused: false, kept: 0 });

  expect(commands).toContain('PutItemCommand');
  const fromRelease = Math.floor(releasedAt / 1000) + EVENT_RETENTION_SECONDS;
  expect(await ttls('evt_race', name)).toEqual({ record: fromRelease, message: fromRelease });
});

test('every held record is kept however many pages the index answers in', async () => {
  await pausedSubscription('backlog');
  // Records of the layout before message items (the message inline, here ~20 KB each): 60 of them are over one 1 MB page.
  const big = 'x'.repeat(20_000);
  for (let i = 0; i < 60; i++) await writeEarlierHeld(record(`evt_b${String(i).padStart(3, '0')}`, 'backlog', 'held', { big, i }), true);
  const { client, commands } = interleaved(0, async () => undefined);

  expect(await pauseAndKeepHeld(deps(client), 'backlog')).toEqual({ paused: false, kept: 60 });

  expect(commands.filter((c) => c === QueryCommand.name).length).toBeGreaterThan(1);
  const left = await Promise.all(Array.from({ length: 60 }, (_, i) => ttlOf(marshall({ event_id: `evt_b${String(i).padStart(3, '0')}`, subscription: 'backlog' }))));
  expect(left.filter((ttl) => ttl !== undefined)).toEqual([]);
});

test('pause says how many it kept: one of an earlier version, none written by this one', async () => {
  await pausedSubscription('counted');
  await writeEarlierHeld(record('evt_c1', 'counted', 'held'));
  await new DynamoEventLog(dynamo.client, dynamo.tables.events).putAll([record('evt_c2', 'counted', 'held')]);

  expect(await pauseAndKeepHeld(deps(), 'counted')).toEqual({ paused: false, kept: 1 });
});

test('pausing an active subscription keeps the held records it still has from an earlier version too', async () => {
  const at = new Date(received - DAY).toISOString();
  await subscriptions().create({ name: 'was-active', events: [], skills: [], deliver: ['log'], state: 'active', created_at: at, updated_at: at, secret: 'whsec_x' } as Subscription);
  await writeEarlierHeld(record('evt_left', 'was-active', 'held'));

  expect(await pauseAndKeepHeld(deps(), 'was-active')).toEqual({ paused: true, kept: 1 });
  expect(await ttls('evt_left', 'was-active')).toEqual({ record: undefined, message: undefined });
});
