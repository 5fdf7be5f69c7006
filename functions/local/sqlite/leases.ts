/** LeaseStore over SQLite: the worker's lease per (event, subscription), taken in the write transaction. */
import type { Clock, LeaseStore } from '../../core/ports';
import { monotonicOf } from '../clock-steps';
import type { StoreDb } from './db';
import { eventKeyOf } from './queue-rows';

export class SqliteLeaseStore implements LeaseStore {
  private readonly take;
  private readonly drop;
  /**
   * The leases this process holds, by event key (queue-rows.ts), each until a deadline on
   * the monotonic clock. `expires_at` on disk is wall-clock, for other processes and a
   * restart; measured by it, a forward step of the clock (NTP, a VM resumed) would hand a
   * lease whose holder still works to a second one, and a backward step would keep one whose
   * holder is stuck for hours.
   */
  private readonly mine = new Map<string, { holder: string; until: number }>();

  constructor(private readonly store: StoreDb, private readonly clock: Clock, private readonly monotonic: () => number = monotonicOf(clock)) {
    // Taken when absent, expired, already ours (a holder may renew its own lease), or held by `?`: one of this process's, run out.
    this.take = store.db.prepare(`INSERT INTO leases (event_id, subscription, holder, expires_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (event_id, subscription) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
      WHERE leases.expires_at <= ? OR leases.holder = excluded.holder OR leases.holder = ?`);
    this.drop = store.db.prepare('DELETE FROM leases WHERE event_id = ? AND subscription = ? AND holder = ?');
  }

  /**
   * Committed, not fsync'd: a lease guards work inside this process (serve drops worker
   * leases left by a dead one at start), and a release claim is followed by the durable
   * queue send it guards, whose WAL fsync covers it (the WAL is appended in order).
   * A lease another holder of this process has is judged by its monotonic deadline alone.
   */
  async acquire(eventId: string, subscription: string, holder: string, leaseMs: number): Promise<boolean> {
    const key = eventKeyOf({ event_id: eventId, subscription });
    const at = this.monotonic();
    const taken = await this.store.write(() => {
      const held = this.mine.get(key);
      const other = held && held.holder !== holder ? held : undefined;
      // Another holder of this process still works: its lease stands, whatever the wall clock says.
      if (other && other.until > at) return false;
      const now = this.clock.now();
      if (this.take.run(eventId, subscription, holder, now + leaseMs, now, other?.holder ?? null).changes > 0) return true;
      // Another process has it now (taken by the wall clock): judged by its row from here on.
      if (held) this.mine.delete(key);
      return false;
    }, { durable: false });
    // Noted once committed: a lease whose write failed is not held.
    if (taken) this.mine.set(key, { holder, until: at + leaseMs });
    return taken;
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
    const key = eventKeyOf({ event_id: eventId, subscription });
    if (this.mine.get(key)?.holder === holder) this.mine.delete(key);
  }
}
