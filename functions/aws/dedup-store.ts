/**
 * DedupStore over the DynamoDB `dedup` table: one item per delivery id with the event id it
 * was claimed for, when (`claimed_at`, ms; 0 once released) and whether it is `committed`.
 * Every change is a conditional write, so two requests never both own a key. DynamoDB
 * deletes expired items lazily (up to days later), so the conditions treat an expired item
 * as absent.
 */
import { GetItemCommand, PutItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Claim, ClaimOptions, Clock, DedupStore } from '../core/ports';
import { isConditionalFailure, storeUnavailable } from './dynamo';

const NAMES = { '#key': 'key' };

export class DynamoDedupStore implements DedupStore {
  constructor(private readonly client: DynamoDBClient, private readonly table: string, private readonly clock: Clock) {}

  async claim(key: string, options: ClaimOptions): Promise<Claim> {
    try {
      // A vanished item (expired and deleted between the two reads) is claimed on the next round.
      for (let round = 0; round < 3; round++) {
        if (await this.put(key, options.eventId, options.ttlSeconds, { expression: 'attribute_not_exists(#key) OR expires_at <= :now', names: NAMES, values: { ':now': { N: String(Math.floor(this.clock.now() / 1000)) } } })) return { kind: 'new' };
        const held = await this.client.send(new GetItemCommand({ TableName: this.table, Key: { key: { S: key } }, ConsistentRead: true }));
        const item = held.Item;
        if (!item) continue;
        const claimedAt = item.claimed_at?.N;
        const eventId = item.event_id?.S;
        // Items without a claim time or event id predate claims: they are committed.
        if (item.committed?.BOOL === true || claimedAt === undefined || eventId === undefined) return { kind: 'duplicate' };
        if (Number(claimedAt) >= options.staleBefore) return { kind: 'in_progress' };
        const taken = await this.put(key, eventId, options.ttlSeconds, { expression: 'claimed_at = :seen AND attribute_not_exists(committed)', values: { ':seen': { N: claimedAt } } });
        return taken ? { kind: 'resumed', eventId } : { kind: 'in_progress' };
      }
      return { kind: 'in_progress' };
    } catch (error) {
      throw storeUnavailable('The dedup store', error);
    }
  }

  async inspect(key: string): Promise<{ eventId: string; committed: boolean; claimedAt: number } | undefined> {
    try {
      const held = await this.client.send(new GetItemCommand({ TableName: this.table, Key: { key: { S: key } }, ConsistentRead: true }));
      const item = held.Item;
      if (!item || Number(item.expires_at?.N ?? 0) <= Math.floor(this.clock.now() / 1000)) return undefined;
      return { eventId: item.event_id?.S ?? '', committed: item.committed?.BOOL === true, claimedAt: Number(item.claimed_at?.N ?? 0) };
    } catch (error) {
      throw storeUnavailable('The dedup table', error);
    }
  }

  async commit(key: string): Promise<void> {
    await this.update(key, 'SET committed = :true', { ':true': { BOOL: true } });
  }

  async release(key: string): Promise<void> {
    await this.update(key, 'SET claimed_at = :zero', { ':zero': { N: '0' } }, ' AND attribute_not_exists(committed)');
  }

  /** Writes a pending claim under `condition`; false when the condition does not hold. */
  private async put(key: string, eventId: string, ttlSeconds: number, condition: { expression: string; names?: Record<string, string>; values: Record<string, { N: string }> }): Promise<boolean> {
    const now = this.clock.now();
    try {
      await this.client.send(new PutItemCommand({
        TableName: this.table,
        Item: {
          key: { S: key }, event_id: { S: eventId }, claimed_at: { N: String(now) },
          expires_at: { N: String(Math.floor(now / 1000) + ttlSeconds) },
        },
        ConditionExpression: condition.expression,
        ...(condition.names ? { ExpressionAttributeNames: condition.names } : {}),
        ExpressionAttributeValues: condition.values,
      }));
      return true;
    } catch (error) {
      if (isConditionalFailure(error)) return false;
      throw error;
    }
  }

  /** Updates an existing claim; a claim that is gone (or already committed) is left alone. */
  private async update(key: string, expression: string, values: Record<string, { N: string } | { BOOL: boolean }>, extraCondition = ''): Promise<void> {
    try {
      await this.client.send(new UpdateItemCommand({
        TableName: this.table, Key: { key: { S: key } }, UpdateExpression: expression,
        ConditionExpression: `attribute_exists(#key)${extraCondition}`, ExpressionAttributeNames: NAMES, ExpressionAttributeValues: values,
      }));
    } catch (error) {
      if (isConditionalFailure(error)) return;
      throw storeUnavailable('The dedup store', error);
    }
  }
}
