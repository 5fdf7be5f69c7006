/** RequestLog over SQLite: every inbound request and its outcome, kept 7 days, most recent first. */
import type { RequestLog, RequestQuery } from '../../core/ports';
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

  constructor(private readonly store: StoreDb, private readonly onError: (error: unknown) => void = () => {}) {
    this.insert = store.db.prepare('INSERT INTO requests (received_at, endpoint, outcome, body) VALUES (?, ?, ?, ?)');
  }

  async record(entry: RequestRecord): Promise<void> {
    const at = Date.parse(entry.received_at);
    this.store.write(() => this.insert.run(Number.isFinite(at) ? at : Date.now(), entry.endpoint, entry.outcome, JSON.stringify(entry)), { durable: false })
      .catch(this.onError);
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
