/** LeaseStore over SQLite: the worker's lease per (event, subscription), taken in the write transaction. */
import type { Clock, LeaseStore } from '../../core/ports';
import type { StoreDb } from './db';

export class SqliteLeaseStore implements LeaseStore {
  private readonly take;
  private readonly drop;

  constructor(private readonly store: StoreDb, private readonly clock: Clock) {
    // Taken when absent, expired, or already ours (a holder may renew its own lease).
    this.take = store.db.prepare(`INSERT INTO leases (event_id, subscription, holder, expires_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (event_id, subscription) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
      WHERE leases.expires_at <= ? OR leases.holder = excluded.holder`);
    this.drop = store.db.prepare('DELETE FROM leases WHERE event_id = ? AND subscription = ? AND holder = ?');
  }

  /**
   * Committed, not fsync'd: a lease guards work inside this process (serve drops worker
   * leases left by a dead one at start), and a release claim is followed by the durable
   * queue send it guards, whose WAL fsync covers it (the WAL is appended in order).
   */
  acquire(eventId: string, subscription: string, holder: string, leaseMs: number): Promise<boolean> {
    return this.store.write(() => {
      const now = this.clock.now();
      return this.take.run(eventId, subscription, holder, now + leaseMs, now).changes > 0;
    }, { durable: false });
  }

  /**
   * serve owns its data dir: worker leases left by a serve that is gone (kill -9) are
   * dropped at start, so its messages run at once. Release claims of held events
   * (`<subscription>#release`, taken only where a release is not atomic: release.ts) stay.
   */
  dropWorkerLeases(): Promise<number> {
    return this.store.write(() => this.store.db.prepare("DELETE FROM leases WHERE subscription NOT LIKE '%#release'").run().changes);
  }

  async release(eventId: string, subscription: string, holder: string): Promise<void> {
    await this.store.write(() => this.drop.run(eventId, subscription, holder), { durable: false });
  }
}
