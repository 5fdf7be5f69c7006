/** RequestLog over SQLite: every inbound request and its outcome, kept 7 days, most recent first. */
import type { RequestLog, RequestQuery } from '../../core/ports';
import type { RequestRecord } from '../../core/types';
import type { StoreDb } from './db';

export const REQUEST_RETENTION_MS = 7 * 24 * 3600 * 1000;

export class SqliteRequestLog implements RequestLog {
  private readonly insert;

  constructor(private readonly store: StoreDb) {
    this.insert = store.db.prepare('INSERT INTO requests (received_at, endpoint, outcome, body) VALUES (?, ?, ?, ?)');
  }

  async record(entry: RequestRecord): Promise<void> {
    const at = Date.parse(entry.received_at);
    await this.store.write(() => this.insert.run(Number.isFinite(at) ? at : Date.now(), entry.endpoint, entry.outcome, JSON.stringify(entry)), { durable: false });
  }

  async list(query: RequestQuery): Promise<RequestRecord[]> {
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
    const sql = `SELECT body FROM requests ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY received_at DESC, id DESC LIMIT ?`;
    return this.store.read('The request log', () => (this.store.db.prepare(sql).pluck().all(...params, Math.max(0, query.limit)) as string[])
      .map((body) => JSON.parse(body) as RequestRecord));
  }
}
