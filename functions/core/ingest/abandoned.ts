/**
 * Records of requests that were never accepted. Ingest writes an event's records before
 * it queues the messages; a request answered 503, or cut off by a crash or a shutdown in
 * between, can leave a record `queued` that no message will ever finish. Once the ingest
 * lease has passed (the sender's retry would have resumed it by then), such a record ends
 * as `abandoned`, with the reason, so `webhook events` never shows it waiting forever. A
 * later retry of the same delivery id still resumes and queues it.
 */
import type { DedupStore, EventLog, SubscriptionStore } from '../ports';
import type { EventRecord, EventSummary } from '../types';

export const ABANDONED_REASON =
  'Never accepted: the request that recorded this event was answered 503 or cut off before the event was queued, and the sender did not retry';

export interface AbandonOptions {
  /** Whether the queue still holds a message for this (event, subscription). */
  queued(eventId: string, subscription: string): boolean;
  /** Only records received before this (epoch ms): younger ones may belong to a request still running. */
  receivedBefore: number;
  now: string;
}

/** Records read per page by the sweep, where the event log can page without messages. */
export const SWEEP_PAGE = 500;

/**
 * Marks stranded records `abandoned` (their status, error and time only: the message is
 * not rewritten); returns them. serve runs this every minute while a backlog of thousands
 * of `queued` records may be waiting: where the event log offers it, the records are read
 * a page at a time without their messages, so the sweep neither parses every payload nor
 * holds them all in memory at once.
 */
export async function abandonStranded(events: EventLog, subscriptions: SubscriptionStore, options: AbandonOptions): Promise<EventSummary[]> {
  const stranded: EventSummary[] = [];
  for (const subscription of await subscriptions.list()) {
    for await (const record of queuedRecords(events, subscription.name, options.receivedBefore)) {
      if ((record.attempts ?? 0) > 0 || Date.parse(record.received_at) >= options.receivedBefore) continue;
      if (options.queued(record.event_id, record.subscription)) continue;
      stranded.push(record);
    }
  }
  const changes = { status: 'abandoned' as const, updated_at: options.now, error: { code: 'abandoned', message: ABANDONED_REASON } };
  for (const record of stranded) await events.update(record.event_id, record.subscription, changes);
  return stranded.map((record) => ({ ...record, ...changes }));
}

/** A subscription's `queued` records that arrived before `receivedBefore` (and, from a log that cannot page, the younger ones too). */
async function* queuedRecords(events: EventLog, subscription: string, receivedBefore: number): AsyncGenerator<EventSummary> {
  if (!events.listSummariesByStatus) {
    yield* await events.listByStatus(subscription, 'queued');
    return;
  }
  const before = new Date(receivedBefore).toISOString();
  let after: EventSummary | undefined;
  for (;;) {
    const page = await events.listSummariesByStatus(subscription, 'queued', { receivedBefore: before, limit: SWEEP_PAGE, ...(after ? { after } : {}) });
    yield* page;
    if (page.length < SWEEP_PAGE) return;
    after = page[page.length - 1];
  }
}

/** The dedup key ingest claimed for a record's delivery id (see service.ts). */
export function dedupKeyOf(record: Pick<EventRecord, 'source' | 'subscription' | 'delivery_id'>): string {
  return `${record.source === 'custom' ? `custom/${record.subscription}` : record.source}#${record.delivery_id}`;
}

/**
 * Where the queue cannot be looked into (SQS), the dedup claim tells: ingest commits a
 * claim right after it queued the event, so a record still `queued` whose claim was
 * released (a 503) or is still pending past the lease was never accepted. Records of
 * requests without a delivery id had no claim and are left as they are.
 */
export async function abandonUncommitted(
  events: EventLog, dedup: Required<Pick<DedupStore, 'inspect'>>, subscription: string,
  options: { receivedBefore: number; leaseMs: number; now: number },
): Promise<EventRecord[]> {
  const abandoned: EventRecord[] = [];
  for (const record of await events.listByStatus(subscription, 'queued')) {
    if ((record.attempts ?? 0) > 0 || Date.parse(record.received_at) >= options.receivedBefore || record.delivery_id === record.event_id) continue;
    const claim = await dedup.inspect(dedupKeyOf(record));
    if (!claim || claim.committed || claim.eventId !== record.event_id) continue;
    if (claim.claimedAt !== 0 && claim.claimedAt > options.now - options.leaseMs) continue;
    abandoned.push({ ...record, status: 'abandoned', updated_at: new Date(options.now).toISOString(), error: { code: 'abandoned', message: ABANDONED_REASON } });
  }
  if (abandoned.length > 0) await events.putAll(abandoned);
  return abandoned;
}
