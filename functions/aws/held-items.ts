/**
 * What holding an event does on AWS beyond its status, and what letting it go undoes: a
 * held record and its message item carry no TTL (`expires_at`, event-items.ts), and the
 * payload object of a held event is tagged so the bucket's lifecycle rule keeps it
 * (s3-payload-store.ts), however long the pause.
 * - Written held whole (ingest, replay): the items without the TTL (eventItems), the
 *   payload kept first (HeldPayloads.keep).
 * - Held by the worker (paused after the event was queued), with an UpdateItem of the
 *   record's changes (event-log.ts `update`): the message item's TTL is removed by one
 *   UpdateItem more (holdMessage) and the payload kept, before the record's write.
 * - Let go: a release writes both items whole with a TTL; a held record the worker carries
 *   on gets both back (the record's in its own UpdateItem, resumeMessage, SeenHeld); then
 *   the payload expires again (HeldPayloads.letGo).
 * - Records an earlier version held carry the TTL: `pause` removes it (keepHeld).
 */
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { EventRecord, QueueMessage } from '../core/types';
import { isConditionalFailure, storeUnavailable } from './dynamo';
import {
  MESSAGE_SUFFIX, WRITES_AT_ONCE, batchGet, messageKey, putIf, queryItems, type ConditionalPut, type EventTable, type Item,
} from './event-items';
import { s3Object, type PayloadRetention } from './s3-payload-store';
import { EVENTS_BY_SUBSCRIPTION_INDEX } from './tables';

/** The message an item held (undefined: none, or unreadable). */
function messageOf(item: Item | undefined): QueueMessage | undefined {
  try {
    return item?.message?.S ? (JSON.parse(item.message.S) as QueueMessage) : undefined;
  } catch {
    return undefined;
  }
}

/** One UpdateItem of an existing message item; its message as it was, undefined when there is none (the layout before message items). */
async function updateMessage(t: EventTable, eventId: string, subscription: string, update: string, values?: Item): Promise<QueueMessage | undefined> {
  try {
    const { Attributes } = await t.client.send(new UpdateItemCommand({
      TableName: t.table, Key: messageKey(eventId, subscription), UpdateExpression: update, ConditionExpression: 'attribute_exists(event_id)',
      ...(values ? { ExpressionAttributeValues: values } : {}), ReturnValues: 'ALL_OLD',
    }));
    return messageOf(Attributes);
  } catch (error) {
    if (isConditionalFailure(error)) return undefined;
    throw error;
  }
}

/** The message item of a record about to be held by an update: its TTL removed. Returns its message. */
export const holdMessage = (t: EventTable, eventId: string, subscription: string): Promise<QueueMessage | undefined> =>
  updateMessage(t, eventId, subscription, 'REMOVE expires_at');

/** The message item of a held record an update carried on: the TTL its record got back. Returns its message. */
export const resumeMessage = (t: EventTable, eventId: string, subscription: string, expiresAt: number): Promise<QueueMessage | undefined> =>
  updateMessage(t, eventId, subscription, 'SET expires_at = :ttl', { ':ttl': { N: String(expiresAt) } });

/**
 * The records this adapter read or wrote `held` lately, by `event_id NUL subscription`: an
 * update of one of them asks for the status it replaces (UpdateItem's UPDATED_OLD), to
 * tell whether it leaves `held`; others are written as before, nothing returned. The
 * worker reads a record before it changes it, so what it carries on from `held` is here.
 */
export class SeenHeld {
  private readonly keys = new Set<string>();
  constructor(private readonly bound = 1000) {}

  note(record: Pick<EventRecord, 'event_id' | 'subscription' | 'status'> | undefined): void {
    if (!record) return;
    const key = `${record.event_id}\u0000${record.subscription}`;
    this.keys.delete(key);
    if (record.status !== 'held') return;
    this.keys.add(key);
    if (this.keys.size > this.bound) this.keys.delete(this.keys.values().next().value as string);
  }

  has = (eventId: string, subscription: string): boolean => this.keys.has(`${eventId}\u0000${subscription}`);
}

/** A record let go, as far as its payload is concerned. */
export type LetGo = Pick<EventRecord, 'event_id' | 'subscription'> & { message?: QueueMessage };

/** The payload objects of held events (s3:// pointers; other stores' pointers are left alone). */
export class HeldPayloads {
  constructor(private readonly t: EventTable, private readonly retention: PayloadRetention) {}

  /** Before records are written held: their payloads kept. Throws when S3 cannot (the caller writes nothing held). */
  async keep(messages: Array<QueueMessage | undefined>): Promise<void> {
    const pointers = new Set(messages.map((m) => m?.payload_ref).filter((p): p is string => s3Object(p) !== undefined));
    await Promise.all([...pointers].map((pointer) => this.retention.keep(pointer)));
  }

  /**
   * After a record left `held` (released, ended, deleted, or the hold not written): its
   * payload expires again, unless another subscription's record of the event, which shares
   * it, is still held. Asked after the record's write: of two released at once, the later
   * sees both. A failure is not raised: the record's write is done, and a payload left
   * tagged held is kept (until deleted by hand), never lost. A replay shares its original's
   * object but not its event id: a record of the other still held is not seen here.
   */
  async letGo(record: LetGo): Promise<void> {
    const pointer = record.message?.payload_ref;
    if (!pointer || !s3Object(pointer)) return;
    try {
      // The event's held records (a key attribute cannot be filtered on: the subscription is compared here).
      const held = await queryItems(this.t, {
        KeyConditionExpression: 'event_id = :id', FilterExpression: '#status = :held', ProjectionExpression: 'subscription',
        ExpressionAttributeNames: { '#status': 'status' }, ExpressionAttributeValues: { ':id': { S: record.event_id }, ':held': { S: 'held' } },
        ConsistentRead: true,
      });
      if (held.some((item) => item.subscription?.S !== record.subscription)) return;
      await this.retention.expire(pointer);
    } catch {
      // Kept, never lost (see above).
    }
  }
}

const withoutExpiry = ({ expires_at: _expires, ...rest }: Item): Item => rest;

/**
 * A held record of an earlier version (both items with the TTL) written back without it:
 * its message item first (a record kept without it would be released without its
 * payload), then the record; each only while it is as read: the message item with the TTL
 * read (a release writes it again with a later one), the record still held and unchanged.
 * None for a record no longer held or already without a TTL; no message item to write
 * when it has no TTL or none exists (before message items, the record held its message).
 */
export function keptItems(record: Item | undefined, message: Item | undefined): ConditionalPut[] {
  if (record?.status?.S !== 'held' || !record.expires_at) return [];
  return [
    ...(message?.expires_at ? [{ Item: withoutExpiry(message), ConditionExpression: 'expires_at = :ttl', ExpressionAttributeValues: { ':ttl': message.expires_at } }] : []),
    {
      Item: withoutExpiry(record), ConditionExpression: '#status = :held AND expires_at = :ttl AND updated_at = :at', ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':held': { S: 'held' }, ':ttl': record.expires_at, ':at': record.updated_at ?? { NULL: true } },
    },
  ];
}

/**
 * Records of an earlier version still held carry the TTL: found through the index, read
 * again consistently, and written back without it (keptItems). PutItem, not UpdateItem
 * `REMOVE`: the CLI's policy allows PutItem on this table. Returns how many it kept.
 */
export async function keepHeld(t: EventTable, subscription: string): Promise<number> {
  try {
    const held = await queryItems(t, {
      IndexName: EVENTS_BY_SUBSCRIPTION_INDEX, KeyConditionExpression: 'subscription = :s',
      FilterExpression: '#status = :held AND attribute_exists(expires_at)', ProjectionExpression: 'event_id',
      ExpressionAttributeNames: { '#status': 'status' }, ExpressionAttributeValues: { ':s': { S: subscription }, ':held': { S: 'held' } },
    });
    let kept = 0;
    for (let i = 0; i < held.length; i += WRITES_AT_ONCE) {
      const ids = held.slice(i, i + WRITES_AT_ONCE).map((item) => item.event_id?.S ?? '');
      const items = await batchGet(t, ids.flatMap((id) => [marshall({ event_id: id, subscription }), messageKey(id, subscription)]));
      const item = (id: string, sortKey: string) => items.find((it) => it.event_id?.S === id && it.subscription?.S === sortKey);
      const written = await Promise.all(ids.map(async (id) => {
        let keptThis = false;
        // The record's put comes last: it tells whether the record was kept.
        for (const put of keptItems(item(id, subscription), item(id, `${subscription}${MESSAGE_SUFFIX}`))) keptThis = await putIf(t, put);
        return keptThis;
      }));
      kept += written.filter(Boolean).length;
    }
    return kept;
  } catch (error) {
    throw storeUnavailable('The event log', error);
  }
}
