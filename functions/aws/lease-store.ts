/**
 * LeaseStore over the DynamoDB `dedup` table: one item `lease#<event id>#<subscription>`
 * per running (event, subscription), with its holder and the epoch ms its lease ends. A
 * conditional PutItem takes it when absent, expired or already ours; a conditional
 * DeleteItem gives it up only while it is still ours. `expires_at` (seconds) lets the
 * table's TTL sweep leases whose holder died.
 */
import { DeleteItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock, LeaseStore } from '../core/ports';
import { isConditionalFailure, storeUnavailable } from './dynamo';

const NAMES = { '#key': 'key' };
/** Leases are kept a day past their end for the TTL sweep (the condition ignores them anyway). */
const SWEEP_AFTER_SECONDS = 24 * 3600;

export const leaseKey = (eventId: string, subscription: string) => `lease#${eventId}#${subscription}`;

export interface LeaseStoreOptions {
  /**
   * Epoch ms: leases taken before it are abandoned whatever their expiry. `serve` owns its
   * store, so leases from before it started belong to a process that is gone (kill -9).
   */
  abandonedBefore?: number;
}

export class DynamoLeaseStore implements LeaseStore {
  constructor(private readonly client: DynamoDBClient, private readonly table: string, private readonly clock: Clock, private readonly options: LeaseStoreOptions = {}) {}

  async acquire(eventId: string, subscription: string, holder: string, leaseMs: number): Promise<boolean> {
    const now = this.clock.now();
    try {
      await this.client.send(new PutItemCommand({
        TableName: this.table,
        Item: {
          key: { S: leaseKey(eventId, subscription) }, holder: { S: holder }, lease_until: { N: String(now + leaseMs) },
          acquired_at: { N: String(now) }, expires_at: { N: String(Math.floor((now + leaseMs) / 1000) + SWEEP_AFTER_SECONDS) },
        },
        ConditionExpression: 'attribute_not_exists(#key) OR lease_until <= :now OR holder = :holder OR acquired_at < :abandoned',
        ExpressionAttributeNames: NAMES,
        ExpressionAttributeValues: { ':now': { N: String(now) }, ':holder': { S: holder }, ':abandoned': { N: String(this.options.abandonedBefore ?? 0) } },
      }));
      return true;
    } catch (error) {
      if (isConditionalFailure(error)) return false;
      throw storeUnavailable('The worker lease store', error);
    }
  }

  async release(eventId: string, subscription: string, holder: string): Promise<void> {
    try {
      await this.client.send(new DeleteItemCommand({
        TableName: this.table, Key: { key: { S: leaseKey(eventId, subscription) } },
        ConditionExpression: 'holder = :holder', ExpressionAttributeValues: { ':holder': { S: holder } },
      }));
    } catch (error) {
      // Taken over by another copy after our lease ran out: theirs now.
      if (isConditionalFailure(error)) return;
      throw storeUnavailable('The worker lease store', error);
    }
  }
}
