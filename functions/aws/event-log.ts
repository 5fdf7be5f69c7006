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
  GetItemCommand, PutItemCommand, UpdateItemCommand, type DynamoDBClient, type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { EventLog, EventSearch, EventSearchPage, RecordedSubscriptions, UpdateOptions } from '../core/ports';
import type { EventRecord, EventStatus, QueueMessage } from '../core/types';
import { RecordGone } from '../core/worker/record';
import { isConditionalFailure, storeUnavailable } from './dynamo';
import {
  MESSAGE_SUFFIX, batchGet, batchWrite, changedAttributes, deleteWhere, eventExpiresAt, eventItems, fromItem, joined, messageKey, putIf, queryItems, type EventTable, type Item, type QueryInput,
} from './event-items';
import { RecordedNames, searchSubscription } from './event-search';
import { HeldPayloads, SeenHeld, holdMessage, keepHeld, resumeMessage, type LetGo } from './held-items';
import { lazyPayloadRetention, type PayloadRetention } from './s3-payload-store';
import { EVENTS_BY_SUBSCRIPTION_INDEX } from './tables';

export interface EventLogOptions {
  /** Records read per call while looking for deleted subscriptions' names (event-search.ts). */
  namesScanItems?: number;
  /** Held events' payload objects (held-items.ts); by default S3 in the DynamoDB client's region, its client made on first use. */
  retention?: PayloadRetention;
}

export class DynamoEventLog implements EventLog {
  private readonly t: EventTable;
  private readonly held: HeldPayloads;
  private readonly seenHeld = new SeenHeld();

  constructor(private readonly client: DynamoDBClient, private readonly table: string, private readonly options: EventLogOptions = {}) {
    this.t = { client, table };
    this.held = new HeldPayloads(this.t, options.retention ?? lazyPayloadRetention(() => client.config.region()));
  }

  /** The console's list (event-search.ts); the names' scan state lives as long as this adapter. */
  private names: RecordedNames | undefined;
  searchSubscription = (subscription: string, search: EventSearch): Promise<EventSearchPage> => searchSubscription(this.client, this.table, subscription, search);
  recordedSubscriptions = (known: string[]): Promise<RecordedSubscriptions> => (this.names ??= new RecordedNames(this.client, this.table, this.options.namesScanItems)).names(known);

  /** The messages first, then the records: a record is never stored without its message, nor held with a payload that may expire. */
  async putAll(records: EventRecord[]): Promise<void> {
    await this.held.keep(records.filter((r) => r.status === 'held').map((r) => r.message));
    const items = records.map(eventItems);
    await this.batchWrite(items.map(([message]) => ({ PutRequest: { Item: message } })));
    await this.batchWrite(items.map(([, record]) => ({ PutRequest: { Item: record } })));
  }

  async deleteAll(keys: Array<{ event_id: string; subscription: string }>): Promise<void> {
    await this.batchWrite(keys.flatMap(({ event_id, subscription }) => [
      { DeleteRequest: { Key: marshall({ event_id, subscription }) } }, { DeleteRequest: { Key: messageKey(event_id, subscription) } },
    ]));
  }

  /** The records given (as listed, with their messages) let their payloads go once deleted. */
  async deleteHeld(keys: Array<LetGo>): Promise<number> {
    const deleted = await this.dynamo(() => deleteWhere(this.t, keys, '#status = :held', { ':held': { S: 'held' } }));
    for (const record of deleted) await this.held.letGo(record);
    return deleted.length;
  }

  keepHeld = (subscription: string): Promise<number> => keepHeld(this.t, subscription);

  /** As deleteHeld; an absent item passes the condition (its DeleteItem deletes nothing). */
  async deleteUnstarted(keys: Array<{ event_id: string; subscription: string }>): Promise<Array<{ event_id: string; subscription: string }>> {
    const deleted = await this.dynamo(() => deleteWhere(this.t, keys, 'attribute_not_exists(#status) OR (#status = :queued AND (attribute_not_exists(attempts) OR attempts = :zero))', { ':queued': { S: 'queued' }, ':zero': { N: '0' } }));
    return keys.filter((key) => !deleted.includes(key));
  }

  /** `known`: the message the caller has (the worker's, from the queue): then the record item alone is read. */
  async get(eventId: string, subscription: string, known?: QueueMessage): Promise<EventRecord | undefined> {
    try {
      if (known) {
        const result = await this.client.send(new GetItemCommand({
          TableName: this.table, Key: marshall({ event_id: eventId, subscription }), ConsistentRead: true,
        }));
        const record = result.Item ? fromItem(result.Item, known) : undefined;
        this.seenHeld.note(record);
        return record;
      }
      // The record and its message item: both sort keys begin with the subscription's name.
      const items = await queryItems(this.t, {
        KeyConditionExpression: 'event_id = :id AND begins_with(subscription, :s)',
        ExpressionAttributeValues: { ':id': { S: eventId }, ':s': { S: subscription } },
        ConsistentRead: true,
      });
      const record = joined(items).find((r) => r.subscription === subscription);
      this.seenHeld.note(record);
      return record;
    } catch (error) {
      throw storeUnavailable('The event log', error);
    }
  }

  /**
   * The message item, then the record item with a conditional PutItem (PutItem, not
   * UpdateItem: the CLI's and the ingest function's IAM policies allow it on this table).
   * A record written held keeps its payload first; one that leaves `held` lets it go after.
   */
  async putIfStatus(record: EventRecord, status: EventStatus): Promise<boolean> {
    const [message, item] = eventItems(record);
    if (record.status === 'held') await this.held.keep([record.message]);
    let written: boolean;
    try {
      await this.client.send(new PutItemCommand({ TableName: this.table, Item: message }));
      written = await putIf(this.t, {
        Item: item, ConditionExpression: '#status = :status', ExpressionAttributeNames: { '#status': 'status' }, ExpressionAttributeValues: { ':status': { S: status } },
      });
    } catch (error) {
      throw storeUnavailable('The event log', error);
    }
    if (written && status === 'held' && record.status !== 'held') await this.held.letGo(record);
    return written;
  }

  /**
   * UpdateItem of the changed attributes only: the message and payload are not rewritten. A
   * change of status also sees to the TTL (held-items.ts): to `held` (the worker holds an
   * event queued before a pause), the TTL is removed from both items and the payload kept,
   * before the record's write; to any other, the record gets a TTL where it has none (14
   * days from this write) in the same write, and one leaving `held` (read or written held
   * by this adapter: SeenHeld) gives its message item the same and lets its payload go.
   */
  async update(eventId: string, subscription: string, changes: Partial<EventRecord>, options: UpdateOptions = {}): Promise<void> {
    const { event_id: _id, subscription: _sub, message: _message, ...rest } = changes;
    const { names, values, set, remove } = changedAttributes(rest);
    if (set.length === 0 && remove.length === 0) return;
    const { status } = changes;
    const ttl = status && status !== 'held' ? eventExpiresAt({ status, updated_at: changes.updated_at ?? '', received_at: '' }) : undefined;
    let kept: LetGo | undefined;
    if (status === 'held') {
      names['#ttl'] = 'expires_at';
      remove.push('#ttl');
      kept = { event_id: eventId, subscription, message: await this.dynamo(() => holdMessage(this.t, eventId, subscription)) };
      await this.held.keep([kept.message]);
    } else if (ttl !== undefined) {
      names['#ttl'] = 'expires_at';
      values[':ttl'] = { N: String(ttl) };
      set.push('#ttl = if_not_exists(#ttl, :ttl)');
    }
    let before: Item | undefined;
    try {
      ({ Attributes: before } = await this.client.send(new UpdateItemCommand({
        TableName: this.table, Key: marshall({ event_id: eventId, subscription }),
        UpdateExpression: [set.length ? `SET ${set.join(', ')}` : '', remove.length ? `REMOVE ${remove.join(', ')}` : ''].filter(Boolean).join(' '),
        ConditionExpression: 'attribute_exists(#pk)',
        ExpressionAttributeNames: names,
        ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
        // Read or written held here: its status before tells whether it leaves `held` (SeenHeld).
        ReturnValues: ttl !== undefined && this.seenHeld.has(eventId, subscription) ? 'UPDATED_OLD' : 'NONE',
      })));
    } catch (error) {
      // The record is gone (withdrawn by ingest, or expired): nothing to update, unless the caller must know.
      if (isConditionalFailure(error)) {
        if (kept) await this.held.letGo(kept);
        if (options.existing) throw new RecordGone(eventId, subscription);
        return;
      }
      throw storeUnavailable('The event log', error);
    }
    if (status) this.seenHeld.note({ event_id: eventId, subscription, status });
    if (ttl !== undefined && before?.status?.S === 'held') {
      const message = await this.dynamo(() => resumeMessage(this.t, eventId, subscription, ttl));
      await this.held.letGo({ event_id: eventId, subscription, message });
    }
  }

  /** A DynamoDB call whose failure is the event log's. */
  private async dynamo<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw storeUnavailable('The event log', error);
    }
  }

  async getEvent(eventId: string): Promise<EventRecord[]> {
    try {
      return joined(await queryItems(this.t, {
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
  private async query(input: QueryInput, limit = Infinity): Promise<EventRecord[]> {
    try {
      const items = await queryItems(this.t, input, limit);
      const messages = await this.messagesOf(items.filter((item) => item.message === undefined));
      return items.map((item) => fromItem(item, messages.get(`${item.event_id?.S}\u0000${item.subscription?.S}`)));
    } catch (error) {
      throw storeUnavailable('The event log', error);
    }
  }

  /** The message texts of these records' message items, by `event_id NUL subscription`. */
  private async messagesOf(records: Item[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    for (const item of await batchGet(this.t, records.map((r) => messageKey(r.event_id?.S ?? '', r.subscription?.S ?? '')))) {
      const sub = item.subscription?.S ?? '';
      found.set(`${item.event_id?.S}\u0000${sub.slice(0, -MESSAGE_SUFFIX.length)}`, item.message?.S ?? '');
    }
    return found;
  }

  private async batchWrite(requests: WriteRequest[]): Promise<void> {
    await this.dynamo(() => batchWrite(this.t, requests));
  }
}
