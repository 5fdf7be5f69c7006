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
import { DEFAULT_CLAIM_LEASE_MS, dedupKeyFor } from './accept';

export const ABANDONED_REASON =
  'Never accepted: the request that recorded this event was answered 503 or cut off before the event was queued, and the sender did not retry';

export interface AbandonOptions {
  /** Whether the queue still holds a message for this (event, subscription). */
  queued(eventId: string, subscription: string): boolean;
  /** Only records received before this (epoch ms): younger ones may belong to a request still running. */
  receivedBefore: number;
  now: string;
}

/** The changes that mark a record `abandoned` at `now` (ISO 8601). */
const abandonedAt = (now: string): Pick<EventRecord, 'status' | 'updated_at' | 'error'> =>
  ({ status: 'abandoned', updated_at: now, error: { code: 'abandoned', message: ABANDONED_REASON } });

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
  const changes = abandonedAt(options.now);
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

/** The dedup key ingest claimed for a record's delivery id (accept.ts): a custom endpoint's by the subscription it was accepted for. */
export function dedupKeyOf(record: Pick<EventRecord, 'source' | 'subscription' | 'delivery_id' | 'message'>): string {
  return dedupKeyFor(record.source, record.subscription, record.message.subscription_created_at, record.delivery_id);
}

/** A dedup store that can be looked into (DynamoDB's): what tells a never-accepted record on AWS. */
export type ClaimInspector = Required<Pick<DedupStore, 'inspect'>>;

/** `receivedBefore`, `now`: epoch ms; `leaseMs`: how long a pending claim may belong to a request still running. */
export interface ClaimCheck { receivedBefore: number; leaseMs: number; now: number }

/**
 * Where the queue cannot be looked into (SQS), the dedup claim tells: ingest commits a
 * claim right after it queued the event, so a record still `queued` whose claim was
 * released (a 503) or is still pending past the lease was never accepted. Records of
 * requests without a delivery id had no claim and are left as they are.
 */
async function neverAccepted(record: EventRecord, dedup: ClaimInspector, options: ClaimCheck): Promise<boolean> {
  if (record.status !== 'queued' || (record.attempts ?? 0) > 0 || Date.parse(record.received_at) >= options.receivedBefore || record.delivery_id === record.event_id) return false;
  const claim = await dedup.inspect(dedupKeyOf(record));
  if (!claim || claim.committed || claim.eventId !== record.event_id) return false;
  return claim.claimedAt === 0 || claim.claimedAt <= options.now - options.leaseMs;
}

/** Writes `record` as `abandoned`, where the store can, only while it is still `queued` (a worker may have taken it on meanwhile); the record written, or undefined. */
async function markAbandoned(events: EventLog, record: EventRecord, nowMs: number): Promise<EventRecord | undefined> {
  const abandoned = { ...record, ...abandonedAt(new Date(nowMs).toISOString()) };
  if (events.putIfStatus) return (await events.putIfStatus(abandoned, 'queued')) ? abandoned : undefined;
  await events.putAll([abandoned]);
  return abandoned;
}

/** One subscription's `queued` records that were never accepted, marked `abandoned` (see neverAccepted); returns them. */
export async function abandonUncommitted(events: EventLog, dedup: ClaimInspector, subscription: string, options: ClaimCheck): Promise<EventRecord[]> {
  const abandoned: EventRecord[] = [];
  for (const record of await events.listByStatus(subscription, 'queued')) {
    if (!(await neverAccepted(record, dedup, options))) continue;
    const written = await markAbandoned(events, record, options.now);
    if (written) abandoned.push(written);
  }
  return abandoned;
}

/**
 * What reads of the event log (`webhook events`, `webhook event`, the console) need to find
 * records of requests that died before their event was queued. `dedup` is there on AWS
 * only: locally serve's sweep (abandonStranded) writes the status.
 */
export interface AbandonedReads {
  events: EventLog;
  dedup?: DedupStore;
}

const inspectorOf = (dedup: DedupStore | undefined): ClaimInspector | undefined => (dedup?.inspect ? (dedup as ClaimInspector) : undefined);
const readCheck = (nowMs: number): ClaimCheck => ({ receivedBefore: nowMs - DEFAULT_CLAIM_LEASE_MS, leaseMs: DEFAULT_CLAIM_LEASE_MS, now: nowMs });

/** Before a subscription's records are listed: its never-accepted ones marked `abandoned` (AWS); returns them. */
export async function settleAbandoned(stores: AbandonedReads, subscription: string, nowMs = Date.now()): Promise<EventRecord[]> {
  const dedup = inspectorOf(stores.dedup);
  return dedup ? abandonUncommitted(stores.events, dedup, subscription, readCheck(nowMs)) : [];
}

/** Records read to be shown (one event's): each never accepted marked `abandoned` (AWS), one claim read per record still `queued`. */
export async function settleShown(stores: AbandonedReads, records: EventRecord[], nowMs = Date.now()): Promise<EventRecord[]> {
  const dedup = inspectorOf(stores.dedup);
  if (!dedup) return records;
  const check = readCheck(nowMs);
  return Promise.all(records.map(async (record) => ((await neverAccepted(record, dedup, check)) ? (await markAbandoned(stores.events, record, nowMs)) ?? record : record)));
}
