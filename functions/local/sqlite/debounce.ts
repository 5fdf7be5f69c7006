/** DebounceStore over SQLite: the latest event per (subscription, subject key), with an expiry. */
import type { Clock, DebounceStore } from '../../core/ports';
import type { Repoint } from '../../core/subscriptions/held-pointers';
import type { StoreDb } from './db';

export class SqliteDebounceStore implements DebounceStore {
  private readonly upsert;
  private readonly select;

  constructor(private readonly store: StoreDb, private readonly clock: Clock) {
    this.upsert = store.db.prepare(`INSERT INTO debounce (subscription, subject_key, event_id, expires_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (subscription, subject_key) DO UPDATE SET event_id = excluded.event_id, expires_at = excluded.expires_at`);
    this.select = store.db.prepare('SELECT event_id FROM debounce WHERE subscription = ? AND subject_key = ? AND expires_at > ?').pluck();
  }

  async setLatest(subscription: string, subjectKey: string, eventId: string, ttlSeconds: number): Promise<void> {
    await this.store.write(() => this.setLatestNow(subscription, subjectKey, eventId, ttlSeconds));
  }

  /** `setLatest` inside the caller's write transaction (with the event's queue message: accept.ts). */
  setLatestNow(subscription: string, subjectKey: string, eventId: string, ttlSeconds: number): void {
    this.upsert.run(subscription, subjectKey, eventId, this.clock.now() + ttlSeconds * 1000);
  }

  async getLatest(subscription: string, subjectKey: string): Promise<string | undefined> {
    return this.store.read('The debounce store', () => this.select.get(subscription, subjectKey, this.clock.now()) as string | undefined);
  }
}

/** Moves subjects' latest-event pointers off the held events a release ended, inside the release's write (release.ts, held-pointers.ts). */
export class SqliteRepoint {
  private readonly move;

  constructor(store: StoreDb) {
    this.move = store.db.prepare('UPDATE debounce SET event_id = ?, expires_at = ? WHERE subscription = ? AND subject_key = ? AND event_id = ?');
  }

  /** Only while the pointer names one of `p.ended`: an event accepted since stays the latest. True when moved. */
  now(p: Repoint, expiresAtMs: number): boolean {
    return p.ended.some((ended) => this.move.run(p.eventId, expiresAtMs, p.subscription, p.subjectKey, ended).changes > 0);
  }
}
