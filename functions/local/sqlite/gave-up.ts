/**
 * The event record of a message the local queue dead-letters after `maxReceiveCount`
 * receives, marked `failed` in that same receive transaction (queue-gave-up.ts says how).
 * It writes the events row as the event log stores it (`data`: the record without its
 * message, prompt and reply), because it must run inside the queue's transaction.
 */
import type Database from 'better-sqlite3';
import type { EventRecord } from '../../core/types';
import { queueGaveUpChanges } from '../../core/worker/queue-gave-up';

export interface EventKey {
  event_id: string;
  subscription: string;
}

export class GaveUpRecords {
  private readonly select: Database.Statement;
  private readonly set: Database.Statement;

  constructor(db: Database.Database) {
    this.select = db.prepare('SELECT data FROM events WHERE event_id = ? AND subscription = ?').pluck();
    this.set = db.prepare('UPDATE events SET data = ?, status = ? WHERE event_id = ? AND subscription = ?');
  }

  /** Inside the caller's write transaction; a record that is gone or finished is left as it is. */
  markNow(key: EventKey, receiveCount: number, at: string): void {
    const data = this.select.get(key.event_id, key.subscription) as string | undefined;
    if (data === undefined) return;
    const record = JSON.parse(data) as EventRecord;
    const changes = queueGaveUpChanges(record, receiveCount, at);
    if (!changes) return;
    const next = { ...record, ...changes };
    this.set.run(JSON.stringify(next), next.status, key.event_id, key.subscription);
  }
}
