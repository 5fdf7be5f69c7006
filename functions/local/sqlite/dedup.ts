/**
 * DedupStore over SQLite: one row per delivery key with the event it was claimed for,
 * when (`claimed_at`, ms; 0 once released) and whether it is committed. The claim's
 * read and write run together in the store's write transaction, so two requests with
 * one key can never both see it free.
 */
import type { Claim, ClaimOptions, Clock, DedupStore } from '../../core/ports';
import type { StoreDb } from './db';

interface Row {
  event_id: string;
  claimed_at: number;
  committed: number;
  expires_at: number;
}

export class SqliteDedupStore implements DedupStore {
  private readonly select;
  private readonly upsert;
  private readonly commitStmt;
  private readonly releaseStmt;

  constructor(private readonly store: StoreDb, private readonly clock: Clock) {
    const db = store.db;
    this.select = db.prepare('SELECT event_id, claimed_at, committed, expires_at FROM dedup WHERE key = ?');
    this.upsert = db.prepare(`INSERT INTO dedup (key, event_id, claimed_at, committed, expires_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (key) DO UPDATE SET event_id = excluded.event_id, claimed_at = excluded.claimed_at, committed = excluded.committed, expires_at = excluded.expires_at`);
    this.commitStmt = db.prepare('UPDATE dedup SET committed = 1 WHERE key = ?');
    this.releaseStmt = db.prepare('UPDATE dedup SET claimed_at = 0 WHERE key = ? AND committed = 0');
  }

  claim(key: string, options: ClaimOptions): Promise<Claim> {
    return this.store.write(() => this.claimNow(key, options, false), { durable: false });
  }

  /**
   * The claim, inside the caller's write transaction. `committed`: a new claim is written
   * committed at once (the event is stored in the same transaction, see accept.ts).
   */
  claimNow(key: string, options: ClaimOptions, committed: boolean): Claim {
    const now = this.clock.now();
    const held = this.select.get(key) as Row | undefined;
    const expires = now + options.ttlSeconds * 1000;
    if (held === undefined || held.expires_at <= now) {
      this.upsert.run(key, options.eventId, now, committed ? 1 : 0, expires);
      return { kind: 'new' };
    }
    if (held.committed) return { kind: 'duplicate', eventId: held.event_id };
    if (held.claimed_at >= options.staleBefore) return { kind: 'in_progress' };
    this.upsert.run(key, held.event_id, now, 0, expires);
    return { kind: 'resumed', eventId: held.event_id };
  }

  async commit(key: string): Promise<void> {
    // Ingest answers 202 once the event is queued (durably); the commit rides on the next WAL fsync.
    await this.store.write(() => this.commitStmt.run(key), { durable: false });
  }

  async release(key: string): Promise<void> {
    await this.store.write(() => this.releaseStmt.run(key), { durable: false });
  }
}
