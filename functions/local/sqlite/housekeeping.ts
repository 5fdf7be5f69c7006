/**
 * Drops what has outlived its retention, as the DynamoDB tables do with their TTL
 * attributes: requests after 7 days, finished events (with their messages and texts) 14
 * days after they ended, payloads no record needs any more, and expired claims, leases,
 * counters and debounce rows. serve runs a pass when it starts (compose.ts) and then every
 * hour while it runs (`startHousekeeping`). Each pass deletes a bounded batch per write
 * transaction: a first pass over months of rows never holds the writer for long, and the
 * requests and workers' writes go in between.
 *
 * Records that still promise work (held by a paused subscription, queued, processing)
 * never expire, however long they wait, nor the payloads they read.
 */
import { describeError } from '../../core/errors';
import type { Logger } from '../../core/log';
import type { Clock } from '../../core/ports';
import type { StoreDb } from './db';
import { EVENT_RETENTION_MS, WAITING_STATUSES } from './event-log';
import { payloadKeyOf } from './payloads';
import { REQUEST_RETENTION_MS } from './request-log';

export const HOUSEKEEPING_INTERVAL_MS = 3600_000;
/** Rows per transaction: small rows (requests, claims, ...), events (whose message may carry a payload), payloads (up to megabytes). */
const SMALL_BATCH = 5_000;
const EVENT_BATCH = 500;
const PAYLOAD_BATCH = 100;

/** Rows dropped by one pass. */
export interface Dropped {
  requests: number;
  events: number;
  payloads: number;
  /** Expired dedup claims, leases, counters and debounce rows. */
  expired: number;
}

const WAITING_SQL = WAITING_STATUSES.map((s) => `'${s}'`).join(', ');
/** Tables whose rows carry their own expiry, with their keys. */
const EXPIRING: Array<[table: string, key: string]> = [['dedup', 'key'], ['leases', 'event_id, subscription'], ['counters', 'key'], ['debounce', 'subscription, subject_key']];

/** Payload keys are `{event_id}`, `{event_id}-{subscription}` and `{event_id}-{subscription}-reply`; event ids hold no '-'. */
const eventOfPayload = (key: string): string => key.split('-', 1)[0] as string;

export interface ExpireOptions {
  logger?: Logger;
  /** Checked between batches: a pass stops early once it is true (serve stopping). */
  stopped?: () => boolean;
}

/** One pass at `now` (epoch ms). */
export async function expireOld(store: StoreDb, now: number, options: ExpireOptions = {}): Promise<Dropped> {
  const db = store.db;
  const stopped = options.stopped ?? (() => false);
  /** Runs `batch` in a write transaction of its own until it deletes fewer than `limit` rows. */
  const inBatches = async (limit: number, batch: () => number): Promise<number> => {
    let total = 0;
    for (let n = limit; n >= limit && !stopped();) {
      n = await store.write(batch, { durable: false });
      total += n;
    }
    return total;
  };

  let expired = 0;
  for (const [table, key] of EXPIRING) {
    const drop = db.prepare(`DELETE FROM ${table} WHERE (${key}) IN (SELECT ${key} FROM ${table} WHERE expires_at <= ? LIMIT ?)`);
    expired += await inBatches(SMALL_BATCH, () => drop.run(now, SMALL_BATCH).changes);
  }
  const dropRequests = db.prepare('DELETE FROM requests WHERE id IN (SELECT id FROM requests WHERE received_at <= ? LIMIT ?)');
  const requests = await inBatches(SMALL_BATCH, () => dropRequests.run(now - REQUEST_RETENTION_MS, SMALL_BATCH).changes);

  const endedBefore = db.prepare(`SELECT event_id, subscription FROM events WHERE expires_at <= ? AND status NOT IN (${WAITING_SQL}) LIMIT ?`);
  const dropEvent = ['events', 'event_messages', 'event_texts'].map((table) => db.prepare(`DELETE FROM ${table} WHERE event_id = ? AND subscription = ?`));
  const events = await inBatches(EVENT_BATCH, () => {
    const keys = endedBefore.all(now, EVENT_BATCH) as Array<{ event_id: string; subscription: string }>;
    for (const { event_id, subscription } of keys) for (const drop of dropEvent) drop.run(event_id, subscription);
    return keys.length;
  });

  const payloads = stopped() ? 0 : await expirePayloads(store, now - EVENT_RETENTION_MS, stopped);
  const dropped: Dropped = { requests, events, payloads, expired };
  if (requests + events + payloads + expired > 0) options.logger?.info('expired records dropped', { ...dropped });
  return dropped;
}

/**
 * Payloads created before `createdBefore` that no record needs: none of their event's
 * records is left, and no waiting record (a held replay of an older event) reads them.
 */
async function expirePayloads(store: StoreDb, createdBefore: number, stopped: () => boolean): Promise<number> {
  const db = store.db;
  // Read once, after the pass dropped its events: a replay made from now on needs its event's records, which keep the payload.
  const needed = new Set(store.read('The event log', () => (db.prepare(`SELECT json_extract(m.message, '$.payload_ref') FROM events e
    JOIN event_messages m ON m.event_id = e.event_id AND m.subscription = e.subscription
    WHERE e.status IN (${WAITING_SQL})`).pluck().all() as Array<string | null>))
    .flatMap((ref) => (ref ? [payloadKeyOf(ref)] : [])));
  const candidates = db.prepare('SELECT key, created_at FROM payloads WHERE created_at <= ? AND (created_at, key) > (?, ?) ORDER BY created_at, key LIMIT ?');
  const recorded = db.prepare('SELECT 1 FROM events WHERE event_id = ? LIMIT 1').pluck();
  const drop = db.prepare('DELETE FROM payloads WHERE key = ?');
  // Payloads kept are passed over: the next batch starts after the last one seen.
  let after = { created_at: -1, key: '' };
  let deleted = 0;
  for (let more = true; more && !stopped();) {
    deleted += await store.write(() => {
      const batch = candidates.all(createdBefore, after.created_at, after.key, PAYLOAD_BATCH) as Array<{ key: string; created_at: number }>;
      more = batch.length === PAYLOAD_BATCH;
      after = batch[batch.length - 1] ?? after;
      let n = 0;
      for (const { key } of batch) {
        if (!needed.has(key) && recorded.get(eventOfPayload(key)) === undefined) n += drop.run(key).changes;
      }
      return n;
    }, { durable: false });
  }
  return deleted;
}

export interface HousekeepingOptions {
  clock: Clock;
  logger?: Logger;
  /** Between two passes; an hour by default. */
  intervalMs?: number;
  /** Called after each pass. */
  onPass?: (dropped: Dropped) => void;
}

/**
 * Runs a pass every `intervalMs` while serve runs (the pass at start is compose.ts's); a
 * pass still going when the next is due is not doubled. The returned stop resolves once
 * a pass under way has ended (at its next batch), so the store can close after it.
 */
export function startHousekeeping(store: StoreDb, options: HousekeepingOptions): () => Promise<void> {
  let stopped = false;
  let running: Promise<void> | undefined;
  const pass = async (): Promise<void> => {
    try {
      const dropped = await expireOld(store, options.clock.now(), { stopped: () => stopped, ...(options.logger ? { logger: options.logger } : {}) });
      options.onPass?.(dropped);
    } catch (error) {
      // A store that is closing or lost: the next pass (or the next start) catches up.
      if (!stopped) options.logger?.warn('could not drop expired records', { error: describeError(error) });
    }
  };
  const timer = setInterval(() => {
    running ??= pass().finally(() => (running = undefined));
  }, options.intervalMs ?? HOUSEKEEPING_INTERVAL_MS);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}
