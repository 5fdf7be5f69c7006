/**
 * EventLog over SQLite: one row per (event, subscription). The queue message (which may
 * carry the whole payload) is written once, with the record, in event_messages; the
 * prompt and reply have columns of their own; status changes rewrite only the small
 * `data` column (and a text column when it changes). A record is kept 14 days from its
 * last whole write (its arrival, or its release) or from when it ended, whichever is
 * later; one still waiting (held, queued, processing) is never dropped (housekeeping.ts).
 */
import type { EventLog, EventSearch, EventSearchPage, RecordedSubscriptions, UpdateOptions } from '../../core/ports';
import type { EventRecord, EventStatus, EventSummary, QueueMessage } from '../../core/types';
import { messageJson, rememberMessageText } from '../../core/message-json';
import type Database from 'better-sqlite3';
import { RecordGone } from '../../core/worker/record';
import type { StoreDb } from './db';
import { SqliteEventSearch } from './event-search';

export const EVENT_RETENTION_MS = 14 * 24 * 3600 * 1000;

/** Statuses that still promise work (`resume` releases a held record however long the pause): never expired. */
export const WAITING_STATUSES: readonly EventStatus[] = ['held', 'queued', 'processing'];

/** Epoch ms when a record written or ended at `at` (ISO time) expires. */
const expiresFrom = (at: string | undefined): number => (Date.parse(at ?? '') || Date.now()) + EVENT_RETENTION_MS;

interface Row {
  event_id: string;
  subscription: string;
  data: string;
  message: string;
}

/** The two large text fields, kept in event_texts. */
const TEXTS = ['prompt', 'reply'] as const;
/** Records deleted per transaction by deleteHeld and deleteUnstarted. */
const DELETE_CHUNK = 500;

function dataOf(record: EventRecord): string {
  const { message: _message, prompt: _prompt, reply: _reply, ...rest } = record;
  return JSON.stringify(rest);
}

export class SqliteEventLog implements EventLog {
  private readonly upsert;
  private readonly selectOne;
  private readonly selectData;
  private readonly setData;
  private readonly putText;
  private readonly dropText;
  private readonly selectTexts;
  private readonly selectEvent;
  private readonly bySubscription;
  private readonly bySubscriptionBefore;
  private readonly byStatus;
  private readonly summariesByStatus;
  private readonly remove;
  private readonly removeHeld: Database.Statement;
  private readonly removeUnstarted: Database.Statement;
  private readonly upsertMessage;
  private readonly removeMessage;
  private readonly removeTexts;

  constructor(private readonly store: StoreDb) {
    const db = store.db;
    this.upsert = db.prepare(`INSERT OR REPLACE INTO events (event_id, subscription, received_at, status, data, expires_at) VALUES (?, ?, ?, ?, ?, ?)`);
    // Rewritten only when different: a record written again (a release, a replayed copy) keeps its 20 KB message where it is.
    this.upsertMessage = db.prepare(`INSERT INTO event_messages (event_id, subscription, message) VALUES (?, ?, ?)
      ON CONFLICT (event_id, subscription) DO UPDATE SET message = excluded.message WHERE message IS NOT excluded.message`);
    this.putText = db.prepare(`INSERT INTO event_texts (event_id, subscription, name, text) VALUES (?, ?, ?, ?)
      ON CONFLICT (event_id, subscription, name) DO UPDATE SET text = excluded.text WHERE text IS NOT excluded.text`);
    this.dropText = db.prepare('DELETE FROM event_texts WHERE event_id = ? AND subscription = ? AND name = ?');
    this.selectTexts = db.prepare('SELECT name, text FROM event_texts WHERE event_id = ? AND subscription = ?');
    const columns = 'SELECT e.event_id AS event_id, e.subscription AS subscription, e.data AS data, m.message AS message FROM events e JOIN event_messages m ON m.event_id = e.event_id AND m.subscription = e.subscription';
    this.selectOne = db.prepare(`${columns} WHERE e.event_id = ? AND e.subscription = ?`);
    this.selectData = db.prepare('SELECT data FROM events WHERE event_id = ? AND subscription = ?').pluck();
    // An expiry is only ever pushed later: a record that ends keeps its 14 days from then.
    this.setData = db.prepare('UPDATE events SET data = ?, status = ?, expires_at = MAX(expires_at, ?) WHERE event_id = ? AND subscription = ?');
    this.selectEvent = db.prepare(`${columns} WHERE e.event_id = ? ORDER BY e.subscription`);
    this.bySubscription = db.prepare(`${columns} WHERE e.subscription = ? ORDER BY e.received_at DESC, e.event_id DESC LIMIT ?`);
    this.bySubscriptionBefore = db.prepare(`${columns} WHERE e.subscription = ? AND (e.received_at, e.event_id) < (?, ?) ORDER BY e.received_at DESC, e.event_id DESC LIMIT ?`);
    this.byStatus = db.prepare(`${columns} WHERE e.subscription = ? AND e.status = ? ORDER BY e.received_at, e.event_id`);
    this.summariesByStatus = db.prepare(`SELECT data FROM events WHERE subscription = ? AND status = ? AND received_at < ? AND (received_at, event_id) > (?, ?)
      ORDER BY received_at, event_id LIMIT ?`).pluck();
    this.remove = db.prepare('DELETE FROM events WHERE event_id = ? AND subscription = ?');
    this.removeHeld = db.prepare("DELETE FROM events WHERE event_id = ? AND subscription = ? AND status = 'held'");
    this.removeUnstarted = db.prepare("DELETE FROM events WHERE event_id = ? AND subscription = ? AND status = 'queued' AND COALESCE(json_extract(data, '$.attempts'), 0) = 0");
    this.removeMessage = db.prepare('DELETE FROM event_messages WHERE event_id = ? AND subscription = ?');
    this.removeTexts = db.prepare('DELETE FROM event_texts WHERE event_id = ? AND subscription = ?');
  }

  /** A stored record; `message` is the caller's copy when it has one (its payload is neither read nor parsed again). */
  private fromRow(eventId: string, subscription: string, data: string, message: QueueMessage | string): EventRecord {
    const record = JSON.parse(data) as EventRecord;
    for (const { name, text } of this.selectTexts.all(eventId, subscription) as Array<{ name: 'prompt' | 'reply'; text: string }>) record[name] = text;
    if (typeof message === 'string') {
      record.message = JSON.parse(message) as QueueMessage;
      // Written back (a release), the message is this very text: not printed again, and found unchanged.
      rememberMessageText(record.message, message);
    } else {
      record.message = message;
    }
    return record;
  }

  private readonly parsed = (row: Row) => this.fromRow(row.event_id, row.subscription, row.data, row.message);

  /** Sets (or, given undefined, removes) the stored prompt or reply. */
  private setText(eventId: string, subscription: string, name: (typeof TEXTS)[number], text: string | undefined): void {
    if (text === undefined) this.dropText.run(eventId, subscription, name);
    else this.putText.run(eventId, subscription, name, text);
  }

  async putAll(records: EventRecord[]): Promise<void> {
    if (records.length === 0) return;
    // Queued records are made durable by the queue send that follows them (ingest answers after it); held ones are not followed by one.
    await this.store.write(() => this.putNow(records), { durable: records.some((r) => r.status !== 'queued') });
  }

  /** Writes whole records inside the caller's write transaction. */
  putNow(records: EventRecord[]): void {
    for (const record of records) {
      const expires = expiresFrom(record.updated_at || record.received_at);
      this.upsert.run(record.event_id, record.subscription, record.received_at, record.status, dataOf(record), expires);
      this.upsertMessage.run(record.event_id, record.subscription, messageJson(record.message));
      for (const name of TEXTS) this.setText(record.event_id, record.subscription, name, record[name]);
    }
  }

  /** Changes some fields of a record (a field set to undefined is removed); the message is left alone. Absent records are ignored (`existing`: reported). */
  async update(eventId: string, subscription: string, changes: Partial<EventRecord>, options: UpdateOptions = {}): Promise<void> {
    const found = await this.store.write(() => {
      const data = this.selectData.get(eventId, subscription) as string | undefined;
      if (data === undefined) return false;
      const { message: _message, event_id: _id, subscription: _sub, ...rest } = changes;
      const next: Record<string, unknown> = { ...(JSON.parse(data) as Record<string, unknown>), ...rest };
      for (const name of TEXTS) {
        if (!(name in rest)) continue;
        this.setText(eventId, subscription, name, rest[name]);
        delete next[name]; // a record stored before event_texts existed kept it in data

      }
      for (const key of Object.keys(next)) if (next[key] === undefined) delete next[key];
      const status = next.status as EventStatus;
      const ended = 'status' in rest && !WAITING_STATUSES.includes(status);
      this.setData.run(JSON.stringify(next), status, ended ? expiresFrom(next.updated_at as string | undefined) : 0, eventId, subscription);
      // The worker's progress: a crash before the next fsync only repeats work the queue gives back.
      return true;
    }, { durable: false, now: options.immediately === true });
    if (!found && options.existing) throw new RecordGone(eventId, subscription);
  }

  async get(eventId: string, subscription: string, known?: QueueMessage): Promise<EventRecord | undefined> {
    return this.store.read('The event log', () => {
      if (!known) {
        const row = this.selectOne.get(eventId, subscription) as Row | undefined;
        return row && this.parsed(row);
      }
      const data = this.selectData.get(eventId, subscription) as string | undefined;
      return data === undefined ? undefined : this.fromRow(eventId, subscription, data, known);
    });
  }

  async getEvent(eventId: string): Promise<EventRecord[]> {
    return this.store.read('The event log', () => (this.selectEvent.all(eventId) as Row[]).map(this.parsed));
  }

  async listBySubscription(subscription: string, limit: number, before?: Pick<EventRecord, 'event_id' | 'received_at'>): Promise<EventRecord[]> {
    return this.store.read('The event log', () => ((before
      ? this.bySubscriptionBefore.all(subscription, before.received_at, before.event_id, limit)
      : this.bySubscription.all(subscription, limit)) as Row[]).map(this.parsed));
  }

  async listByStatus(subscription: string, status: EventStatus): Promise<EventRecord[]> {
    return this.store.read('The event log', () => (this.byStatus.all(subscription, status) as Row[]).map(this.parsed));
  }

  /** The small `data` column only: neither event_messages nor event_texts is read. */
  async listSummariesByStatus(subscription: string, status: EventStatus, page: { receivedBefore: string; limit: number; after?: Pick<EventRecord, 'event_id' | 'received_at'> }): Promise<EventSummary[]> {
    return this.store.read('The event log', () => (this.summariesByStatus.all(
      subscription, status, page.receivedBefore, page.after?.received_at ?? '', page.after?.event_id ?? '', page.limit,
    ) as string[]).map((data) => {
      // A record stored before event_texts existed kept its prompt and reply in data.
      const { message: _message, prompt: _prompt, reply: _reply, ...summary } = JSON.parse(data) as EventRecord;
      return summary;
    }));
  }

  /** The console's list (event-search.ts): statements prepared on first use. */
  private searcher: SqliteEventSearch | undefined;

  async searchSubscription(subscription: string, search: EventSearch): Promise<EventSearchPage> {
    return (this.searcher ??= new SqliteEventSearch(this.store)).search(subscription, search);
  }

  async recordedSubscriptions(known: string[]): Promise<RecordedSubscriptions> {
    return (this.searcher ??= new SqliteEventSearch(this.store)).recorded(known);
  }

  async deleteHeld(keys: Array<{ event_id: string; subscription: string }>): Promise<number> {
    return (await this.deleteWhere(keys, this.removeHeld)).length;
  }

  /** An absent record is deleted already: only one that is there and started is left. */
  async deleteUnstarted(keys: Array<{ event_id: string; subscription: string }>): Promise<Array<{ event_id: string; subscription: string }>> {
    const deleted = await this.deleteWhere(keys, this.removeUnstarted, true);
    return keys.filter((key) => !deleted.includes(key));
  }

  /**
   * The keys whose record `remove` (a conditional DELETE) deleted, with its message and texts
   * (`absent`: and those with no record), a chunk per transaction: a discard of thousands
   * does not hold the write lock long.
   */
  private async deleteWhere(keys: Array<{ event_id: string; subscription: string }>, remove: Database.Statement, absent = false): Promise<Array<{ event_id: string; subscription: string }>> {
    const deleted: Array<{ event_id: string; subscription: string }> = [];
    for (let i = 0; i < keys.length; i += DELETE_CHUNK) {
      deleted.push(...await this.store.write(() => keys.slice(i, i + DELETE_CHUNK).filter((key) => {
        if (remove.run(key.event_id, key.subscription).changes === 0 && !(absent && this.selectData.get(key.event_id, key.subscription) === undefined)) return false;
        this.removeMessage.run(key.event_id, key.subscription);
        this.removeTexts.run(key.event_id, key.subscription);
        return true;
      })));
    }
    return deleted;
  }

  async deleteAll(keys: Array<{ event_id: string; subscription: string }>): Promise<void> {
    if (keys.length === 0) return;
    await this.store.write(() => {
      for (const key of keys) {
        this.remove.run(key.event_id, key.subscription);
        this.removeMessage.run(key.event_id, key.subscription);
        this.removeTexts.run(key.event_id, key.subscription);
      }
    });
  }
}
