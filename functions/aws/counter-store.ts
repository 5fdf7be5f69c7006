/**
 * CounterStore over the DynamoDB `dedup` table (its `expires_at` TTL removes old counters):
 * one item per counter key, under `counter#<key>`, with a `count` added atomically
 * (UpdateItem ADD). DynamoDB deletes expired items lazily, so an expired counter reads as 0
 * and the next add starts it again from zero with a new expiry. A negative amount gives back
 * what was added (a run that did not happen): it never takes a counter below zero, and never
 * starts one (an absent or expired counter reads 0).
 */
import { GetItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock, CounterStore } from '../core/ports';
import { isConditionalFailure, storeUnavailable } from './dynamo';

const NAMES = { '#key': 'key', '#count': 'count' };

export class DynamoCounterStore implements CounterStore {
  constructor(private readonly client: DynamoDBClient, private readonly table: string, private readonly clock: Clock) {}

  async add(key: string, amount: number, ttlSeconds: number): Promise<number> {
    if (amount < 0) return this.giveBack(key, -amount);
    const itemKey = { key: { S: `counter#${key}` } };
    const now = Math.floor(this.clock.now() / 1000);
    const values = { ':n': { N: String(amount) }, ':exp': { N: String(now + ttlSeconds) }, ':now': { N: String(now) } };
    try {
      for (let round = 0; round < 3; round++) {
        try {
          // A live (or absent) counter: add to it; its expiry is set once, when it is created.
          const result = await this.client.send(new UpdateItemCommand({
            TableName: this.table, Key: itemKey, UpdateExpression: 'ADD #count :n SET expires_at = if_not_exists(expires_at, :exp)',
            ConditionExpression: 'attribute_not_exists(#key) OR expires_at > :now', ExpressionAttributeNames: NAMES, ExpressionAttributeValues: values, ReturnValues: 'UPDATED_NEW',
          }));
          return Number(result.Attributes?.count?.N ?? amount);
        } catch (error) {
          if (!isConditionalFailure(error)) throw error;
        }
        try {
          // An expired counter not yet deleted: start it again (only if still expired).
          await this.client.send(new UpdateItemCommand({
            TableName: this.table, Key: itemKey, UpdateExpression: 'SET #count = :n, expires_at = :exp',
            ConditionExpression: 'expires_at <= :now', ExpressionAttributeNames: { '#count': 'count' }, ExpressionAttributeValues: values,
          }));
          return amount;
        } catch (error) {
          if (!isConditionalFailure(error)) throw error;
        }
      }
      throw new Error('the counter kept changing under concurrent writes');
    } catch (error) {
      throw storeUnavailable('The counter store', error);
    }
  }

  async get(key: string): Promise<number> {
    try {
      return (await this.live(key)) ?? 0;
    } catch (error) {
      throw storeUnavailable('The counter store', error);
    }
  }

  /** A live counter's count; undefined when it is absent or expired. */
  private async live(key: string): Promise<number | undefined> {
    const result = await this.client.send(new GetItemCommand({ TableName: this.table, Key: { key: { S: `counter#${key}` } }, ConsistentRead: true }));
    const item = result.Item;
    if (!item || Number(item.expires_at?.N ?? 0) <= Math.floor(this.clock.now() / 1000)) return undefined;
    return Number(item.count?.N ?? 0);
  }

  /** Takes `amount` (> 0) off a live counter, down to zero at most; an absent or expired one is left so. */
  private async giveBack(key: string, amount: number): Promise<number> {
    const itemKey = { key: { S: `counter#${key}` } };
    const now = Math.floor(this.clock.now() / 1000);
    const values = { ':n': { N: String(-amount) }, ':least': { N: String(amount) }, ':now': { N: String(now) } };
    try {
      for (let round = 0; round < 3; round++) {
        try {
          const result = await this.client.send(new UpdateItemCommand({
            TableName: this.table, Key: itemKey, UpdateExpression: 'ADD #count :n',
            ConditionExpression: 'expires_at > :now AND #count >= :least', ExpressionAttributeNames: { '#count': 'count' }, ExpressionAttributeValues: values, ReturnValues: 'UPDATED_NEW',
          }));
          return Number(result.Attributes?.count?.N ?? 0);
        } catch (error) {
          if (!isConditionalFailure(error)) throw error;
        }
        try {
          // Less than the amount left: the counter ends at zero.
          await this.client.send(new UpdateItemCommand({
            TableName: this.table, Key: itemKey, UpdateExpression: 'SET #count = :zero',
            ConditionExpression: 'expires_at > :now AND #count < :least', ExpressionAttributeNames: { '#count': 'count' },
            ExpressionAttributeValues: { ':zero': { N: '0' }, ':least': values[':least'], ':now': values[':now'] },
          }));
          return 0;
        } catch (error) {
          if (!isConditionalFailure(error)) throw error;
        }
        // Neither: absent or expired (nothing to give back), or changed in between (again).
        if ((await this.live(key)) === undefined) return 0;
      }
      throw new Error('the counter kept changing under concurrent writes');
    } catch (error) {
      throw storeUnavailable('The counter store', error);
    }
  }
}
