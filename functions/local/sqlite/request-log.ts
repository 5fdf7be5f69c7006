/** RequestLog over SQLite: every inbound request and its outcome, kept 7 days, most recent first. */
import type { FilteredQuery, FilteredRequests, RequestLog, RequestQuery } from '../../core/ports';
import { filteredSubscriptions } from '../../core/request-filtered';
import type { RequestRecord } from '../../core/types';
import type { StoreDb } from './db';

export const REQUEST_RETENTION_MS = 7 * 24 * 3600 * 1000;

/**
 * `record` queues the entry for the store's next commit and returns at once: the answer to
 * the request does not wait for it (while a WAL fsync runs, writes wait for the next
 * transaction, which would hold every answer for another fsync). A failure is reported to
 * `onError`; `list` waits for queued entries first, so a reader in this process sees them.
 */
export class SqliteRequestLog implements RequestLog {
  private readonly insert;
  private readonly insertFiltered;

  constructor(private readonly store: StoreDb, private readonly onError: (error: unknown) => void = () => {}) {
    this.insert = store.db.prepare('INSERT INTO requests (received_at, endpoint, outcome, body) VALUES (?, ?, ?, ?)');
    this.insertFiltered = store.db.prepare('INSERT OR IGNORE INTO request_filtered (subscription, received_at, request_row) VALUES (?, ?, ?)');
  }

  /** The entry and its rows in `request_filtered` (one per subscription whose payload filters refused it), in one savepoint. */
  async record(entry: RequestRecord): Promise<void> {
    const parsed = Date.parse(entry.received_at);
    const at = Number.isFinite(parsed) ? parsed : Date.now();
    const filtered = filteredSubscriptions(entry);
    this.store.write(() => {
      const row = this.insert.run(at, entry.endpoint, entry.outcome, JSON.stringify(entry)).lastInsertRowid;
      for (const name of filtered) this.insertFiltered.run(name, at, row);
    }, { durable: false }).catch(this.onError);
  }

  /** By subscription and time through `request_filtered` (schema migration 5, which indexed the entries written before it too): never partial. */
  async listFiltered(query: FilteredQuery): Promise<FilteredRequests> {
    await this.store.committed();
    const until = query.until ?? Number.MAX_SAFE_INTEGER;
    const sql = `SELECT r.body FROM request_filtered f JOIN requests r ON r.id = f.request_row
      WHERE f.subscription = ? AND f.received_at <= ? ORDER BY f.received_at DESC, f.request_row DESC LIMIT ?`;
    const entries = this.store.read('The request log', () => (this.store.db.prepare(sql).pluck().all(query.subscription, until, Math.max(0, query.limit)) as string[])
      .map((body) => JSON.parse(body) as RequestRecord));
    return { entries };
  }

  async list(query: RequestQuery): Promise<RequestRecord[]> {
    await this.store.committed();
    const where: string[] = [];
    const params: Array<string | number> = [];
    if (query.endpoint !== undefined) {
      where.push('endpoint = ?');
      params.push(query.endpoint);
    }
    if (query.outcome !== undefined) {
      where.push('outcome = ?');
      params.push(query.outcome);
    }
    if (query.since !== undefined) {
      where.push('received_at >= ?');
      params.push(query.since);
    }
    if (query.until !== undefined) {
      where.push('received_at <= ?');
      params.push(query.until);
    }
    const sql = `SELECT body FROM requests ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY received_at DESC, id DESC LIMIT ?`;
    return this.store.read('The request log', () => (this.store.db.prepare(sql).pluck().all(...params, Math.max(0, query.limit)) as string[])
      .map((body) => JSON.parse(body) as RequestRecord));
  }
}
