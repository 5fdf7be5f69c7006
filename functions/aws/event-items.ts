/**
 * How an event record is laid out in the DynamoDB `events` table (event-log.ts has why):
 * the record's item and its message's item, and back. The dedup store's claim transaction
 * writes the same two items. Also the table's paged and conditional calls that event-log.ts
 * and held-items.ts share.
 */
import {
  BatchGetItemCommand, BatchWriteItemCommand, DeleteItemCommand, PutItemCommand, QueryCommand, type AttributeValue, type DynamoDBClient, type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { messageJson, rememberMessageText } from '../core/message-json';
import { isConditionalFailure } from './dynamo';
import type { EventRecord, QueueMessage } from '../core/types';

export const EVENT_RETENTION_SECONDS = 14 * 24 * 3600;

/**
 * The TTL (epoch seconds) of a record's two items: 14 days from this write (its arrival,
 * its release, its end when the worker writes it whole). None while it is held: a paused
 * subscription keeps its events until `resume`, however long, and the release writes both
 * items again with it. Queued and processing records keep theirs: no queue keeps a
 * message longer (the queue 4 days, the dead-letter queue 14 from the first send; a
 * redrive writes the record again).
 */
export function eventExpiresAt(record: Pick<EventRecord, 'status' | 'received_at' | 'updated_at'>): number | undefined {
  if (record.status === 'held') return undefined;
  return Math.floor((Date.parse(record.updated_at) || Date.parse(record.received_at) || Date.now()) / 1000) + EVENT_RETENTION_SECONDS;
}

export type Item = Record<string, AttributeValue>;

/** The sort key of an event's message item. */
export const MESSAGE_SUFFIX = '#message';
export const messageKey = (eventId: string, subscription: string): Item => ({ event_id: { S: eventId }, subscription: { S: `${subscription}${MESSAGE_SUFFIX}` } });
export const isMessageItem = (item: Item) => item.subscription?.S?.endsWith(MESSAGE_SUFFIX) === true;

/** A record's two items, its message's first (also written by the dedup store's claim transaction). */
export function eventItems(record: EventRecord): [message: Item, record: Item] {
  const { message, ...rest } = record;
  const expires = eventExpiresAt(record);
  return [
    { ...messageKey(record.event_id, record.subscription), message: { S: messageJson(message) }, ...(expires === undefined ? {} : { expires_at: { N: String(expires) } }) },
    // A PutItem replaces the whole item: a held record written over one with a TTL loses it.
    marshall({ ...rest, arrival: `${record.received_at}#${record.event_id}`, expires_at: expires }, { removeUndefinedValues: true }),
  ];
}

/** Conditional writes sent at once (deleteHeld, deleteUnstarted, keepHeld). */
export const WRITES_AT_ONCE = 10;

/** A PutItem's item and the condition it is written under. */
export interface ConditionalPut {
  Item: Item;
  ConditionExpression: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues: Item;
}

/**
 * A record from its item and its message (the message item's text, or a message the
 * caller has). A record whose message item is gone (it cannot be written after the
 * record, but TTL deletes the two separately) gets a message without a payload.
 */
export function fromItem(item: Item, message?: string | QueueMessage): EventRecord {
  const { message: inline, arrival: _arrival, expires_at: _expires, ...rest } = unmarshall(item);
  const text = (inline as string | undefined) ?? message;
  let parsed: QueueMessage;
  if (typeof text === 'string') {
    parsed = JSON.parse(text) as QueueMessage;
    rememberMessageText(parsed, text);
  } else {
    const r = rest as EventRecord;
    parsed = text ?? {
      v: 1, event_id: r.event_id, subscription: r.subscription, source: r.source, event: r.event, ...(r.action ? { action: r.action } : {}),
      delivery_id: r.delivery_id, received_at: r.received_at, payload_ref: '',
    };
  }
  return { ...rest, message: parsed } as EventRecord;
}

/** Items of one event's partition (records and message items) as records, each with its message. */
export function joined(items: Item[]): EventRecord[] {
  const messages = new Map<string, string>();
  for (const item of items) if (isMessageItem(item)) messages.set((item.subscription?.S ?? '').slice(0, -MESSAGE_SUFFIX.length), item.message?.S ?? '');
  return items.filter((item) => !isMessageItem(item)).map((item) => fromItem(item, messages.get(item.subscription?.S ?? '')));
}

/** The events table and the client that reaches it. */
export interface EventTable {
  client: DynamoDBClient;
  table: string;
}

export type QueryInput = Omit<ConstructorParameters<typeof QueryCommand>[0], 'TableName'>;

/** Every page of a Query (up to `limit` items). */
export async function queryItems({ client, table }: EventTable, input: QueryInput, limit = Infinity): Promise<Item[]> {
  const items: Item[] = [];
  let start: Item | undefined;
  do {
    const page = await client.send(new QueryCommand({
      ...input, TableName: table,
      ...(Number.isFinite(limit) ? { Limit: limit - items.length } : {}),
      ...(start ? { ExclusiveStartKey: start } : {}),
    }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start && items.length < limit);
  return items;
}

/** The items of these keys that exist, read consistently (BatchGetItem, 100 keys a call, resending what DynamoDB leaves unprocessed). */
export async function batchGet({ client, table }: EventTable, allKeys: Item[]): Promise<Item[]> {
  const found: Item[] = [];
  for (let i = 0; i < allKeys.length; i += 100) {
    let keys = allKeys.slice(i, i + 100);
    for (let attempt = 0; keys.length > 0; attempt++) {
      if (attempt === 5) throw new Error(`${keys.length} reads left unprocessed after 5 attempts`);
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      const result = await client.send(new BatchGetItemCommand({ RequestItems: { [table]: { Keys: keys, ConsistentRead: true } } }));
      found.push(...(result.Responses?.[table] ?? []));
      keys = (result.UnprocessedKeys?.[table]?.Keys ?? []) as Item[];
    }
  }
  return found;
}

/** A conditional PutItem; false when the condition does not hold. */
export async function putIf({ client, table }: EventTable, put: ConditionalPut): Promise<boolean> {
  try {
    await client.send(new PutItemCommand({ TableName: table, ...put }));
    return true;
  } catch (error) {
    if (isConditionalFailure(error)) return false;
    throw error;
  }
}

/** BatchWriteItem in chunks of 25, resending what DynamoDB leaves unprocessed. */
export async function batchWrite({ client, table }: EventTable, requests: WriteRequest[]): Promise<void> {
  for (let i = 0; i < requests.length; i += 25) {
    let pending: WriteRequest[] = requests.slice(i, i + 25);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === 5) throw new Error(`${pending.length} writes left unprocessed after 5 attempts`);
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      const result = await client.send(new BatchWriteItemCommand({ RequestItems: { [table]: pending } }));
      pending = result.UnprocessedItems?.[table] ?? [];
    }
  }
}

/** An UpdateItem's parts for these attributes: each one set, or removed where undefined. `#pk` names the partition key. */
export function changedAttributes(changes: Record<string, unknown>): { names: Record<string, string>; values: Item; set: string[]; remove: string[] } {
  const names: Record<string, string> = { '#pk': 'event_id' };
  const values: Item = {};
  const set: string[] = [];
  const remove: string[] = [];
  Object.entries(changes).forEach(([key, value], i) => {
    names[`#a${i}`] = key;
    if (value === undefined) {
      remove.push(`#a${i}`);
    } else {
      values[`:v${i}`] = marshall({ v: value }, { removeUndefinedValues: true }).v as AttributeValue;
      set.push(`#a${i} = :v${i}`);
    }
  });
  return { names, values, set, remove };
}

/**
 * A conditional DeleteItem of each record (a few at once), then the message items of
 * those deleted; a message item left by a crash in between expires with its TTL (a held
 * record's has none and stays).
 * Returns the keys deleted.
 */
export async function deleteWhere<K extends { event_id: string; subscription: string }>(t: EventTable, keys: K[], condition: string, values: Item): Promise<K[]> {
  const deleted: K[] = [];
  for (let i = 0; i < keys.length; i += WRITES_AT_ONCE) {
    await Promise.all(keys.slice(i, i + WRITES_AT_ONCE).map(async (key) => {
      try {
        await t.client.send(new DeleteItemCommand({
          TableName: t.table, Key: marshall({ event_id: key.event_id, subscription: key.subscription }), ConditionExpression: condition,
          ExpressionAttributeNames: { '#status': 'status' }, ExpressionAttributeValues: values,
        }));
        deleted.push(key);
      } catch (error) {
        if (!isConditionalFailure(error)) throw error;
      }
    }));
  }
  await batchWrite(t, deleted.map(({ event_id, subscription }) => ({ DeleteRequest: { Key: messageKey(event_id, subscription) } })));
  return deleted;
}
