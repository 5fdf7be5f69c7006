/**
 * EventLog over the DynamoDB `events` table: one item per (event, subscription), kept
 * 14 days (TTL attribute `expires_at`), listed per subscription through the
 * `by_subscription` index ordered by arrival.
 */
import {
  BatchWriteItemCommand, GetItemCommand, QueryCommand, UpdateItemCommand, type AttributeValue, type DynamoDBClient, type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { EventLog } from '../core/ports';
import type { EventRecord, EventStatus, QueueMessage } from '../core/types';
import { messageJson } from '../core/message-json';
import { isConditionalFailure, storeUnavailable } from './dynamo';
import { EVENTS_BY_SUBSCRIPTION_INDEX } from './tables';

export const EVENT_RETENTION_SECONDS = 14 * 24 * 3600;

type Item = Record<string, AttributeValue>;

/** A record as its item (also written by the dedup store's claim transaction). */
export function eventItem(record: EventRecord): Item {
  const { message, ...rest } = record;
  const expires = Math.floor(Date.parse(record.received_at) / 1000) + EVENT_RETENTION_SECONDS;
  return marshall(
    { ...rest, message: messageJson(message), arrival: `${record.received_at}#${record.event_id}`, expires_at: expires },
    { removeUndefinedValues: true },
  );
}

function fromItem(item: Item): EventRecord {
  const { message, arrival: _arrival, expires_at: _expires, ...rest } = unmarshall(item);
  return { ...rest, message: JSON.parse(message as string) as QueueMessage } as EventRecord;
}

export class DynamoEventLog implements EventLog {
  constructor(private readonly client: DynamoDBClient, private readonly table: string) {}

  async putAll(records: EventRecord[]): Promise<void> {
    await this.batchWrite(records.map((record) => ({ PutRequest: { Item: eventItem(record) } })));
  }

  async deleteAll(keys: Array<{ event_id: string; subscription: string }>): Promise<void> {
    await this.batchWrite(keys.map(({ event_id, subscription }) => ({ DeleteRequest: { Key: marshall({ event_id, subscription }) } })));
  }

  async get(eventId: string, subscription: string): Promise<EventRecord | undefined> {
    try {
      const result = await this.client.send(new GetItemCommand({
        TableName: this.table, Key: marshall({ event_id: eventId, subscription }), ConsistentRead: true,
      }));
      return result.Item ? fromItem(result.Item) : undefined;
    } catch (error) {
      throw storeUnavailable('The event log', error);
    }
  }

  /** UpdateItem of the changed attributes only (no item returned): the message and payload are not rewritten. */
  async update(eventId: string, subscription: string, changes: Partial<EventRecord>): Promise<void> {
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
      // The record is gone (deleted with its subscription): nothing to update.
      if (isConditionalFailure(error)) return;
      throw storeUnavailable('The event log', error);
    }
  }

  async getEvent(eventId: string): Promise<EventRecord[]> {
    return this.query({
      KeyConditionExpression: 'event_id = :id',
      ExpressionAttributeValues: { ':id': { S: eventId } },
      ConsistentRead: true,
    });
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

  private async query(input: Omit<ConstructorParameters<typeof QueryCommand>[0], 'TableName'>, limit = Infinity): Promise<EventRecord[]> {
    const records: EventRecord[] = [];
    let start: Item | undefined;
    try {
      do {
        const page = await this.client.send(new QueryCommand({
          ...input, TableName: this.table,
          ...(Number.isFinite(limit) ? { Limit: limit - records.length } : {}),
          ...(start ? { ExclusiveStartKey: start } : {}),
        }));
        for (const item of page.Items ?? []) records.push(fromItem(item));
        start = page.LastEvaluatedKey;
      } while (start && records.length < limit);
    } catch (error) {
      throw storeUnavailable('The event log', error);
    }
    return records;
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
