/** Drops what has outlived its retention (the DynamoDB tables do this with TTL attributes). */
import type { StoreDb } from './db';
import { REQUEST_RETENTION_MS } from './request-log';
import { EVENT_RETENTION_MS } from './event-log';

export function expireOld(store: StoreDb, now: number): Promise<void> {
  return store.write(() => {
    const db = store.db;
    db.prepare('DELETE FROM dedup WHERE expires_at <= ?').run(now);
    db.prepare('DELETE FROM events WHERE expires_at <= ?').run(now);
    db.prepare('DELETE FROM event_messages WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.event_id = event_messages.event_id AND e.subscription = event_messages.subscription)').run();
    db.prepare('DELETE FROM event_texts WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.event_id = event_texts.event_id AND e.subscription = event_texts.subscription)').run();
    db.prepare('DELETE FROM payloads WHERE created_at <= ?').run(now - EVENT_RETENTION_MS);
    db.prepare('DELETE FROM leases WHERE expires_at <= ?').run(now);
    db.prepare('DELETE FROM counters WHERE expires_at <= ?').run(now);
    db.prepare('DELETE FROM debounce WHERE expires_at <= ?').run(now);
    db.prepare('DELETE FROM requests WHERE received_at <= ?').run(now - REQUEST_RETENTION_MS);
  });
}
