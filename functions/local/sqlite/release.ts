/**
 * AtomicRelease over SQLite: a held record is set `queued` and its message queued (by
 * reference) in one transaction, checked to be still `held` inside it. SQLite serialises
 * writers across processes, so `webhook resume` and serve's ingest (which releases what it
 * held when a resume raced it) never both queue a record, with no release claim to leave
 * behind; and a process killed mid-release leaves each record held (the next resume
 * releases it) or queued with its message, never queued without one: a message still in
 * flight for it (the worker that held it is about to delete it) is re-armed as a new one.
 * The same transaction moves subjects' latest-event pointers off the held events the
 * release ended onto the records it queues (held-pointers.ts), so the worker never finds
 * a released record's subject naming an event that never runs.
 */
import type Database from 'better-sqlite3';
import type { AtomicRelease } from '../../core/ports';
import { repointsFor, type Repoint, type RepointingRelease } from '../../core/subscriptions/held-pointers';
import type { EventRecord } from '../../core/types';
import { DEBOUNCE_TTL_SECONDS } from '../../core/worker/gates';
import type { StoreDb } from './db';
import { SqliteRepoint } from './debounce';
import type { SqliteEventLog } from './event-log';
import type { SqliteQueue } from './queue';
import { bodiesOf } from './queue-rows';

/** Records per transaction: a release of thousands neither holds the write lock long nor waits for one huge commit. */
const CHUNK = 200;

export class SqliteAtomicRelease implements AtomicRelease, RepointingRelease {
  private readonly status: Database.Statement;
  private readonly pointers: SqliteRepoint;

  constructor(private readonly store: StoreDb, private readonly events: SqliteEventLog, private readonly queue: SqliteQueue) {
    this.status = store.db.prepare('SELECT status FROM events WHERE event_id = ? AND subscription = ?').pluck();
    this.pointers = new SqliteRepoint(store);
  }

  async releaseHeld(records: EventRecord[], at: string, repoint: readonly Repoint[] = []): Promise<EventRecord[]> {
    const released: EventRecord[] = [];
    for (let i = 0; i < records.length; i += CHUNK) released.push(...await this.releaseChunk(records.slice(i, i + CHUNK), at, repoint));
    return released;
  }

  private async releaseChunk(records: EventRecord[], at: string, repoint: readonly Repoint[]): Promise<EventRecord[]> {
    let keys: string[] = [];
    const released = await this.store.write(() => {
      const still = records
        .filter((r) => this.status.get(r.event_id, r.subscription) === 'held')
        .map((r): EventRecord => ({ ...r, status: 'queued', updated_at: at }));
      const messages = still.map((r) => r.message);
      const [bodies, eventKeys] = bodiesOf(messages, true);
      keys = eventKeys;
      this.events.putNow(still);
      // The worker that held a record may still hold its message, about to delete it.
      this.queue.rearmNow(eventKeys);
      this.queue.sendNow(bodies, eventKeys, 0, messages);
      const expiresAt = Date.parse(at) + DEBOUNCE_TTL_SECONDS * 1000;
      for (const p of repointsFor(repoint, still)) this.pointers.now(p, expiresAt);
      return still;
    }).catch((error: unknown) => {
      this.queue.forget(keys);
      throw error;
    });
    if (released.length > 0) this.queue.sent();
    return released;
  }
}
