/**
 * DedupStore over the DynamoDB `dedup` table: one item per delivery id with the event id it
 * was claimed for, when (`claimed_at`, ms; 0 once released) and whether it is `committed`.
 * Every change is a conditional write, so two requests never both own a key. DynamoDB
 * deletes expired items lazily (up to days later), so the conditions treat an expired item
 * as absent.
 */
import { GetItemCommand, PutItemCommand, UpdateItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { messageJson } from '../core/message-json';
import type { Claim, ClaimOptions, Clock, DedupStore } from '../core/ports';
import type { EventRecord } from '../core/types';
import { awsJsonBeside } from './aws-json';
import { isConditionalFailure, storeUnavailable } from './dynamo';
import { eventItems } from './event-items';

const NAMES = { '#key': 'key' };
/** A new claim: no item, or one whose TTL has passed (DynamoDB deletes expired items lazily). */
const NEW_CLAIM = 'attribute_not_exists(#key) OR expires_at <= :now';
/** TransactWriteItems takes 100 items and 4 MB; records beyond these bounds are written by BatchWriteItem as before. */
const MAX_RECORDS_IN_CLAIM = 24;
const MAX_CLAIM_WRITE_BYTES = 3 * 1024 * 1024;

/** A claim item: pending (`claimed_at` set, no `committed`), or committed. */
function claimItem(key: string, eventId: string, now: number, ttlSeconds: number, committed = false): Record<string, AttributeValue> {
  return {
    key: { S: key }, event_id: { S: eventId }, claimed_at: { N: String(now) },
    expires_at: { N: String(Math.floor(now / 1000) + ttlSeconds) }, ...(committed ? { committed: { BOOL: true } } : {}),
  };
}

/**
 * The item of a committed claim, as a plain put (the request log writes it in its own
 * BatchWriteItem: DynamoRequestLog.recordAndCommit). Unconditional: only the request
 * holding the claim commits, after it queued the event, and a request that took a stale
 * claim over has the same event id.
 */
export function committedClaimItem(key: string, eventId: string, now: number, ttlSeconds: number): Record<string, AttributeValue> {
  return claimItem(key, eventId, now, ttlSeconds, true);
}

/** Whether a claim transaction was cancelled because of the claim (taken, or being written by another request). */
function claimTaken(error: unknown): boolean {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return false;
  const code = (error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons?.[0]?.Code;
  return code === 'ConditionalCheckFailed' || code === 'TransactionConflict';
}

export class DynamoDedupStore implements DedupStore {
  /** `eventsTable`: the event log's table, for `claimWithRecords` (without it, ingest claims and records in two calls). */
  constructor(private readonly client: DynamoDBClient, private readonly table: string, private readonly clock: Clock, private readonly eventsTable?: string) {}

  /**
   * One TransactWriteItems: the claim (a put under the new-claim condition) and the
   * records (puts of items keyed by the new event id), sent by the lean client (aws-json.ts:
   * this is one of ingest's three calls per event). Cancelled for the claim: false, nothing
   * written, and `claim` tells duplicate, in progress or resumed. The event id is the
   * idempotency token, so a retry of a transaction that did go through succeeds instead
   * of finding the claim taken.
   */
  async claimWithRecords(key: string, options: ClaimOptions, records: EventRecord[]): Promise<boolean> {
    if (!this.eventsTable || records.length === 0 || records.length > MAX_RECORDS_IN_CLAIM) return false;
    let bytes = 0;
    for (const record of records) bytes += messageJson(record.message).length;
    // Characters to bytes: at most 3 per UTF-16 unit; measured only when that bound leaves doubt.
    if (bytes * 3 > MAX_CLAIM_WRITE_BYTES && records.reduce((sum, r) => sum + Buffer.byteLength(messageJson(r.message)), 0) > MAX_CLAIM_WRITE_BYTES) return false;
    const now = this.clock.now();
    try {
      await awsJsonBeside(this.client, 'dynamodb').call('TransactWriteItems', JSON.stringify({
        ClientRequestToken: options.eventId,
        TransactItems: [
          {
            Put: {
              TableName: this.table, Item: claimItem(key, options.eventId, now, options.ttlSeconds), ConditionExpression: NEW_CLAIM,
              ExpressionAttributeNames: NAMES, ExpressionAttributeValues: { ':now': { N: String(Math.floor(now / 1000)) } },
            },
          },
          ...records.flatMap((record) => eventItems(record).map((item) => ({ Put: { TableName: this.eventsTable, Item: item } }))),
        ],
      }));
      return true;
    } catch (error) {
      if (claimTaken(error)) return false;
      throw storeUnavailable('The dedup store', error);
    }
  }

  async claim(key: string, options: ClaimOptions): Promise<Claim> {
    try {
      // A vanished item (expired and deleted between the two reads) is claimed on the next round.
      for (let round = 0; round < 3; round++) {
        if (await this.put(key, options.eventId, options.ttlSeconds, { expression: NEW_CLAIM, names: NAMES, values: { ':now': { N: String(Math.floor(this.clock.now() / 1000)) } } })) return { kind: 'new' };
        const held = await this.client.send(new GetItemCommand({ TableName: this.table, Key: { key: { S: key } }, ConsistentRead: true }));
        const item = held.Item;
        if (!item) continue;
        const claimedAt = item.claimed_at?.N;
        const eventId = item.event_id?.S;
        // Items without a claim time or event id predate claims: they are committed.
        if (item.committed?.BOOL === true || claimedAt === undefined || eventId === undefined) return { kind: 'duplicate', ...(eventId ? { eventId } : {}) };
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
        Item: claimItem(key, eventId, now, ttlSeconds),
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
