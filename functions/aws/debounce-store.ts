/**
 * DebounceStore over the DynamoDB `dedup` table (its key `key`, TTL `expires_at`): one
 * item per (subscription, subject), `debounce#<subscription>#<subject key>`, holding the
 * latest event id. Reads are consistent: the worker must see the newest write.
 */
import { GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock, DebounceStore } from '../core/ports';
import { storeUnavailable } from './dynamo';

const keyOf = (subscription: string, subjectKey: string) => `debounce#${subscription}#${subjectKey}`;

export class DynamoDebounceStore implements DebounceStore {
  constructor(private readonly client: DynamoDBClient, private readonly table: string, private readonly clock: Clock) {}

  async setLatest(subscription: string, subjectKey: string, eventId: string, ttlSeconds: number): Promise<void> {
    try {
      await this.client.send(new PutItemCommand({
        TableName: this.table,
        Item: {
          key: { S: keyOf(subscription, subjectKey) }, event_id: { S: eventId },
          expires_at: { N: String(Math.floor(this.clock.now() / 1000) + ttlSeconds) },
        },
      }));
    } catch (error) {
      throw storeUnavailable('The debounce store', error);
    }
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
