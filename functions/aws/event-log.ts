/**
 * EventLog over the DynamoDB `events` table: one item per (event, subscription), kept
 * 14 days (TTL attribute `expires_at`; none while held: event-items.ts), listed per
 * subscription through the `by_subscription` index ordered by arrival.
 *
 * The event's queue message (with its payload, ~20 KB for a pull request) is an item of
 * its own beside the record, sort key `{subscription}#message` (names cannot hold '#'),
 * without `arrival`, so it is not in the index. DynamoDB bills a write by the whole item's
 * size, and the index rewrites its copy of the item on every change: with the message in
 * the record, each of the worker's transitions cost ~22 write units on the table and 22
 * on the index, now 1 and 1; the message is written once. Records written before kept the
 * message inline (attribute `message`) and are read as they are.
 */
import {
  BatchGetItemCommand, BatchWriteItemCommand, DeleteItemCommand, GetItemCommand, PutItemCommand, QueryCommand, UpdateItemCommand, type AttributeValue, type DynamoDBClient, type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { EventLog, EventSearch, EventSearchPage, RecordedSubscriptions, UpdateOptions } from '../core/ports';
import type { EventRecord, EventStatus, QueueMessage } from '../core/types';
import { RecordGone } from '../core/worker/record';
import { isConditionalFailure, storeUnavailable } from './dynamo';
import { MESSAGE_SUFFIX, eventItems, fromItem, joined, keptItems, messageKey, type ConditionalPut, type Item } from './event-items';
import { RecordedNames, searchSubscription } from './event-search';
import { EVENTS_BY_SUBSCRIPTION_INDEX } from './tables';

/** Conditional writes sent at once by deleteHeld, deleteUnstarted and keepHeld. */
const WRITES_AT_ONCE = 10;

export class DynamoEventLog implements EventLog {
  /** `namesScanItems`: records read per call while looking for deleted subscriptions' names (event-search.ts). */
  constructor(private readonly client: DynamoDBClient, private readonly table: string, private readonly options: { namesScanItems?: number } = {}) {}

  /** The console's list (event-search.ts); the names' scan state lives as long as this adapter. */
  private names: RecordedNames | undefined;
  searchSubscription = (subscription: string, search: EventSearch): Promise<EventSearchPage> => searchSubscription(this.client, this.table, subscription, search);
  recordedSubscriptions = (known: string[]): Promise<RecordedSubscriptions> => (this.names ??= new RecordedNames(this.client, this.table, this.options.namesScanItems)).names(known);

  /** The messages first, then the records: a record is never stored without its message. */
  async putAll(records: EventRecord[]): Promise<void> {
    const items = records.map(eventItems);
    await this.batchWrite(items.map(([message]) => ({ PutRequest: { Item: message } })));
    await this.batchWrite(items.map(([, record]) => ({ PutRequest: { Item: record } })));
  }

  async deleteAll(keys: Array<{ event_id: string; subscription: string }>): Promise<void> {
    await this.batchWrite(keys.flatMap(({ event_id, subscription }) => [
      { DeleteRequest: { Key: marshall({ event_id, subscription }) } }, { DeleteRequest: { Key: messageKey(event_id, subscription) } },
    ]));
  }

  async deleteHeld(keys: Array<{ event_id: string; subscription: string }>): Promise<number> {
    return (await this.deleteWhere(keys, '#status = :held', { ':held': { S: 'held' } })).length;
  }

  /**
   * Records of an earlier version still held carry the TTL (event-items.ts): found through
   * the index, read again consistently, and written back without it (keptItems). PutItem,
   * not UpdateItem `REMOVE`: the CLI's policy allows PutItem on this table.
   */
  async keepHeld(subscription: string): Promise<number> {
    try {
      const held = await this.queryItems({
        IndexName: EVENTS_BY_SUBSCRIPTION_INDEX, KeyConditionExpression: 'subscription = :s',
        FilterExpression: '#status = :held AND attribute_exists(expires_at)', ProjectionExpression: 'event_id',
        ExpressionAttributeNames: { '#status': 'status' }, ExpressionAttributeValues: { ':s': { S: subscription }, ':held': { S: 'held' } },
      });
      let kept = 0;
      for (let i = 0; i < held.length; i += WRITES_AT_ONCE) {
        const ids = held.slice(i, i + WRITES_AT_ONCE).map((item) => item.event_id?.S ?? '');
        const items = await this.batchGet(ids.flatMap((id) => [marshall({ event_id: id, subscription }), messageKey(id, subscription)]));
        const item = (id: string, sortKey: string) => items.find((it) => it.event_id?.S === id && it.subscription?.S === sortKey);
        const written = await Promise.all(ids.map(async (id) => {
          let keptThis = false;
          // The record's put comes last: it tells whether the record was kept.
          for (const put of keptItems(item(id, subscription), item(id, `${subscription}${MESSAGE_SUFFIX}`))) keptThis = await this.putIf(put);
          return keptThis;
        }));
        kept += written.filter(Boolean).length;
      }
      return kept;
    } catch (error) {
      throw storeUnavailable('The event log', error);
    }
  }

  /** As deleteHeld; an absent item passes the condition (its DeleteItem deletes nothing). */
  async deleteUnstarted(keys: Array<{ event_id: string; subscription: string }>): Promise<Array<{ event_id: string; subscription: string }>> {
    const deleted = await this.deleteWhere(keys, 'attribute_not_exists(#status) OR (#status = :queued AND (attribute_not_exists(attempts) OR attempts = :zero))', { ':queued': { S: 'queued' }, ':zero': { N: '0' } });
    return keys.filter((key) => !deleted.includes(key));
  }

  /**
   * A conditional DeleteItem of each record (a few at once), then the message items of
   * those deleted; a message item left by a crash in between expires with its TTL.
   * Returns the keys deleted.
   */
  private async deleteWhere(keys: Array<{ event_id: string; subscription: string }>, condition: string, values: Item): Promise<Array<{ event_id: string; subscription: string }>> {
    const deleted: Array<{ event_id: string; subscription: string }> = [];
    for (let i = 0; i < keys.length; i += WRITES_AT_ONCE) {
      await Promise.all(keys.slice(i, i + WRITES_AT_ONCE).map(async (key) => {
        try {
          await this.client.send(new DeleteItemCommand({
            TableName: this.table, Key: marshall({ event_id: key.event_id, subscription: key.subscription }), ConditionExpression: condition,
            ExpressionAttributeNames: { '#status': 'status' }, ExpressionAttributeValues: values,
          }));
          deleted.push(key);
        } catch (error) {
          if (!isConditionalFailure(error)) throw storeUnavailable('The event log', error);
        }
      }));
    }
    await this.batchWrite(deleted.map(({ event_id, subscription }) => ({ DeleteRequest: { Key: messageKey(event_id, subscription) } })));
    return deleted;
  }

  /** `known`: the message the caller has (the worker's, from the queue): then the record item alone is read. */
  async get(eventId: string, subscription: string, known?: QueueMessage): Promise<EventRecord | undefined> {
    try {
      if (known) {
        const result = await this.client.send(new GetItemCommand({
          TableName: this.table, Key: marshall({ event_id: eventId, subscription }), ConsistentRead: true,
        }));
        return result.Item ? fromItem(result.Item, known) : undefined;
      }
      // The record and its message item: both sort keys begin with the subscription's name.
      const items = await this.queryItems({
        KeyConditionExpression: 'event_id = :id AND begins_with(subscription, :s)',
        ExpressionAttributeValues: { ':id': { S: eventId }, ':s': { S: subscription } },
        ConsistentRead: true,
      });
      return joined(items).find((r) => r.subscription === subscription);
    } catch (error) {
      throw storeUnavailable('The event log', error);
    }
  }

  /**
   * The message item, then the record item with a conditional PutItem (PutItem, not
   * UpdateItem: the CLI's and the ingest function's IAM policies allow it on this table).
   */
  async putIfStatus(record: EventRecord, status: EventStatus): Promise<boolean> {
    const [message, item] = eventItems(record);
    try {
      await this.client.send(new PutItemCommand({ TableName: this.table, Item: message }));
      return await this.putIf({
        Item: item, ConditionExpression: '#status = :status', ExpressionAttributeNames: { '#status': 'status' }, ExpressionAttributeValues: { ':status': { S: status } },
      });
    } catch (error) {
      throw storeUnavailable('The event log', error);
    }
  }

  /** A conditional PutItem; false when the condition does not hold. */
  private async putIf(put: ConditionalPut): Promise<boolean> {
    try {
      await this.client.send(new PutItemCommand({ TableName: this.table, ...put }));
      return true;
    } catch (error) {
      if (isConditionalFailure(error)) return false;
      throw error;
    }
  }

  /** UpdateItem of the changed attributes only (no item returned): the message and payload are not rewritten. */
  async update(eventId: string, subscription: string, changes: Partial<EventRecord>, options: UpdateOptions = {}): Promise<void> {
    const { event_id: _id, subscription: _sub, message: _message, ...rest } = changes;
    const names: Record<string, string> = { '#pk': 'event_id' };
    const values: Item = {};
    const set: string[] = [];
    const remove: string[] = [];
    Object.entries(rest).forEach(([key, value], i) => {
      names[`#a${i}`] = key;
      if (value === undefined) {
        remove.push(`#a${i}`);
      } else {
        values[`:v${i}`] = marshall({ v: value }, { removeUndefinedValues: true }).v as AttributeValue;
        set.push(`#a${i} = :v${i}`);
      }
    });
    if (set.length === 0 && remove.length === 0) return;
    try {
      await this.client.send(new UpdateItemCommand({
        TableName: this.table, Key: marshall({ event_id: eventId, subscription }),
        UpdateExpression: [set.length ? `SET ${set.join(', ')}` : '', remove.length ? `REMOVE ${remove.join(', ')}` : ''].filter(Boolean).join(' '),
        ConditionExpression: 'attribute_exists(#pk)',
        ExpressionAttributeNames: names,
        ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
        ReturnValues: 'NONE',
      }));
    } catch (error) {
      // The record is gone (withdrawn by ingest, or expired): nothing to update, unless the caller must know.
      if (isConditionalFailure(error)) {
        if (options.existing) throw new RecordGone(eventId, subscription);
        return;
      }
      throw storeUnavailable('The event log', error);
    }
  }

  async getEvent(eventId: string): Promise<EventRecord[]> {
    try {
      return joined(await this.queryItems({
        KeyConditionExpression: 'event_id = :id',
        ExpressionAttributeValues: { ':id': { S: eventId } },
        ConsistentRead: true,
      }));
    } catch (error) {
      throw storeUnavailable('The event log', error);
    }
  }

  async listBySubscription(subscription: string, limit: number, before?: Pick<EventRecord, 'event_id' | 'received_at'>): Promise<EventRecord[]> {
    return this.query({
      IndexName: EVENTS_BY_SUBSCRIPTION_INDEX,
      KeyConditionExpression: before ? 'subscription = :s AND arrival < :before' : 'subscription = :s',
      ExpressionAttributeValues: { ':s': { S: subscription }, ...(before ? { ':before': { S: `${before.received_at}#${before.event_id}` } } : {}) },
      ScanIndexForward: false,
    }, limit);
  }

  async listByStatus(subscription: string, status: EventStatus): Promise<EventRecord[]> {
    return this.query({
      IndexName: EVENTS_BY_SUBSCRIPTION_INDEX,
      KeyConditionExpression: 'subscription = :s',
      FilterExpression: '#status = :status',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':s': { S: subscription }, ':status': { S: status } },
      ScanIndexForward: true,
    });
  }

  /** Records through the index (message items are not in it), with their messages. */
  private async query(input: Omit<ConstructorParameters<typeof QueryCommand>[0], 'TableName'>, limit = Infinity): Promise<EventRecord[]> {
    try {
      const items = await this.queryItems(input, limit);
      const messages = await this.messagesOf(items.filter((item) => item.message === undefined));
      return items.map((item) => fromItem(item, messages.get(`${item.event_id?.S}\u0000${item.subscription?.S}`)));
    } catch (error) {
      throw storeUnavailable('The event log', error);
    }
  }

  private async queryItems(input: Omit<ConstructorParameters<typeof QueryCommand>[0], 'TableName'>, limit = Infinity): Promise<Item[]> {
    const items: Item[] = [];
    let start: Item | undefined;
    do {
      const page = await this.client.send(new QueryCommand({
        ...input, TableName: this.table,
        ...(Number.isFinite(limit) ? { Limit: limit - items.length } : {}),
        ...(start ? { ExclusiveStartKey: start } : {}),
      }));
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start && items.length < limit);
    return items;
  }

  /** The message texts of these records' message items, by `event_id NUL subscription`. */
  private async messagesOf(records: Item[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    for (const item of await this.batchGet(records.map((r) => messageKey(r.event_id?.S ?? '', r.subscription?.S ?? '')))) {
      const sub = item.subscription?.S ?? '';
      found.set(`${item.event_id?.S}\u0000${sub.slice(0, -MESSAGE_SUFFIX.length)}`, item.message?.S ?? '');
    }
    return found;
  }

  /** The items of these keys that exist, read consistently (BatchGetItem, 100 keys a call, resending what DynamoDB leaves unprocessed). */
  private async batchGet(allKeys: Item[]): Promise<Item[]> {
    const found: Item[] = [];
    for (let i = 0; i < allKeys.length; i += 100) {
      let keys = allKeys.slice(i, i + 100);
      for (let attempt = 0; keys.length > 0; attempt++) {
        if (attempt === 5) throw new Error(`${keys.length} reads left unprocessed after 5 attempts`);
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
        const result = await this.client.send(new BatchGetItemCommand({ RequestItems: { [this.table]: { Keys: keys, ConsistentRead: true } } }));
        found.push(...(result.Responses?.[this.table] ?? []));
        keys = (result.UnprocessedKeys?.[this.table]?.Keys ?? []) as Item[];
      }
    }
    return found;
  }

  /** BatchWriteItem in chunks of 25, resending what DynamoDB leaves unprocessed. */
  private async batchWrite(requests: WriteRequest[]): Promise<void> {
    try {
      for (let i = 0; i < requests.length; i += 25) {
        let pending: WriteRequest[] = requests.slice(i, i + 25);
        for (let attempt = 0; pending.length > 0; attempt++) {
          if (attempt === 5) throw new Error(`${pending.length} writes left unprocessed after 5 attempts`);
          if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
          const result = await this.client.send(new BatchWriteItemCommand({ RequestItems: { [this.table]: pending } }));
          pending = result.UnprocessedItems?.[this.table] ?? [];
        }
      }
    } catch (error) {
      throw storeUnavailable('The event log', error);
    }
  }
}
