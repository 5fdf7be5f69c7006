/**
 * DebounceStore over the DynamoDB `dedup` table (its key `key`, TTL `expires_at`): one
 * item per (subscription, subject), `debounce#<subscription>#<subject key>`, holding the
 * latest event id. Reads are consistent: the worker must see the newest write.
 */
import { GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock, DebounceStore } from '../core/ports';
import type { RepointingStore } from '../core/subscriptions/held-pointers';
import { isConditionalFailure, storeUnavailable } from './dynamo';

const keyOf = (subscription: string, subjectKey: string) => `debounce#${subscription}#${subjectKey}`;

export class DynamoDebounceStore implements DebounceStore, RepointingStore {
  constructor(private readonly client: DynamoDBClient, private readonly table: string, private readonly clock: Clock) {}

  async setLatest(subscription: string, subjectKey: string, eventId: string, ttlSeconds: number): Promise<void> {
    try {
      await this.client.send(new PutItemCommand({ TableName: this.table, Item: this.item(subscription, subjectKey, eventId, ttlSeconds) }));
    } catch (error) {
      throw storeUnavailable('The debounce store', error);
    }
  }

  /** Read, then written only while it still names what was read (one of `ended`): an event accepted since stays the latest. */
  async replaceLatest(subscription: string, subjectKey: string, eventId: string, ended: readonly string[], ttlSeconds: number): Promise<boolean> {
    const was = await this.getLatest(subscription, subjectKey);
    if (was === undefined || !ended.includes(was)) return false;
    try {
      await this.client.send(new PutItemCommand({
        TableName: this.table, Item: this.item(subscription, subjectKey, eventId, ttlSeconds),
        ConditionExpression: 'event_id = :was', ExpressionAttributeValues: { ':was': { S: was } },
      }));
      return true;
    } catch (error) {
      if (isConditionalFailure(error)) return false;
      throw storeUnavailable('The debounce store', error);
    }
  }

  private item(subscription: string, subjectKey: string, eventId: string, ttlSeconds: number) {
    return {
      key: { S: keyOf(subscription, subjectKey) }, event_id: { S: eventId },
      expires_at: { N: String(Math.floor(this.clock.now() / 1000) + ttlSeconds) },
    };
  }

  async getLatest(subscription: string, subjectKey: string): Promise<string | undefined> {
    try {
      const result = await this.client.send(new GetItemCommand({ TableName: this.table, Key: { key: { S: keyOf(subscription, subjectKey) } }, ConsistentRead: true }));
      const item = result.Item;
      // DynamoDB deletes expired items lazily: an expired one counts as absent.
      if (!item || Number(item.expires_at?.N ?? 0) * 1000 <= this.clock.now()) return undefined;
      return item.event_id?.S;
    } catch (error) {
      throw storeUnavailable('The debounce store', error);
    }
  }
}
