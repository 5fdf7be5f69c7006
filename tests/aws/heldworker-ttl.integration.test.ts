/**
 * An event the worker holds (its subscription was paused after the event was queued, e.g. a
 * debounced event waiting in the queue) is set `held` by a small UpdateItem of its record.
 * That write now also removes the events table's TTL (`expires_at`) from the record and
 * from its message item, so a pause of any length keeps both; a held record the worker
 * carries on to `processing` (a resume ran between its two reads) gets the TTL back on both,
 * 14 days from that write, as a release writes it. The worker's own processMessage over the
 * DynamoDB event log, against dynalite.
 */
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENT_RETENTION_SECONDS, messageKey } from '../../functions/aws/event-items';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { echoAgent } from '../../functions/core/agent/agent';
import { logTarget } from '../../functions/core/delivery/log-target';
import { jsonLogger } from '../../functions/core/log';
import type { SubscriptionStore } from '../../functions/core/ports';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage, Subscription } from '../../functions/core/types';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { eventRecord } from '../../functions/core/worker/record';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { ManualClock } from '../support/recording-queue';

const DAY = 24 * 3600 * 1000;
const queuedAt = Date.parse('2026-05-04T09:00:00Z');
let dynamo: TestDynamo;
let dir: string;

beforeAll(async () => {
  dynamo = await startDynalite();
  dir = mkdtempSync(join(tmpdir(), 'hookagent-heldworker-'));
});
afterAll(async () => {
  await dynamo.close();
  rmSync(dir, { recursive: true, force: true });
});

async function subscription(name: string, state: Subscription['state']): Promise<Subscription> {
  const at = new Date(queuedAt - DAY).toISOString();
  const s: Subscription = { name, events: [], skills: [], deliver: ['log'], state, created_at: at, updated_at: at, secret: 'whsec_x' };
  await new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions).create(s);
  return s;
}

/** A record queued by ingest (both items with the TTL), and its queue message. */
async function queued(eventId: string, name: string): Promise<QueueMessage> {
  const at = new Date(queuedAt).toISOString();
  const message: QueueMessage = { v: 1, event_id: eventId, subscription: name, source: 'custom', event: 'build', delivery_id: `d-${eventId}`, received_at: at, payload: { n: eventId } };
  await new DynamoEventLog(dynamo.client, dynamo.tables.events).putAll([eventRecord(message, 'queued', at)]);
  return message;
}

function workerDeps(clock: ManualClock, subscriptions: SubscriptionStore = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions)): WorkerDeps {
  return {
    events: new DynamoEventLog(dynamo.client, dynamo.tables.events), subscriptions,
    payloads: new FilePayloadStore(join(dir, 'payloads')), agent: echoAgent, skills: new SkillLibrary(dir), targets: { log: logTarget },
    config: { agent: { provider: 'echo', timeout_ms: 1000, max_steps: 4 }, delivery: { timeout_ms: 1000, codehost: {} } },
    clock, logger: jsonLogger(() => undefined), maxReceiveCount: 3,
  };
}

/** The stored items of a record: its status and TTL, and its message item's TTL ('absent': no such item). */
async function stored(eventId: string, name: string): Promise<{ status: string | undefined; record: number | undefined; message: number | undefined | 'absent' }> {
  const get = (key: object) => dynamo.client.send(new GetItemCommand({ TableName: dynamo.tables.events, Key: key as never, ConsistentRead: true }));
  const [{ Item: record }, { Item: message }] = await Promise.all([get(marshall({ event_id: eventId, subscription: name })), get(messageKey(eventId, name))]);
  const ttl = (item: typeof record) => (item?.expires_at?.N === undefined ? undefined : Number(item.expires_at.N));
  return { status: record?.status?.S, record: ttl(record), message: message ? ttl(message) : 'absent' };
}

const ttlFrom = (ms: number) => Math.floor(ms / 1000) + EVENT_RETENTION_SECONDS;

test('the worker holds an event queued before the pause: the record and its message item lose the TTL, one small UpdateItem each', async () => {
  await subscription('night', 'paused');
  const message = await queued('evt_hw_1', 'night');
  expect(await stored('evt_hw_1', 'night')).toEqual({ status: 'queued', record: ttlFrom(queuedAt), message: ttlFrom(queuedAt) });

  // The worker's calls on the events table: which, on which item.
  const calls: string[] = [];
  const client = new Proxy(dynamo.client, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver);
      return (command: { constructor: { name: string }; input: { TableName?: string; Key?: { subscription?: { S?: string } }; UpdateExpression?: string } }) => {
        if (command.input.TableName === dynamo.tables.events) calls.push(`${command.constructor.name} ${command.input.Key?.subscription?.S} ${command.input.UpdateExpression ?? ''}`.trim());
        return target.send(command as never);
      };
    },
  });
  const deps = { ...workerDeps(new ManualClock(queuedAt + 15 * 60_000)), events: new DynamoEventLog(client, dynamo.tables.events) };
  expect(await processMessage(JSON.stringify(message), 1, deps)).toMatchObject({ kind: 'ack', status: 'held' });

  expect(await stored('evt_hw_1', 'night')).toEqual({ status: 'held', record: undefined, message: undefined });
  expect(calls).toEqual([
    'GetItemCommand night',
    'UpdateItemCommand night#message REMOVE expires_at',
    // Status and updated_at, and the TTL removed, in the one write of the record.
    'UpdateItemCommand night SET #a0 = :v0, #a1 = :v1 REMOVE #ttl',
  ]);
});

test('a held record the worker carries on (resumed between its two reads) gets the TTL back on both items, 14 days from that write', async () => {
  const paused = await subscription('flip', 'paused');
  const message = await queued('evt_hw_2', 'flip');
  const store = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  // The worker's first read finds it paused (it holds the event); a resume runs before its second.
  let reads = 0;
  const flipping: SubscriptionStore = Object.assign(Object.create(store) as SubscriptionStore, {
    get: async (name: string) => (++reads === 1 ? paused : { ...paused, state: 'active' as const }),
  });
  const clock = new ManualClock(queuedAt + 3 * DAY);
  const writes: Array<{ status: string | undefined; record: number | undefined; message: number | undefined | 'absent' }> = [];
  const deps = workerDeps(clock, flipping);
  const events = deps.events;
  // What the two items hold after each of the worker's writes.
  deps.events = Object.assign(Object.create(events) as typeof events, {
    update: async (...args: Parameters<typeof events.update>) => {
      await events.update(...args);
      writes.push(await stored('evt_hw_2', 'flip'));
    },
  });

  expect(await processMessage(JSON.stringify(message), 1, deps)).toMatchObject({ kind: 'ack', status: 'delivered' });

  expect(writes[0]).toEqual({ status: 'held', record: undefined, message: undefined });
  expect(writes[1]).toEqual({ status: 'processing', record: ttlFrom(clock.now()), message: ttlFrom(clock.now()) });
  expect(await stored('evt_hw_2', 'flip')).toEqual({ status: 'delivered', record: ttlFrom(clock.now()), message: ttlFrom(clock.now()) });
});

test('a record of the layout before message items (message inline) is held without its TTL, and no message item is made', async () => {
  await subscription('inline', 'paused');
  const at = new Date(queuedAt).toISOString();
  const message: QueueMessage = { v: 1, event_id: 'evt_hw_3', subscription: 'inline', source: 'custom', event: 'build', delivery_id: 'd-3', received_at: at, payload: { n: 3 } };
  const { message: _m, ...rest } = eventRecord(message, 'queued', at);
  await dynamo.client.send(new PutItemCommand({
    TableName: dynamo.tables.events,
    Item: marshall({ ...rest, message: JSON.stringify(message), arrival: `${at}#evt_hw_3`, expires_at: ttlFrom(queuedAt) }),
  }));

  expect(await processMessage(JSON.stringify(message), 1, workerDeps(new ManualClock(queuedAt + 60_000)))).toMatchObject({ kind: 'ack', status: 'held' });

  expect(await stored('evt_hw_3', 'inline')).toEqual({ status: 'held', record: undefined, message: 'absent' });
});

test('a record still held whose message reaches the worker while active (a release sent it, then died before writing it queued): both TTLs back', async () => {
  await subscription('crashed', 'active');
  const at = new Date(queuedAt).toISOString();
  const message: QueueMessage = { v: 1, event_id: 'evt_hw_4', subscription: 'crashed', source: 'custom', event: 'build', delivery_id: 'd-4', received_at: at, payload: { n: 4 } };
  await new DynamoEventLog(dynamo.client, dynamo.tables.events).putAll([eventRecord(message, 'held', at)]);
  expect(await stored('evt_hw_4', 'crashed')).toEqual({ status: 'held', record: undefined, message: undefined });

  const clock = new ManualClock(queuedAt + 40 * DAY);
  expect(await processMessage(JSON.stringify(message), 1, workerDeps(clock))).toMatchObject({ kind: 'ack', status: 'delivered' });

  expect(await stored('evt_hw_4', 'crashed')).toEqual({ status: 'delivered', record: ttlFrom(clock.now()), message: ttlFrom(clock.now()) });
});
