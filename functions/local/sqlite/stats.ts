/** What `hookagent status` shows of the local store: the queue, dead letters, held events, subscriptions. */
import type { StoreDb } from './db';

export interface LocalStoreStats {
  queue: { waiting: number; in_flight: number; oldest_message_age_seconds: number | null };
  dead_letters: number;
  held: number;
  subscriptions: { total: number; paused: string[] };
}

export function localStoreStats(store: StoreDb, now: number): LocalStoreStats {
  return store.read('The local store', () => {
    const db = store.db;
    const queue = db.prepare('SELECT COUNT(*) AS total, COALESCE(SUM(visible_at > ?), 0) AS in_flight, MIN(sent_at) AS oldest FROM queue').get(now) as { total: number; in_flight: number; oldest: number | null };
    const paused = (db.prepare('SELECT name, body FROM subscriptions ORDER BY name').all() as Array<{ name: string; body: string }>)
      .filter((row) => (JSON.parse(row.body) as { state?: string }).state === 'paused').map((row) => row.name);
    return {
      queue: { waiting: queue.total - queue.in_flight, in_flight: queue.in_flight, oldest_message_age_seconds: queue.oldest === null ? null : Math.max(0, Math.round((now - queue.oldest) / 1000)) },
      dead_letters: db.prepare('SELECT COUNT(*) FROM dead_letters').pluck().get() as number,
      held: db.prepare("SELECT COUNT(*) FROM events WHERE status = 'held'").pluck().get() as number,
      subscriptions: { total: db.prepare('SELECT COUNT(*) FROM subscriptions').pluck().get() as number, paused },
    };
  });
}
