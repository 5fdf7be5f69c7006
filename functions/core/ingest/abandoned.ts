/**
 * Records of requests that were never accepted. Ingest writes an event's records before
 * it queues the messages; a request answered 503, or cut off by a crash or a shutdown in
 * between, can leave a record `queued` that no message will ever finish. Once the ingest
 * lease has passed (the sender's retry would have resumed it by then), such a record ends
 * as `abandoned`, with the reason, so `webhook events` never shows it waiting forever. A
 * later retry of the same delivery id still resumes and queues it.
 */
import type { EventLog, SubscriptionStore } from '../ports';
import type { EventRecord } from '../types';

export const ABANDONED_REASON =
  'Never accepted: the request that recorded this event was answered 503 or cut off before the event was queued, and the sender did not retry';

export interface AbandonOptions {
  /** Whether the queue still holds a message for this (event, subscription). */
  queued(eventId: string, subscription: string): boolean;
  /** Only records received before this (epoch ms): younger ones may belong to a request still running. */
  receivedBefore: number;
  now: string;
}

/** Marks stranded records `abandoned`; returns them. */
export async function abandonStranded(events: EventLog, subscriptions: SubscriptionStore, options: AbandonOptions): Promise<EventRecord[]> {
  const abandoned: EventRecord[] = [];
  for (const subscription of await subscriptions.list()) {
    for (const record of await events.listByStatus(subscription.name, 'queued')) {
      if ((record.attempts ?? 0) > 0 || Date.parse(record.received_at) >= options.receivedBefore) continue;
      if (options.queued(record.event_id, record.subscription)) continue;
      abandoned.push({ ...record, status: 'abandoned', updated_at: options.now, error: { code: 'abandoned', message: ABANDONED_REASON } });
    }
  }
  if (abandoned.length > 0) await events.putAll(abandoned);
  return abandoned;
}
