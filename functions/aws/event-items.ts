/**
 * How an event record is laid out in the DynamoDB `events` table (event-log.ts has why):
 * the record's item and its message's item, and back. The dedup store's claim transaction
 * writes the same two items.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { messageJson, rememberMessageText } from '../core/message-json';
import type { EventRecord, QueueMessage } from '../core/types';

export const EVENT_RETENTION_SECONDS = 14 * 24 * 3600;

/**
 * The TTL (epoch seconds) of a record's two items: 14 days from this write (its arrival,
 * its release, its end when the worker writes it whole). None while it is held: a paused
 * subscription keeps its events until `resume`, however long, and the release writes both
 * items again with it. Queued and processing records keep theirs: no queue keeps a
 * message longer (the queue 4 days, the dead-letter queue 14 from the first send; a
 * redrive writes the record again).
 */
export function eventExpiresAt(record: Pick<EventRecord, 'status' | 'received_at' | 'updated_at'>): number | undefined {
  if (record.status === 'held') return undefined;
  return Math.floor((Date.parse(record.updated_at) || Date.parse(record.received_at) || Date.now()) / 1000) + EVENT_RETENTION_SECONDS;
}

export type Item = Record<string, AttributeValue>;

/** The sort key of an event's message item. */
export const MESSAGE_SUFFIX = '#message';
export const messageKey = (eventId: string, subscription: string): Item => ({ event_id: { S: eventId }, subscription: { S: `${subscription}${MESSAGE_SUFFIX}` } });
export const isMessageItem = (item: Item) => item.subscription?.S?.endsWith(MESSAGE_SUFFIX) === true;

/** A record's two items, its message's first (also written by the dedup store's claim transaction). */
export function eventItems(record: EventRecord): [message: Item, record: Item] {
  const { message, ...rest } = record;
  const expires = eventExpiresAt(record);
  return [
    { ...messageKey(record.event_id, record.subscription), message: { S: messageJson(message) }, ...(expires === undefined ? {} : { expires_at: { N: String(expires) } }) },
    // A PutItem replaces the whole item: a held record written over one with a TTL loses it.
    marshall({ ...rest, arrival: `${record.received_at}#${record.event_id}`, expires_at: expires }, { removeUndefinedValues: true }),
  ];
}

/** A PutItem's item and the condition it is written under. */
export interface ConditionalPut {
  Item: Item;
  ConditionExpression: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues: Item;
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
 * A record from its item and its message (the message item's text, or a message the
 * caller has). A record whose message item is gone (it cannot be written after the
 * record, but TTL deletes the two separately) gets a message without a payload.
 */
export function fromItem(item: Item, message?: string | QueueMessage): EventRecord {
  const { message: inline, arrival: _arrival, expires_at: _expires, ...rest } = unmarshall(item);
  const text = (inline as string | undefined) ?? message;
  let parsed: QueueMessage;
  if (typeof text === 'string') {
    parsed = JSON.parse(text) as QueueMessage;
    rememberMessageText(parsed, text);
  } else {
    const r = rest as EventRecord;
    parsed = text ?? {
      v: 1, event_id: r.event_id, subscription: r.subscription, source: r.source, event: r.event, ...(r.action ? { action: r.action } : {}),
      delivery_id: r.delivery_id, received_at: r.received_at, payload_ref: '',
    };
  }
  return { ...rest, message: parsed } as EventRecord;
}

/** Items of one event's partition (records and message items) as records, each with its message. */
export function joined(items: Item[]): EventRecord[] {
  const messages = new Map<string, string>();
  for (const item of items) if (isMessageItem(item)) messages.set((item.subscription?.S ?? '').slice(0, -MESSAGE_SUFFIX.length), item.message?.S ?? '');
  return items.filter((item) => !isMessageItem(item)).map((item) => fromItem(item, messages.get(item.subscription?.S ?? '')));
}
