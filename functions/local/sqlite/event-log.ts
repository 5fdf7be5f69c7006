/**
 * EventLog over SQLite: one row per (event, subscription). The queue message (which may
 * carry the whole payload) is written once, with the record; status changes rewrite only
 * the small `data` column. Records are kept 14 days, like the DynamoDB table's TTL.
 */
import type { EventLog } from '../../core/ports';
import type { EventRecord, EventStatus, QueueMessage } from '../../core/types';
import type { StoreDb } from './db';

export const EVENT_RETENTION_MS = 14 * 24 * 3600 * 1000;

interface Row {
  data: string;
  message: string;
}

function fromRow(row: Row): EventRecord {
  return { ...(JSON.parse(row.data) as Omit<EventRecord, 'message'>), message: JSON.parse(row.message) as QueueMessage } as EventRecord;
}

function dataOf(record: EventRecord): string {
  const { message: _message, ...rest } = record;
  return JSON.stringify(rest);
}

export class SqliteEventLog implements EventLog {
  private readonly upsert;
  private readonly selectOne;
  private readonly selectData;
  private readonly setData;
  private readonly selectEvent;
  private readonly bySubscription;
  private readonly bySubscriptionBefore;
  private readonly byStatus;
  private readonly remove;
  private readonly upsertMessage;
  private readonly removeMessage;

  constructor(private readonly store: StoreDb) {
    const db = store.db;
    this.upsert = db.prepare(`INSERT OR REPLACE INTO events (event_id, subscription, received_at, status, data, expires_at) VALUES (?, ?, ?, ?, ?, ?)`);
    this.upsertMessage = db.prepare('INSERT OR REPLACE INTO event_messages (event_id, subscription, message) VALUES (?, ?, ?)');
    const columns = 'SELECT e.data AS data, m.message AS message FROM events e JOIN event_messages m ON m.event_id = e.event_id AND m.subscription = e.subscription';
    this.selectOne = db.prepare(`${columns} WHERE e.event_id = ? AND e.subscription = ?`);
    this.selectData = db.prepare('SELECT data FROM events WHERE event_id = ? AND subscription = ?').pluck();
    this.setData = db.prepare('UPDATE events SET data = ?, status = ? WHERE event_id = ? AND subscription = ?');
    this.selectEvent = db.prepare(`${columns} WHERE e.event_id = ? ORDER BY e.subscription`);
    this.bySubscription = db.prepare(`${columns} WHERE e.subscription = ? ORDER BY e.received_at DESC, e.event_id DESC LIMIT ?`);
    this.bySubscriptionBefore = db.prepare(`${columns} WHERE e.subscription = ? AND (e.received_at, e.event_id) < (?, ?) ORDER BY e.received_at DESC, e.event_id DESC LIMIT ?`);
    this.byStatus = db.prepare(`${columns} WHERE e.subscription = ? AND e.status = ? ORDER BY e.received_at, e.event_id`);
    this.remove = db.prepare('DELETE FROM events WHERE event_id = ? AND subscription = ?');
    this.removeMessage = db.prepare('DELETE FROM event_messages WHERE event_id = ? AND subscription = ?');
  }

  async putAll(records: EventRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.store.write(() => {
      for (const record of records) {
        const expires = (Date.parse(record.received_at) || Date.now()) + EVENT_RETENTION_MS;
        this.upsert.run(record.event_id, record.subscription, record.received_at, record.status, dataOf(record), expires);
        this.upsertMessage.run(record.event_id, record.subscription, JSON.stringify(record.message));
      }
      // Queued records are made durable by the queue send that follows them (ingest answers after it); held ones are not followed by one.
    }, { durable: records.some((r) => r.status !== 'queued') });
  }

  /** Changes some fields of a record (a field set to undefined is removed); the message is left alone. Absent records are ignored. */
  async update(eventId: string, subscription: string, changes: Partial<EventRecord>): Promise<void> {
    await this.store.write(() => {
      const data = this.selectData.get(eventId, subscription) as string | undefined;
      if (data === undefined) return;
      const { message: _message, event_id: _id, subscription: _sub, ...rest } = changes;
      const next: Record<string, unknown> = { ...(JSON.parse(data) as Record<string, unknown>), ...rest };
      for (const key of Object.keys(next)) if (next[key] === undefined) delete next[key];
      this.setData.run(JSON.stringify(next), next.status as string, eventId, subscription);
      // The worker's progress: a crash before the next fsync only repeats work the queue gives back.
    }, { durable: false });
  }

  async get(eventId: string, subscription: string): Promise<EventRecord | undefined> {
    const row = this.store.read('The event log', () => this.selectOne.get(eventId, subscription) as Row | undefined);
    return row && fromRow(row);
  }

  async getEvent(eventId: string): Promise<EventRecord[]> {
    return this.store.read('The event log', () => (this.selectEvent.all(eventId) as Row[]).map(fromRow));
  }

  async listBySubscription(subscription: string, limit: number, before?: Pick<EventRecord, 'event_id' | 'received_at'>): Promise<EventRecord[]> {
    return this.store.read('The event log', () => ((before
      ? this.bySubscriptionBefore.all(subscription, before.received_at, before.event_id, limit)
      : this.bySubscription.all(subscription, limit)) as Row[]).map(fromRow));
  }

  async listByStatus(subscription: string, status: EventStatus): Promise<EventRecord[]> {
    return this.store.read('The event log', () => (this.byStatus.all(subscription, status) as Row[]).map(fromRow));
  }

  async deleteAll(keys: Array<{ event_id: string; subscription: string }>): Promise<void> {
    if (keys.length === 0) return;
    await this.store.write(() => {
      for (const key of keys) {
        this.remove.run(key.event_id, key.subscription);
        this.removeMessage.run(key.event_id, key.subscription);
      }
    });
  }
}
