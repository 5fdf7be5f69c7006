/**
 * DedupStore over the DynamoDB `dedup` table: a conditional put with a TTL attribute.
 * DynamoDB deletes expired items lazily (up to days later), so the condition itself
 * treats an expired item as absent.
 */
import { DeleteItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock, DedupStore } from '../core/ports';
import { isConditionalFailure, storeUnavailable } from './dynamo';

export class DynamoDedupStore implements DedupStore {
  constructor(private readonly client: DynamoDBClient, private readonly table: string, private readonly clock: Clock) {}

  async claim(key: string, ttlSeconds: number): Promise<boolean> {
    const now = Math.floor(this.clock.now() / 1000);
    try {
      await this.client.send(new PutItemCommand({
        TableName: this.table,
        Item: { key: { S: key }, expires_at: { N: String(now + ttlSeconds) } },
        ConditionExpression: 'attribute_not_exists(#key) OR expires_at <= :now',
        ExpressionAttributeNames: { '#key': 'key' },
        ExpressionAttributeValues: { ':now': { N: String(now) } },
      }));
      return true;
    } catch (error) {
      if (isConditionalFailure(error)) return false;
      throw storeUnavailable('The dedup store', error);
    }
  }

  async release(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteItemCommand({ TableName: this.table, Key: { key: { S: key } } }));
    } catch (error) {
      throw storeUnavailable('The dedup store', error);
    }
  }
}
