/**
 * CounterStore over the DynamoDB `dedup` table (its key `key`, TTL `expires_at`): one item
 * per counter, `counter#<key>`, incremented atomically with ADD. The window is in the key,
 * so an expired item that DynamoDB has not deleted yet is never counted again.
 */
import { GetItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock, CounterStore } from '../core/ports';
import { storeUnavailable } from './dynamo';

export class DynamoCounterStore implements CounterStore {
  constructor(private readonly client: DynamoDBClient, private readonly table: string, private readonly clock: Clock) {}

  async add(key: string, amount: number, ttlSeconds: number): Promise<number> {
    try {
      const result = await this.client.send(new UpdateItemCommand({
        TableName: this.table,
        Key: { key: { S: `counter#${key}` } },
        UpdateExpression: 'ADD #total :amount SET expires_at = if_not_exists(expires_at, :expires)',
        ExpressionAttributeNames: { '#total': 'total' },
        ExpressionAttributeValues: { ':amount': { N: String(amount) }, ':expires': { N: String(Math.floor(this.clock.now() / 1000) + ttlSeconds) } },
        ReturnValues: 'UPDATED_NEW',
      }));
      return Number(result.Attributes?.total?.N ?? amount);
    } catch (error) {
      throw storeUnavailable('The counter store', error);
    }
  }

  async get(key: string): Promise<number> {
    try {
      const result = await this.client.send(new GetItemCommand({ TableName: this.table, Key: { key: { S: `counter#${key}` } }, ConsistentRead: true }));
      return Number(result.Item?.total?.N ?? 0);
    } catch (error) {
      throw storeUnavailable('The counter store', error);
    }
  }
}
